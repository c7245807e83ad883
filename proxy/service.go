package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// getTransport carries plain-HTTP GET requests without a body, which are
// nearly all of what a notebook or TensorBoard page asks for, over
// keep-alive connections that it owns; everything else (uploads, websocket
// upgrades, HTTPS) goes to fallback. It writes the request and reads the
// response header in the calling goroutine: http.Transport hands each
// request to a writer and a reader goroutine per connection, and on a small
// machine those hand-offs cost more than the proxying itself.
type getTransport struct {
	fallback http.RoundTripper
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)

	mu        sync.Mutex
	idle      map[string][]idleConn // host:port → connections, newest last
	lastSweep time.Time
}

// serviceConn is one connection to a service with its buffers.
type serviceConn struct {
	conn net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
}

type idleConn struct {
	c     *serviceConn
	since time.Time
}

// Pool limits: enough for a notebook page's burst of requests; a connection
// idle for longer than services usually keep one open is not reused.
const (
	maxIdlePerHost = 64
	maxIdleTime    = 30 * time.Second
)

func newGetTransport(fallback http.RoundTripper) *getTransport {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &getTransport{fallback: fallback, dial: d.DialContext, idle: map[string][]idleConn{}}
}

// RoundTrip sends req and reads the response header; the body is read from
// the connection as the caller reads it.
func (t *getTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.URL.Scheme != "http" ||
		(req.Body != nil && req.Body != http.NoBody) || req.Header.Get("Upgrade") != "" {
		return t.fallback.RoundTrip(req)
	}
	for {
		c, reused, err := t.get(req.Context(), req.URL.Host)
		if err != nil {
			return nil, err
		}
		res, err := t.exchange(c, req)
		if err == nil {
			return res, nil
		}
		c.conn.Close()
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, ctxErr // the client went away: not the service's failure
		}
		// A pooled connection that the service closed meanwhile fails at
		// once: a GET may be sent again on a new one.
		if !reused {
			return nil, err
		}
	}
}

// exchange writes req on c and reads the response header.
func (t *getTransport) exchange(c *serviceConn, req *http.Request) (*http.Response, error) {
	// Abandoning the request (the client went away) closes the connection,
	// which ends a read or write blocked on it.
	stop := context.AfterFunc(req.Context(), func() { c.conn.Close() })
	if err := req.Write(c.bw); err != nil {
		stop()
		return nil, err
	}
	if err := c.bw.Flush(); err != nil {
		stop()
		return nil, err
	}
	for {
		res, err := http.ReadResponse(c.br, req)
		if err != nil {
			stop()
			return nil, err
		}
		if res.StatusCode >= 100 && res.StatusCode < 200 && res.StatusCode != http.StatusSwitchingProtocols {
			continue // 103 Early Hints and the like come before the answer
		}
		b := &serviceBody{ReadCloser: res.Body, t: t, c: c, host: req.URL.Host, stop: stop, keep: !res.Close}
		if res.Body == http.NoBody {
			b.release(true)
			return res, nil
		}
		res.Body = b
		return res, nil
	}
}

// get returns an idle connection to host, or a new one.
func (t *getTransport) get(ctx context.Context, host string) (c *serviceConn, reused bool, err error) {
	now := time.Now()
	t.mu.Lock()
	for list := t.idle[host]; len(list) > 0; list = t.idle[host] {
		ic := list[len(list)-1]
		t.idle[host] = list[:len(list)-1]
		if now.Sub(ic.since) < maxIdleTime {
			t.mu.Unlock()
			return ic.c, true, nil
		}
		ic.c.conn.Close()
	}
	t.mu.Unlock()
	conn, err := t.dial(ctx, "tcp", host)
	if err != nil {
		return nil, false, err
	}
	return &serviceConn{conn: conn, br: bufio.NewReaderSize(conn, 64<<10), bw: bufio.NewWriterSize(conn, 4<<10)}, false, nil
}

// put keeps c for the next request to host and, now and then, closes the
// connections that idled too long, such as those to ended tasks.
func (t *getTransport) put(host string, c *serviceConn) {
	now := time.Now()
	var closing []*serviceConn
	t.mu.Lock()
	if len(t.idle[host]) < maxIdlePerHost {
		t.idle[host] = append(t.idle[host], idleConn{c: c, since: now})
		c = nil
	}
	if now.Sub(t.lastSweep) > maxIdleTime {
		t.lastSweep = now
		for h, list := range t.idle {
			kept := list[:0]
			for _, ic := range list {
				if now.Sub(ic.since) < maxIdleTime {
					kept = append(kept, ic)
				} else {
					closing = append(closing, ic.c)
				}
			}
			if len(kept) == 0 {
				delete(t.idle, h)
			} else {
				t.idle[h] = kept
			}
		}
	}
	t.mu.Unlock()
	if c != nil {
		closing = append(closing, c)
	}
	for _, x := range closing {
		x.conn.Close()
	}
}

// serviceBody is a response body read from a serviceConn. Read to its end,
// it gives the connection back to the pool; closed early, it closes it.
type serviceBody struct {
	io.ReadCloser
	t    *getTransport
	c    *serviceConn
	host string
	stop func() bool
	keep bool // the service did not ask to close the connection
	done bool
}

// Read reads the body and gives the connection back at its end.
func (b *serviceBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.release(true)
	} else if err != nil {
		b.release(false)
	}
	return n, err
}

// Close gives the connection back if the body was read whole, else closes it.
func (b *serviceBody) Close() error {
	b.release(false)
	return nil
}

// release gives the connection back: to the pool when the body was read
// whole, nothing closed the connection meanwhile and the service keeps it.
func (b *serviceBody) release(whole bool) {
	if b.done {
		return
	}
	b.done = true
	if b.stop() && whole && b.keep {
		b.t.put(b.host, b.c)
		return
	}
	b.c.conn.Close()
}
