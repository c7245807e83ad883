package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
)

// patience bounds every wait of the tests; a loaded machine is slow, never
// this slow.
const patience = 20 * time.Second

func noGPUs(context.Context) ([]GPU, error) { return nil, errors.New("no gpus in tests") }

// users holds the users tests' tasks run as.
var users = struct {
	sync.Mutex
	of map[userKey]resolute.TaskUser
}{of: map[userKey]resolute.TaskUser{}}

type userKey struct {
	t    *testing.T
	name string
}

// userOf is what t's tasks run as (when the tests run as root): ids of no
// account, as an unlinked user's default ids, that no other test uses. The
// end of a task kills every process of its default uid (strays.go), which
// must not reach another test's tasks: of this process (the last
// allocations of a test that ended may still be ending, and its killed
// processes count against RLIMIT_NPROC until reaped), or of another (other
// packages' masters run theirs at task_uid_base + small user ids).
func userOf(t *testing.T) resolute.TaskUser { return testUser(t, "") }

// testUser is t's user called name, of ids of its own.
func testUser(t *testing.T, name string) resolute.TaskUser {
	users.Lock()
	defer users.Unlock()
	k := userKey{t, name}
	u, ok := users.of[k]
	if !ok {
		id := 3_000_000_000 + os.Getpid()%(1<<22)*256 + len(users.of)%256
		u = resolute.TaskUser{UID: id, GID: id, User: "ann", Group: "ann"}
		users.of[k] = u
	}
	return u
}

// reachableDir is a temporary directory that task users can pass through
// (t.TempDir's parent is mode 0700), removed when the test ends.
func reachableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "resolute-local-")
	if err == nil {
		err = os.Chmod(dir, 0o711)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// newManager returns a Manager with 4 CPU slots on a fresh state dir, closed
// (after killing what still runs) when the test ends.
func newManager(t *testing.T, mutate func(*Options)) *Manager {
	t.Helper()
	opts := Options{StateDir: filepath.Join(reachableDir(t), "state"), Slots: 4, GPUs: DiscoverFunc(noGPUs),
		AgentID: "test-agent", PollInterval: 20 * time.Millisecond}
	if mutate != nil {
		mutate(&opts)
	}
	m, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { cleanup(m) })
	return m
}

func cleanup(m *Manager) {
	for _, a := range m.Capacity().Allocations {
		_ = m.Kill(context.Background(), a.AllocationID, 0)
	}
	_ = m.Close()
}

// spec returns a spec running shell as userOf(t) in a fresh work dir.
func spec(t *testing.T, id, shell string) AllocationSpec {
	return AllocationSpec{AllocationID: id, TaskID: "task-" + id, WorkDir: filepath.Join(reachableDir(t), "work"), Shell: shell,
		RunAs: userOf(t)}
}

func launch(t *testing.T, m *Manager, s AllocationSpec) {
	t.Helper()
	if err := m.Launch(context.Background(), s); err != nil {
		t.Fatalf("Launch %s: %v", s.AllocationID, err)
	}
}

// next returns the next event of allocation id that satisfies ok, skipping
// the others.
func next(t *testing.T, m *Manager, id string, ok func(Event) bool) Event {
	t.Helper()
	timeout := time.After(patience)
	for {
		select {
		case e, open := <-m.Events():
			if !open {
				t.Fatalf("events closed while waiting for %s", id)
			}
			if e.Allocation() == id && ok(e) {
				return e
			}
		case <-timeout:
			t.Fatalf("no matching event of %s within %v", id, patience)
		}
	}
}

// untilExit returns the events of allocation id up to and with its Exited.
func untilExit(t *testing.T, m *Manager, id string) []Event {
	t.Helper()
	var got []Event
	next(t, m, id, func(e Event) bool {
		got = append(got, e)
		_, done := e.(Exited)
		return done
	})
	return got
}

func exitOf(t *testing.T, events []Event) Exited {
	t.Helper()
	return events[len(events)-1].(Exited)
}

// logLine waits for a Log of id whose Line is line.
func logLine(t *testing.T, m *Manager, id, line string) Log {
	t.Helper()
	return next(t, m, id, func(e Event) bool { l, ok := e.(Log); return ok && l.Line == line }).(Log)
}

// logs returns the Log events of one stream, with Time and AllocationID
// cleared for comparison, and Agent and Container too where they name the
// local agent and the allocation.
func logs(events []Event, stream string) []Log {
	var out []Log
	for _, e := range events {
		if l, ok := e.(Log); ok && l.Stream == stream {
			if l.Agent != AgentName || l.Container != l.AllocationID {
				// Every line says where it came from; when wrong, the
				// comparison shows it.
				l.Message += fmt.Sprintf(" [agent %q container %q]", l.Agent, l.Container)
			}
			l.Agent, l.Container = "", ""
			l.Time, l.AllocationID = time.Time{}, ""
			out = append(out, l)
		}
	}
	return out
}

func code(err error) string { return resolute.ErrorCode(err) }

// eventually polls cond until it holds; for conditions no event reports,
// such as a process being reaped by init.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, patience)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func processGone(pid int) bool {
	st, err := readProcStat(pid)
	return err != nil || st.state == 'Z' || st.state == 'X'
}

func envMap(events []Event) map[string]string {
	env := map[string]string{}
	for _, l := range logs(events, Stdout) {
		if k, v, ok := strings.Cut(l.Line, "="); ok {
			env[k] = v
		}
	}
	return env
}
