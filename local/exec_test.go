package local

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// reader collects a Stream's output in the background.
type reader struct {
	chunks chan string
	seen   strings.Builder
}

func newReader(s io.Reader) *reader {
	r := &reader{chunks: make(chan string, 64)}
	go func() {
		defer close(r.chunks)
		buf := make([]byte, 4096)
		for {
			n, err := s.Read(buf)
			if n > 0 {
				r.chunks <- string(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

// until waits until the output so far holds want, and consumes it.
func (r *reader) until(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(patience)
	for !strings.Contains(r.seen.String(), want) {
		select {
		case c, ok := <-r.chunks:
			if !ok {
				t.Fatalf("output ended before %q; got %q", want, r.seen.String())
			}
			r.seen.WriteString(c)
		case <-timeout:
			t.Fatalf("no %q within %v; got %q", want, patience, r.seen.String())
		}
	}
	rest := r.seen.String()
	rest = rest[strings.Index(rest, want)+len(want):]
	r.seen.Reset()
	r.seen.WriteString(rest)
}

func running(t *testing.T, m *Manager, id string) AllocationSpec {
	t.Helper()
	s := spec(t, id, "")
	s.Entrypoint = []string{"sleep", "60"}
	s.Env = map[string]string{"DET_X": "from-env"}
	launch(t, m, s)
	next(t, m, id, func(e Event) bool { _, ok := e.(Started); return ok })
	return s
}

func TestExecWithTerminal(t *testing.T) {
	m := newManager(t, nil)
	s := running(t, m, "a")
	sh, err := m.Exec(context.Background(), "a", []string{"sh"}, true)
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	defer sh.Close()
	r := newReader(sh)
	// The terminal echoes the command; only the output reads "hi".
	if _, err := io.WriteString(sh, "printf 'h%s\\n' i\n"); err != nil {
		t.Fatal(err)
	}
	r.until(t, "hi\r\n")
	if err := sh.Resize(100, 40); err != nil {
		t.Fatalf("Resize: %v", err)
	}
	io.WriteString(sh, "stty size; pwd; echo $DET_X; tty >/dev/null && echo is-a-tty\n")
	for _, want := range []string{"40 100\r\n", s.WorkDir + "\r\n", "from-env\r\n", "is-a-tty\r\n"} {
		r.until(t, want)
	}
	io.WriteString(sh, "exit 5\n")
	if code, err := sh.Wait(); code != 5 || err != nil {
		t.Errorf("Wait = %d, %v; want 5", code, err)
	}
}

func TestExecWithoutTerminal(t *testing.T) {
	m := newManager(t, nil)
	s := running(t, m, "a")
	p, err := m.Exec(context.Background(), "a", []string{"sh", "-c", `read x; echo "$x $DET_X"; pwd; echo oops >&2`}, false)
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	io.WriteString(p, "in\n")
	out, err := io.ReadAll(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := "in from-env\n" + s.WorkDir + "\noops\n"; string(out) != want {
		t.Errorf("output %q, want %q", out, want)
	}
	if code, err := p.Wait(); code != 0 || err != nil {
		t.Errorf("Wait = %d, %v; want 0", code, err)
	}
	if err := p.Resize(1, 1); err != nil {
		t.Errorf("Resize without a terminal = %v, want nil", err)
	}
	p.Close()
}

func TestExecProcessesEndWithTheAllocation(t *testing.T) {
	m := newManager(t, nil)
	running(t, m, "a")
	p, err := m.Exec(context.Background(), "a", []string{"sh", "-c", "trap '' HUP TERM; echo up; exec sleep 60"}, true)
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	newReader(p).until(t, "up")
	if err := m.Kill(context.Background(), "a", time.Second); err != nil {
		t.Fatal(err)
	}
	untilExit(t, m, "a")
	if code, _ := p.Wait(); code != 137 {
		t.Errorf("exec'd process ended with %d, want 137 (SIGKILL)", code)
	}
	if _, err := m.Exec(context.Background(), "a", []string{"true"}, false); code(err) != "conflict" {
		t.Errorf("Exec into an ended allocation: %v, want conflict", err)
	}
	if _, err := m.Exec(context.Background(), "nobody", []string{"true"}, false); code(err) != "not_found" {
		t.Errorf("Exec into an unknown allocation: %v, want not_found", err)
	}
}

func TestExecCloseHangsUp(t *testing.T) {
	m := newManager(t, nil)
	running(t, m, "a")
	sh, err := m.Exec(context.Background(), "a", []string{"sh"}, true)
	if err != nil {
		t.Fatal(err)
	}
	sh.Close()
	if code, _ := sh.Wait(); code != 128+1 {
		t.Errorf("shell ended with %d, want 129 (SIGHUP)", code)
	}
}
