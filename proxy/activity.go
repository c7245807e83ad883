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
	last atomic.Int64 // Unix nanoseconds of the last traffic; 0 for none
	open atomic.Int64 // upgraded (websocket) connections open now
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
	v, _ := p.tasks.LoadOrStore(taskID, new(activity))
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
	}
	return n, err
}

// Write writes to the service and records activity when bytes went.
func (c *activeConn) Write(p []byte) (int, error) {
	n, err := c.ReadWriteCloser.Write(p)
	if n > 0 {
		c.act.touch(c.now())
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
// a bulk buffer: downloads of checkpoints, datasets, TensorBoard profiles.
const bulkThreshold = 1 << 20

// bulkBuffers lends the buffers of bulk copies. Only responses of known,
// large length take one, so that thousands of small or slow responses do
// not each hold a mebibyte.
var bulkBuffers = newBufferPool(bulkThreshold)

// bulkBody is the body of a large response of known length. On its first
// Read it copies the whole body to the client itself, with a bulk buffer,
// and then reports EOF: a 1 GiB download then takes a sixteenth of the
// system calls of ReverseProxy's own copy. It relies on ReverseProxy having
// written the response header before it reads the body, as it always does,
// and on it running no flush timer for bodies of known length.
type bulkBody struct {
	io.ReadCloser
	w     http.ResponseWriter
	flush func() error
	act   *activity
	now   func() time.Time
	done  bool
}

// Read copies the whole body to the client on its first call, then says EOF.
func (b *bulkBody) Read([]byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	b.done = true
	buf := bulkBuffers.Get()
	defer bulkBuffers.Put(buf)
	for {
		n, err := b.ReadCloser.Read(buf)
		if n > 0 {
			b.act.touch(b.now())
			if _, werr := b.w.Write(buf[:n]); werr != nil {
				// The client went away: ReverseProxy aborts the response
				// without logging a failure of the service.
				return 0, context.Canceled
			}
			b.flush() // a slow service's bytes must not wait in a buffer
		}
		if err != nil {
			return 0, err
		}
	}
}
