package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/resolute-ml/resolute"
)

// needRoot skips tests of switching users where the master cannot.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running tasks as other users needs root; these tests run as uid", os.Geteuid())
	}
}

// owner returns the uid, gid and permission bits of a file.
func owner(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fmt.Sprintf("%d:%d %o", st.Uid, st.Gid, st.Mode&0o7777)
}

func TestTasksRunAsTheirUsersWithAHomeOfTheirOwn(t *testing.T) {
	needRoot(t)
	m := newManager(t, func(o *Options) {
		o.BaseEnv = []string{"PATH=/usr/bin:/bin", "HOME=/root", "USER=root"}
		o.KeepWorkDirs = true // looked at after the task ends
	})
	s := spec(t, "who", `id -u; id -g; id -G; echo "$HOME $USER $LOGNAME"; touch "$HOME/mine" && echo home-writable; `+
		`cat secret; ls sub; cat /proc/self/status | grep -i '^CapEff'`)
	s.Files = map[string][]byte{"secret": []byte("only-ann\n"), "sub/f": nil}
	launch(t, m, s)
	id := strconv.Itoa(userOf(t).UID)
	home := filepath.Join(m.opts.HomeRoot, id)
	got := logs(untilExit(t, m, "who"), Stdout)
	var lines []string
	for _, l := range got {
		lines = append(lines, l.Line)
	}
	want := []string{id, id, id, home + " ann ann", "home-writable", "only-ann", "f",
		"CapEff:\t0000000000000000"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the task saw\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for p, want := range map[string]string{
		home:                    id + ":" + id + " 700",
		m.opts.HomeRoot:         "0:0 711",
		s.WorkDir:               id + ":" + id + " 700",
		s.WorkDir + "/secret":   id + ":" + id + " 700",
		s.WorkDir + "/sub":      id + ":" + id + " 700",
		m.opts.StateDir:         "0:0 700",
		filepath.Dir(s.WorkDir): "0:0 711",
	} {
		if got := owner(t, p); got != want {
			t.Errorf("%s is %s, want %s", p, got, want)
		}
	}
}

func TestTerminalsRunAsTheTasksUser(t *testing.T) {
	needRoot(t)
	m := newManager(t, nil)
	running(t, m, "a")
	for _, tty := range []bool{true, false} {
		p, err := m.Exec(context.Background(), "a", []string{"sh", "-c", `id -u; id -G; [ -t 0 ] && stat -c '%u' "$(tty)"; exit 0`}, tty)
		if err != nil {
			t.Fatalf("Exec (tty %v): %v", tty, err)
		}
		out, _ := io.ReadAll(p)
		id := userOf(t).UID
		want := fmt.Sprintf("%d\n%d\n", id, id)
		if tty { // its terminal is its own, as login makes it
			want = fmt.Sprintf("%d\r\n%d\r\n%d\r\n", id, id, id)
		}
		if string(out) != want {
			t.Errorf("terminal (tty %v) printed %q, want %q", tty, out, want)
		}
	}
}

func TestALaunchAsRootIsRefused(t *testing.T) {
	needRoot(t)
	m := newManager(t, nil)
	for name, u := range map[string]resolute.TaskUser{
		"no user at all":       {},
		"uid 0":                {UID: 0, GID: 5, User: "root"},
		"gid 0":                {UID: 5, GID: 0, User: "x"},
		"a uid past the range": {UID: 1 << 32, GID: 5, User: "x"},
	} {
		s := spec(t, "root", "id")
		s.RunAs = u
		err := m.Launch(context.Background(), s)
		if code(err) != resolute.EInvalid || !strings.Contains(resolute.ErrorMessage(err), "never run as root") {
			t.Errorf("%s: Launch = %v, want invalid: never run as root", name, err)
		}
	}
	if len(m.Capacity().Allocations) != 0 {
		t.Errorf("refused launches left allocations: %+v", m.Capacity().Allocations)
	}
}

func TestAMasterThatIsNotRootSaysSoInTheLogOfALinkedUsersTask(t *testing.T) {
	m := newManager(t, nil)
	m.switchUsers = false // as when the master is not root
	s := spec(t, "linked", "id -u")
	s.RunAs = resolute.TaskUser{UID: 1001, GID: 1001, User: "ann", Group: "ann", Linked: true}
	launch(t, m, s)
	out := logs(untilExit(t, m, "linked"), Stdout)
	if len(out) != 2 || !strings.Contains(out[0].Line, "runs as the master's user") ||
		!strings.Contains(out[0].Line, "ann (uid 1001)") || out[1].Line != fmt.Sprint(os.Geteuid()) {
		t.Fatalf("log = %+v, want the note, then the master's uid", out)
	}
}

func TestNewRefusesDirectoriesTaskUsersCannotReach(t *testing.T) {
	needRoot(t)
	closed := filepath.Join(reachableDir(t), "closed")
	if err := os.Mkdir(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(reachableDir(t), "ro")
	if err := os.Mkdir(readOnly, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		mutate func(*Options)
		want   string
	}{
		"a work root under a directory others cannot enter": {
			mutate: func(o *Options) { o.WorkRoot = filepath.Join(closed, "work") },
			want:   "cannot enter " + closed + " (mode -rwx------)",
		},
		"a harness under a directory others cannot enter": {
			mutate: func(o *Options) { o.HarnessDir = filepath.Join(closed, "harness", "lib") },
			want:   "`chmod o+x " + closed + "`",
		},
		"checkpoint storage others cannot write to": {
			mutate: func(o *Options) { o.SharedDirs = []string{readOnly} },
			want:   "`chmod 1777 " + readOnly + "`",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			opts := Options{StateDir: filepath.Join(reachableDir(t), "state"), GPUs: DiscoverFunc(noGPUs)}
			tc.mutate(&opts)
			_, err := New(opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want an error saying %q", err, tc.want)
			}
		})
	}
	// What the master makes itself is made right, even over an older
	// master's modes.
	base := reachableDir(t)
	work, shared := filepath.Join(base, "work"), filepath.Join(base, "checkpoints")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, func(o *Options) {
		o.StateDir, o.WorkRoot, o.SharedDirs = filepath.Join(base, "state"), work, []string{shared}
	})
	for p, want := range map[string]string{work: "0:0 711", shared: "0:0 1777", filepath.Join(base, "homes"): "0:0 711"} {
		if got := owner(t, p); got != want {
			t.Errorf("%s is %s, want %s", p, got, want)
		}
	}
	_ = m
}
