package proxy_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/proxy"
)

// TestBytesCountWhatWentToAndCameFromTasks sends a body through the proxy
// and reads the answer: the request's bytes count as sent to tasks, the
// response's as come from them, over every task together.
func TestBytesCountWhatWentToAndCameFromTasks(t *testing.T) {
	a := echoBackend(t, "a")
	p := proxy.New(tasks{"t": {URL: mustURL(t, a.URL), State: proxy.Ready}, "u": {URL: mustURL(t, a.URL), State: proxy.Ready}}.lookup)
	srv := serve(t, p)
	if to, from := p.Bytes(); to != 0 || from != 0 {
		t.Fatalf("before any request: %d to tasks, %d from them", to, from)
	}
	var wantTo, wantFrom uint64
	for _, task := range []string{"t", "u"} {
		body := strings.Repeat("x", 5000)
		res, err := http.Post(srv.URL+"/proxy/"+task+"/upload", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		wantTo += uint64(len(body))
		wantFrom += uint64(len(got))
	}
	if to, from := p.Bytes(); to != wantTo || from != wantFrom {
		t.Errorf("Bytes() = %d to tasks, %d from them; want %d and %d", to, from, wantTo, wantFrom)
	}
}
