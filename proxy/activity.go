package proxy

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// activity is what the proxy knows of one task's traffic. It is updated on
// every read and write, so it is two atomics and nothing else.
type activity struct {
	last    atomic.Int64 // Unix nanoseconds of the last traffic; 0 for none
	open    atomic.Int64 // upgraded (websocket) connections open now
	traffic *traffic     // the proxy's, shared by every task
}

// traffic counts the bytes the proxy carried, for every task together.
type traffic struct {
	toTasks, fromTasks atomic.Uint64
}

// Bytes returns how many bytes the proxy carried to tasks (request bodies,
// websocket frames from browsers) and from them (response bodies, frames
// back) since it was made.
func (p *Proxy) Bytes() (toTasks, fromTasks uint64) {
	return p.traffic.toTasks.Load(), p.traffic.fromTasks.Load()
}

// touch records traffic at now. Time only goes forward, even if calls race.
func (a *activity) touch(now time.Time) {
	n := now.UnixNano()
	for {
		old := a.last.Load()
		if old >= n || a.last.CompareAndSwap(old, n) {
			return
		}
	}
}

// activity returns the record of taskID, creating it on first use.
func (p *Proxy) activity(taskID string) *activity {
	if v, ok := p.tasks.Load(taskID); ok {
		return v.(*activity)
	}
	v, _ := p.tasks.LoadOrStore(taskID, &activity{traffic: &p.traffic})
	return v.(*activity)
}

// LastActivity returns when a request to taskID, a read of a response from
// it, or websocket traffic in either direction was last seen; the zero Time if
// none was since the proxy started or since Forget. The idle-timeout watcher
// compares it with the task's idle timeout.
func (p *Proxy) LastActivity(taskID string) time.Time {
	v, ok := p.tasks.Load(taskID)
	if !ok {
		return time.Time{}
	}
	n := v.(*activity).last.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Touch records activity of taskID that did not pass through the proxy,
// such as traffic of a shell's terminal.
func (p *Proxy) Touch(taskID string) {
	p.activity(taskID).touch(p.now())
}

// OpenConns returns how many upgraded (websocket) connections to taskID are
// open now: a notebook tab with a live kernel keeps one.
func (p *Proxy) OpenConns(taskID string) int {
	v, ok := p.tasks.Load(taskID)
	if !ok {
		return 0
	}
	return int(v.(*activity).open.Load())
}

// Forget drops what the proxy recorded about taskID; call it when the task
// ends so that the records of finished tasks do not pile up.
func (p *Proxy) Forget(taskID string) {
	p.tasks.Delete(taskID)
}

// activeBody is a response body whose reads count as activity: a long
// download or event stream keeps its task alive while it flows.
type activeBody struct {
	io.ReadCloser
	// flush, when set, sends what was written to the client on. It is set
	// only where ReverseProxy runs no flush timer of its own, which would
	// flush concurrently.
	flush   func() error
	pending bool // bytes were read and so written since the last flush
	act     *activity
	now     func() time.Time
}

// Read flushes what went before, so that no byte waits in a buffer while
// the proxy waits on the service, then reads from the service and records
// activity when bytes came.
func (b *activeBody) Read(p []byte) (int, error) {
	if b.flush != nil && b.pending {
		b.flush()
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.pending = true
		b.act.touch(b.now())
		b.act.traffic.fromTasks.Add(uint64(n))
	}
	return n, err
}

// activeConn is the service's side of an upgraded connection: bytes read
// from it went to the browser, bytes written to it came from the browser;
// both count as activity.
type activeConn struct {
	io.ReadWriteCloser
	act   *activity
	now   func() time.Time
	close sync.Once
}

func newActiveConn(c io.ReadWriteCloser, act *activity, now func() time.Time) *activeConn {
	act.open.Add(1)
	act.touch(now())
	return &activeConn{ReadWriteCloser: c, act: act, now: now}
}

// Read reads from the service and records activity when bytes came.
func (c *activeConn) Read(p []byte) (int, error) {
	n, err := c.ReadWriteCloser.Read(p)
	if n > 0 {
		c.act.touch(c.now())
		c.act.traffic.fromTasks.Add(uint64(n))
	}
	return n, err
}

// Write writes to the service and records activity when bytes went.
func (c *activeConn) Write(p []byte) (int, error) {
	n, err := c.ReadWriteCloser.Write(p)
	if n > 0 {
		c.act.touch(c.now())
		c.act.traffic.toTasks.Add(uint64(n))
	}
	return n, err
}

// Close closes the connection once and counts it closed.
func (c *activeConn) Close() error {
	err := c.ReadWriteCloser.Close()
	c.close.Do(func() {
		c.act.open.Add(-1)
		c.act.touch(c.now())
	})
	return err
}

// bufferPool lends the copy buffers of the ReverseProxy, so that a stream
// costs no allocation per request.
type bufferPool struct {
	size int
	pool sync.Pool
}

// copyBufferSize is the size of each copy buffer: large enough that a 1 GiB
// download takes few system calls, small enough for thousands of streams.
const copyBufferSize = 64 << 10

func newBufferPool(size int) *bufferPool {
	return &bufferPool{size: size}
}

// Get returns a buffer of the pool's size.
func (b *bufferPool) Get() []byte {
	if v, ok := b.pool.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, b.size)
}

// Put returns buf to the pool.
func (b *bufferPool) Put(buf []byte) {
	if cap(buf) != b.size {
		return
	}
	buf = buf[:b.size]
	b.pool.Put(&buf)
}

// bulkThreshold is the Content-Length from which a response is copied with
// a bulk buffer from the start: downloads of checkpoints, datasets,
// TensorBoard profiles. It is also the size of a bulk buffer.
const bulkThreshold = 1 << 20

// bulkBuffers lends the buffers of bulk copies. Only responses that are
// large, or that showed they come faster than the proxy sends them, take
// one, so that thousands of small or slow responses do not each hold a
// mebibyte.
var bulkBuffers = newBufferPool(bulkThreshold)

// bulkBody is the body of a response that may be large: one of known, large
// length, or one of unknown length that is not an event stream. On its
// first Read it copies the whole body to the client itself and then reports
// EOF. It reads into the caller's buffer (ReverseProxy's, from the pool)
// until a read fills that, and from then on (at once if bulk is set) into a
// bulk buffer: a 1 GiB download then takes a sixteenth of the system calls
// and, when chunked, of the chunks of ReverseProxy's own copy. It flushes
// after every write, so that no byte waits in a buffer while the proxy waits
// on the service. It relies on ReverseProxy having written the response
// header before it reads the body, as it always does; ReverseProxy's own
// flushes, from a timer for bodies of unknown length, go through w, which
// serializes them with these writes.
type bulkBody struct {
	io.ReadCloser
	w    *syncWriter
	act  *activity
	now  func() time.Time
	bulk bool // read into a bulk buffer from the start
	done bool
}

// Read copies the whole body to the client on its first call, then says EOF.
func (b *bulkBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	b.done = true
	buf := p
	if b.bulk || len(p) == 0 {
		buf = bulkBuffers.Get()
		defer bulkBuffers.Put(buf)
	}
	for {
		n, err := b.ReadCloser.Read(buf)
		if n > 0 {
			b.act.touch(b.now())
			b.act.traffic.fromTasks.Add(uint64(n))
			if werr := b.w.writeAndFlush(buf[:n]); werr != nil {
				// The client went away: ReverseProxy aborts the response
				// without logging a failure of the service.
				return 0, context.Canceled
			}
		}
		if err != nil {
			return 0, err
		}
		if n == len(buf) && len(buf) < bulkThreshold {
			// The service sends faster than the proxy: copy in bulk.
			buf = bulkBuffers.Get()
			defer bulkBuffers.Put(buf)
		}
	}
}

// syncWriter is the client's ResponseWriter as ReverseProxy and a bulkBody
// share it: ReverseProxy flushes a body of unknown length from a goroutine
// of its own once, which must not run while the bulkBody writes. Hijacking
// and the other features of the writer are reached through Unwrap.
type syncWriter struct {
	http.ResponseWriter
	mu sync.Mutex
}

// Write writes p to the client.
func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

// FlushError sends what was written to the client on.
func (w *syncWriter) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// writeAndFlush writes p to the client and sends it on. Only the write's
// error counts: a writer that cannot flush still takes the bytes, and one
// whose client went away fails the next write.
func (w *syncWriter) writeAndFlush(p []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.ResponseWriter.Write(p); err != nil {
		return err
	}
	http.NewResponseController(w.ResponseWriter).Flush()
	return nil
}

// Unwrap returns the client's ResponseWriter, for http.ResponseController.
func (w *syncWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countedBody is a request body whose bytes count as carried to a task.
type countedBody struct {
	io.ReadCloser
	n *atomic.Uint64
}

// Read reads from the client and counts what came.
func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(uint64(n))
	return n, err
}
