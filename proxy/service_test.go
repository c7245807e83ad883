package proxy_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/resolute-ml/resolute/proxy"
)

// TestGetsReuseConnectionsToTheService checks that the proxy keeps its
// connections to a service alive between GETs, opens a new one when the
// service closed a pooled one meanwhile, and honours "Connection: close".
func TestGetsReuseConnectionsToTheService(t *testing.T) {
	var opened atomic.Int64
	var mu sync.Mutex
	var conns []net.Conn
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("close") {
			w.Header().Set("Connection", "close")
		}
		io.WriteString(w, "hello "+r.URL.Path)
	}))
	backend.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}
	backend.Start()
	defer backend.Close()
	srv := serve(t, proxy.New(tasks{"t": {URL: mustURL(t, backend.URL), State: proxy.Ready}}.lookup))
	client := &http.Client{}
	get := func(path string) string {
		t.Helper()
		res, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
		}
		return string(b)
	}
	for i := range 20 {
		if got := get("/proxy/t/a"); got != "hello /proxy/t/a" {
			t.Fatalf("request %d: %q", i, got)
		}
	}
	if n := opened.Load(); n != 1 {
		t.Fatalf("20 GETs one after another opened %d connections to the service, want 1", n)
	}

	// The service closes its side of the idle connection: the next GET
	// must still succeed, on a new connection.
	mu.Lock()
	for _, c := range conns {
		c.Close()
	}
	mu.Unlock()
	time.Sleep(50 * time.Millisecond)
	if got := get("/proxy/t/b"); got != "hello /proxy/t/b" {
		t.Fatalf("after the service closed the connection: %q", got)
	}
	if n := opened.Load(); n != 2 {
		t.Fatalf("opened %d connections, want 2", n)
	}

	// A response that says "Connection: close" does not go back to the pool.
	get("/proxy/t/c?close")
	get("/proxy/t/d")
	if n := opened.Load(); n != 3 {
		t.Fatalf("opened %d connections after Connection: close, want 3", n)
	}
}

// TestAGetWhoseClientLeavesFreesTheServiceConnection checks that a client
// giving up on a slow service closes the proxy's connection to it.
func TestAGetWhoseClientLeavesFreesTheServiceConnection(t *testing.T) {
	closed := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // the service sees its client, the proxy, go
		close(closed)
	}))
	defer backend.Close()
	srv := serve(t, proxy.New(tasks{"t": {URL: mustURL(t, backend.URL), State: proxy.Ready}}.lookup))
	client := &http.Client{Timeout: 300 * time.Millisecond}
	_, err := client.Get(srv.URL + "/proxy/t/slow")
	if err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Fatalf("want a client timeout, got %v", err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the proxy kept its connection to the service after its client left")
	}
}
