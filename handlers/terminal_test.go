package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// startShell creates a shell as token's user and waits until it is ready.
func startShell(t testing.TB, m *handlerstest.Master, token string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", m.URL+"/api/v1/shells", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tr resolute.TaskResponse
	json.NewDecoder(resp.Body).Decode(&tr)
	resp.Body.Close()
	if tr.Task.ServiceAddress != "/tasks/"+tr.Task.ID+"/terminal" {
		t.Fatalf("shell %+v", tr.Task)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		task, err := m.DB.Task(context.Background(), tr.Task.ID)
		if err != nil || task.Ready || time.Now().After(deadline) {
			return tr.Task.ID
		}
	}
}

// wsTerm is a test's end of a terminal websocket, with what it has read.
type wsTerm struct {
	t    testing.TB
	conn *websocket.Conn
	out  bytes.Buffer
}

func dialTerminal(ctx context.Context, m *handlerstest.Master, token, id string) (*websocket.Conn, *http.Response, error) {
	return websocket.Dial(ctx, "ws"+strings.TrimPrefix(m.URL, "http")+"/tasks/"+id+"/terminal/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
}

// openTerm opens a terminal into shell id, waiting out the moment between
// the shell being ready and its allocation having started.
func openTerm(t testing.TB, m *handlerstest.Master, token, id string) *wsTerm {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		conn, _, err := dialTerminal(context.Background(), m, token, id)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetReadLimit(1 << 20)
		term := &wsTerm{t: t, conn: conn}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		typ, data, err := conn.Read(ctx)
		cancel()
		if websocket.CloseStatus(err) == handlers.TerminalNotRunning && time.Now().Before(deadline) {
			continue
		}
		if err != nil {
			t.Fatalf("first read: %v", err)
		}
		if typ == websocket.MessageBinary {
			term.out.Write(data)
		}
		t.Cleanup(func() { conn.CloseNow() })
		return term
	}
}

func (w *wsTerm) send(s string) {
	w.t.Helper()
	if err := w.conn.Write(context.Background(), websocket.MessageBinary, []byte(s)); err != nil {
		w.t.Fatal(err)
	}
}

// until reads output until it matches re; it returns the output so far.
func (w *wsTerm) until(re string) string {
	w.t.Helper()
	rx := regexp.MustCompile(re)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for !rx.Match(w.out.Bytes()) {
		typ, data, err := w.conn.Read(ctx)
		if err != nil {
			w.t.Fatalf("waiting for %q: %v; output:\n%s", re, err, w.out.String())
		}
		if typ == websocket.MessageBinary {
			w.out.Write(data)
		}
	}
	return w.out.String()
}

func TestAShellsTerminalsRunCommandsForItsOwnerOnly(t *testing.T) {
	m := handlerstest.Start(t, handlerstest.Options{})
	admin := login(t, m, "admin", "")
	api(t, m, "POST", "/api/v1/users", admin, `{"user":{"username":"bob"},"password":"s3cret-pw"}`, nil)
	bob := login(t, m, "bob", "s3cret-pw")
	id := startShell(t, m, admin)

	term := openTerm(t, m, admin, id)
	term.send("echo hello-$((6*7))\n")
	term.until(`hello-42`)
	if err := term.conn.Write(context.Background(), websocket.MessageText, []byte(`{"type":"resize","cols":123,"rows":45}`)); err != nil {
		t.Fatal(err)
	}
	term.send("stty size; echo term=$TERM task=$DET_TASK_ID\n")
	term.until(`\b45 123\r?\n`)
	term.until(`term=xterm-256color task=` + id)

	// A second terminal is a shell of its own; hanging one up ends its
	// shell and leaves the task running.
	other := openTerm(t, m, admin, id)
	term.send("echo pid=$$\n")
	pid := regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(term.until(`pid=\d+`))[1]
	term.conn.Close(websocket.StatusNormalClosure, "")
	other.send(fmt.Sprintf("for i in $(seq 50); do kill -0 %s 2>/dev/null || break; sleep 0.1; done; kill -0 %s 2>/dev/null && echo still-there || echo hung-up\n", pid, pid))
	if out := other.until(`(still-there|hung-up)\r?\n`); strings.Contains(out, "still-there\r\n") {
		t.Fatalf("the closed terminal's shell still runs:\n%s", out)
	}
	if task, _ := m.DB.Task(context.Background(), id); task.State != resolute.TaskRunning {
		t.Fatalf("the shell task after a terminal closed: %s", task.State)
	}
	other.send("exit 3\n")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		typ, data, err := other.conn.Read(ctx)
		if err != nil {
			if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Fatalf("after exit: %v", err)
			}
			break
		}
		if typ == websocket.MessageText && string(data) != `{"type":"exit","code":3}` {
			t.Fatalf("exit message %s", data)
		}
	}

	// Only the owner and administrators.
	for _, path := range []string{"/tasks/" + id + "/terminal", "/tasks/" + id + "/terminal/ws"} {
		req, _ := http.NewRequest("GET", m.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+bob)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Fatalf("bob GET %s: %d", path, resp.StatusCode)
		}
	}
	if _, resp, err := dialTerminal(context.Background(), m, bob, id); err == nil || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("bob's websocket: %v %v", err, resp)
	}
	req, _ := http.NewRequest("GET", m.URL+"/tasks/"+id+"/terminal", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	page.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(page.String(), `data-socket="/tasks/`+id+`/terminal/ws"`) ||
		!strings.Contains(page.String(), `id="new-terminal"`) {
		t.Fatalf("page: %d\n%s", resp.StatusCode, page.String())
	}

	// Killing the shell closes its terminals; new ones are refused with
	// the reason.
	live := openTerm(t, m, admin, id)
	if code := api(t, m, "POST", "/api/v1/shells/"+id+"/kill", admin, "", nil); code != 200 {
		t.Fatalf("kill: %d", code)
	}
	_, _, err = live.conn.Read(ctx)
	for err == nil {
		_, _, err = live.conn.Read(ctx)
	}
	if websocket.CloseStatus(err) != handlers.TerminalGone {
		t.Fatalf("open terminal at kill: %v", err)
	}
	waitTask(t, m, admin, id, func(t resolute.Task) bool { return t.State == resolute.TaskTerminated })
	conn, _, err := dialTerminal(ctx, m, admin, id)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = conn.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != handlers.TerminalGone || !strings.Contains(ce.Reason, "shell "+id+" has ended") {
		t.Fatalf("terminal of an ended shell: %v", err)
	}
	if code := api(t, m, "GET", "/tasks/"+id+"/terminal", admin, "", nil); code != 410 {
		t.Fatalf("page of an ended shell: %d", code)
	}
}

// BenchmarkTerminalEcho measures the keystroke echo round trip through a
// terminal's websocket on loopback: one byte to `cat` in a terminal (raw,
// without the PTY's own echo), and back. Run with -benchtime=200x; it reports p50 and
// p99 in milliseconds.
func BenchmarkTerminalEcho(b *testing.B) {
	m := handlerstest.Start(b, handlerstest.Options{})
	token := loginB(b, m)
	term := openTerm(b, m, token, startShell(b, m, token))
	term.send("stty -echo -icanon; echo RE''ADY; exec cat\n")
	term.until(`READY\r?\n`)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		term.send("x")
		for got := 0; got < 1; {
			_, data, err := term.conn.Read(ctx)
			if err != nil {
				b.Fatal(err)
			}
			got += bytes.Count(data, []byte("x"))
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}
