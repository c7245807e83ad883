package proxy_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/resolute-ml/resolute/proxy"
)

// zeros reads as an endless stream of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestWebsocketEcho(t *testing.T) {
	received := make(chan string, 10)
	push := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/proxy/t/api/kernels/k1/channels" {
			http.NotFound(w, r)
			return
		}
		// The default options refuse an Origin that does not match Host,
		// as Jupyter does: this passes only if the proxy keeps Host.
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(1 << 20)
		for {
			typ, msg, err := c.Read(r.Context())
			if err != nil {
				return
			}
			received <- string(msg)
			if string(msg) == "push later" {
				<-push
				msg = []byte("pushed")
			}
			if err := c.Write(r.Context(), typ, msg); err != nil {
				return
			}
		}
	}))
	defer backend.Close()

	clk := newClock()
	p := proxy.New(tasks{"t": {URL: mustURL(t, backend.URL), State: proxy.Ready}}.lookup, proxy.WithClock(clk.now))
	srv := serve(t, p)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/proxy/t/api/kernels/k1/channels?session_id=s"
	c, res, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": {srv.URL}},
	})
	if err != nil {
		t.Fatalf("dial through the proxy: %v (response %v)", err, res)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	if got := p.OpenConns("t"); got != 1 {
		t.Errorf("OpenConns = %d, want 1", got)
	}

	for i, typ := range []websocket.MessageType{websocket.MessageText, websocket.MessageBinary, websocket.MessageText} {
		want := clk.advance(time.Minute)
		msg := strings.Repeat("x", 1+i*70000) // one small, one larger than a copy buffer
		if err := c.Write(ctx, typ, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		gotTyp, got, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		<-received
		if gotTyp != typ || string(got) != msg {
			t.Errorf("message %d: got %v of %d bytes, want %v of %d", i, gotTyp, len(got), typ, len(msg))
		}
		if got := p.LastActivity("t"); !got.Equal(want) {
			t.Errorf("message %d: activity %v, want %v", i, got, want)
		}
	}

	// A message from the service alone also counts.
	if err := c.Write(ctx, websocket.MessageText, []byte("push later")); err != nil {
		t.Fatal(err)
	}
	<-received
	want := clk.advance(time.Minute)
	close(push)
	if _, got, err := c.Read(ctx); err != nil || string(got) != "pushed" {
		t.Fatalf("push: %q, %v", got, err)
	}
	if got := p.LastActivity("t"); !got.Equal(want) {
		t.Errorf("after a push: activity %v, want %v", got, want)
	}

	c.Close(websocket.StatusNormalClosure, "bye")
	deadline := time.Now().Add(5 * time.Second)
	for p.OpenConns("t") != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := p.OpenConns("t"); got != 0 {
		t.Errorf("OpenConns after close = %d, want 0", got)
	}
}

func TestWebsocketToStartingTaskIsUnavailable(t *testing.T) {
	srv := serve(t, proxy.New(tasks{"t": {State: proxy.Starting}}.lookup))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, res, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/proxy/t/terminals/websocket/1", nil)
	if err == nil || res == nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("got %v, %v; want a 503", res, err)
	}
}

// TestStreamingIsNotBuffered reads the first mebibyte of a response through
// the proxy while the service still holds back the rest.
func TestStreamingIsNotBuffered(t *testing.T) {
	const size, first = 64 << 20, 1 << 20
	for name, withLength := range map[string]bool{"with a Content-Length": true, "chunked": false} {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if withLength {
					w.Header().Set("Content-Length", strconv.Itoa(size))
				}
				io.CopyN(w, zeros{}, first)
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
				io.CopyN(w, zeros{}, size-first)
			}))
			defer backend.Close()
			srv := serve(t, proxy.New(tasks{"t": {URL: mustURL(t, backend.URL), State: proxy.Ready}}.lookup))

			res, err := http.Get(srv.URL + "/proxy/t/download")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			got := make(chan error, 1)
			go func() {
				_, err := io.ReadFull(res.Body, make([]byte, first))
				got <- err
			}()
			select {
			case err := <-got:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the first bytes did not come through while the service held the rest")
			}
			close(release)
			n, err := io.Copy(io.Discard, res.Body)
			if err != nil || n != size-first {
				t.Errorf("rest: %d bytes, %v; want %d", n, err, size-first)
			}
		})
	}
}

// TestEachPieceComesThroughAtOnce has the service send a small piece, flush
// and wait until the client got it before it sends the next: neither the
// proxy's copy buffers nor its flushing may hold a piece back.
func TestEachPieceComesThroughAtOnce(t *testing.T) {
	const piece = "data: 1\n\n"
	for name, tc := range map[string]struct {
		contentType string
		length      int // Content-Length; 0 for none (chunked)
	}{
		"an event stream":                   {contentType: "text/event-stream"},
		"a stream of unknown length":        {contentType: "application/x-ndjson"},
		"a small body of known length":      {contentType: "text/plain", length: 3 * len(piece)},
		"a download of known, large length": {contentType: "application/octet-stream", length: 2 << 20},
	} {
		t.Run(name, func(t *testing.T) {
			got := make(chan struct{})
			backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				if tc.length > 0 {
					w.Header().Set("Content-Length", strconv.Itoa(tc.length))
				}
				for range 3 {
					io.WriteString(w, piece)
					w.(http.Flusher).Flush()
					select {
					case <-got:
					case <-r.Context().Done():
						return
					}
				}
				if tc.length > 0 {
					io.CopyN(w, zeros{}, int64(tc.length-3*len(piece)))
				}
			}))
			defer backend.Close()
			srv := serve(t, proxy.New(tasks{"t": {URL: mustURL(t, backend.URL), State: proxy.Ready}}.lookup))

			// The deadline ends the test, and the service's wait, if the
			// proxy holds back even the response's header.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/proxy/t/events", nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			for i := range 3 {
				read := make(chan error, 1)
				go func() {
					buf := make([]byte, len(piece))
					_, err := io.ReadFull(res.Body, buf)
					if err == nil && string(buf) != piece {
						err = errors.New("got " + strconv.Quote(string(buf)))
					}
					read <- err
				}()
				select {
				case err := <-read:
					if err != nil {
						t.Fatalf("piece %d: %v", i+1, err)
					}
				case <-time.After(5 * time.Second):
					t.Fatalf("piece %d did not come through while the service waited", i+1)
				}
				got <- struct{}{}
			}
			if _, err := io.Copy(io.Discard, res.Body); err != nil {
				t.Errorf("rest: %v", err)
			}
		})
	}
}

// TestStreamingMemoryStaysSmall sends 256 MiB through the proxy, with and
// without a Content-Length, and checks that the whole process allocated far
// less than that.
func TestStreamingMemoryStaysSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 256 MiB twice")
	}
	const size = 256 << 20
	for name, withLength := range map[string]bool{"with a Content-Length": true, "chunked": false} {
		t.Run(name, func(t *testing.T) {
			backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if withLength {
					w.Header().Set("Content-Length", strconv.Itoa(size))
				}
				io.CopyN(w, zeros{}, size)
			}))
			defer backend.Close()
			clk := newClock()
			p := proxy.New(tasks{"t": {URL: mustURL(t, backend.URL), State: proxy.Ready}}.lookup, proxy.WithClock(clk.now))
			srv := serve(t, p)

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			res, err := http.Get(srv.URL + "/proxy/t/big")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.CopyN(io.Discard, res.Body, 1<<20); err != nil {
				t.Fatal(err)
			}
			want := clk.advance(time.Minute) // reading the rest counts as activity
			n, err := io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if err != nil || n != size-1<<20 {
				t.Fatalf("got %d bytes, %v", n, err)
			}
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("moving %d MiB allocated %d MiB: something buffers", size>>20, alloc>>20)
			} else {
				t.Logf("moving %d MiB allocated %d KiB in all", size>>20, alloc>>10)
			}
			if got := p.LastActivity("t"); !got.Equal(want) {
				t.Errorf("activity %v, want %v", got, want)
			}
		})
	}
}

func TestClientGoneStopsTheStream(t *testing.T) {
	for name, withLength := range map[string]bool{"with a Content-Length": true, "chunked": false} {
		t.Run(name, func(t *testing.T) { testClientGone(t, withLength) })
	}
}

func testClientGone(t *testing.T, withLength bool) {
	done := make(chan error, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if withLength {
			w.Header().Set("Content-Length", strconv.Itoa(1<<40))
		}
		_, err := io.Copy(w, zeros{}) // endless
		done <- err
	}))
	defer backend.Close()
	srv := serve(t, proxy.New(tasks{"t": {URL: mustURL(t, backend.URL), State: proxy.Ready}}.lookup))
	res, err := http.Get(srv.URL + "/proxy/t/endless")
	if err != nil {
		t.Fatal(err)
	}
	io.CopyN(io.Discard, res.Body, 1<<20)
	res.Body.Close()
	select {
	case err := <-done:
		if err == nil || errors.Is(err, io.EOF) {
			t.Errorf("the service's endless write ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the service kept writing after the client left")
	}
}
