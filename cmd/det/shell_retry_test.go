package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/resolute-ml/resolute"
)

// A terminal tried again while its shell is ready but not running yet
// loses no keystrokes: every one of them reaches the terminal that opens.
func TestShellOpenTriedAgainKeepsEveryKeystroke(t *testing.T) {
	var tries atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/terminal/ws") {
			json.NewEncoder(w).Encode(resolute.TaskResponse{Task: resolute.Task{ID: "shell-1", Type: resolute.TaskShell,
				State: resolute.TaskRunning, Ready: true}})
			return
		}
		conn, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		if tries.Add(1) <= 2 { // ready, but its allocation is not running yet
			conn.Close(4409, "shell shell-1 is not running yet (RUNNING)")
			return
		}
		// An echo terminal that exits at "q".
		for {
			_, data, err := conn.Read(r.Context())
			if err != nil {
				return
			}
			conn.Write(r.Context(), websocket.MessageBinary, data)
			if strings.Contains(string(data), "q") {
				conn.Write(r.Context(), websocket.MessageText, []byte(`{"type":"exit","code":0}`))
				conn.Close(websocket.StatusNormalClosure, "exited")
				return
			}
		}
	}))
	defer srv.Close()
	saved := taskPoll
	taskPoll = 10 * time.Millisecond
	defer func() { taskPoll = saved }()

	in, typing := io.Pipe()
	defer typing.Close()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		env := map[string]string{"DET_MASTER": srv.URL, "DET_USER_TOKEN": "t", "XDG_CONFIG_HOME": t.TempDir()}
		done <- run(t.Context(), []string{"shell", "open", "shell-1"}, in, &out, io.Discard, func(k string) string { return env[k] })
	}()
	for tries.Load() < 3 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	for _, k := range []string{"a", "b", "c", "q"} {
		if _, err := typing.Write([]byte(k)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("det shell open did not end; output %q", out.String())
	}
	if got := out.String(); got != "abcq" {
		t.Fatalf("the terminal got %q, want every keystroke: abcq", got)
	}
}

// syncBuffer is a strings.Builder for one writer and another reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
