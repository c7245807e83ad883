package handlers_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestAStalledUploadGivesUpItsSlot lets one upload at a time and has a
// client send half its context and then nothing, as a slow attacker would
// to keep everyone else waiting: after the idle timeout it is answered 408
// and its connection closed, and the next upload goes through.
func TestAStalledUploadGivesUpItsSlot(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{MaxConcurrentUploads: 1, UploadIdleTimeout: time.Second})
	token := login(t, m, "admin", "")
	good := archiveOf(t, map[string]string{"train.py": "print(1)\n"})
	var body bytes.Buffer
	ct, _ := multipartCreate(&body, pausedConfig, bytes.NewReader(good))

	u, _ := url.Parse(m.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/experiments HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		u.Host, token, ct, body.Len())
	conn.Write(body.Bytes()[:bytes.Index(body.Bytes(), good)+len(good)/2])
	for deadline := time.Now().Add(20 * time.Second); openUploads(t, m) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the stalled upload never started spooling")
		}
	}

	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("no answer to the stalled upload: %v", err)
	}
	var e resolute.ErrorResponse
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || e.Error.Code != resolute.ETimeout || !strings.Contains(e.Error.Message, "nothing came for 1s") {
		t.Fatalf("the stalled upload: %d %+v; want 408 saying it stalled", resp.StatusCode, e.Error)
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Errorf("after the 408 the connection is still open (%v)", err)
	}

	body.Reset()
	ct, _ = multipartCreate(&body, pausedConfig, bytes.NewReader(good))
	next := make(chan int, 1)
	go func() {
		resp, err := postBody(m, token, "/api/v1/experiments", ct, &body)
		if err != nil {
			next <- 0
			return
		}
		resp.Body.Close()
		next <- resp.StatusCode
	}()
	select {
	case code := <-next:
		if code != 200 {
			t.Fatalf("the next upload: %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the next upload waits behind the stalled one")
	}
	nothingLeft(t, m, "a stalled upload and the next")
}

// TestAnUploadWaitsItsTurnForAWhileOnly lets one upload at a time: while
// the first holds the slot, a second waits the wait timeout and is answered
// 503, with a Retry-After and a message saying how many uploads run; the
// first is then taken as usual.
func TestAnUploadWaitsItsTurnForAWhileOnly(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{MaxConcurrentUploads: 1, UploadWaitTimeout: 500 * time.Millisecond})
	token := login(t, m, "admin", "")
	good := archiveOf(t, map[string]string{"train.py": "print(1)\n"})

	// The first sends half its context and holds.
	pr, pw := io.Pipe()
	defer pw.CloseWithError(io.ErrUnexpectedEOF) // should the test end early
	mw := multipart.NewWriter(pw)
	first := make(chan int, 1)
	go func() {
		resp, err := postBody(m, token, "/api/v1/experiments", mw.FormDataContentType(), pr)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	mw.WriteField("config", pausedConfig)
	mw.WriteField("paused", "true")
	part, _ := mw.CreateFormFile("context", "context.tar.gz")
	part.Write(good[:len(good)/2])
	for deadline := time.Now().Add(20 * time.Second); openUploads(t, m) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first upload never started spooling")
		}
	}

	// The second waits its while and is refused.
	var body bytes.Buffer
	ct, _ := multipartCreate(&body, pausedConfig, bytes.NewReader(good))
	second := make(chan *http.Response, 1)
	go func() {
		resp, err := postBody(m, token, "/api/v1/experiments", ct, &body)
		if err != nil {
			t.Error(err)
		}
		second <- resp
	}()
	select {
	case resp := <-second:
		if resp == nil {
			t.FailNow()
		}
		var e resolute.ErrorResponse
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "30" ||
			!strings.Contains(e.Error.Message, "1 upload is running") || !strings.Contains(e.Error.Message, "waited 500ms") {
			t.Fatalf("the second upload: %d Retry-After %q %q; want 503 saying one upload runs", resp.StatusCode, resp.Header.Get("Retry-After"), e.Error.Message)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second upload waits with no end")
	}

	// The first ends as usual.
	part.Write(good[len(good)/2:])
	mw.Close()
	pw.Close()
	select {
	case code := <-first:
		if code != 200 {
			t.Errorf("the first upload: %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the first upload was not answered")
	}
	nothingLeft(t, m, "both uploads")
}
