package local

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAStartupHookRunsBeforeTheEntrypoint runs tasks whose context has a
// startup-hook.sh: its output is the task's, what it exports and makes
// reaches the entrypoint, it runs as the task's user in the work directory,
// and a hook that fails ends the task with its status, saying so, before
// the entrypoint runs.
func TestAStartupHookRunsBeforeTheEntrypoint(t *testing.T) {
	// The hook says who and where it runs, exports a variable, writes a
	// file, and puts a program of its making on PATH.
	const goodHook = `echo "hook: uid $(id -u) in $PWD"
echo "hook to stderr" >&2
export FROM_HOOK="exported by the hook"
echo "written by the hook" > made-by-hook.txt
mkdir -p tools && printf '#!/bin/sh\necho "a tool the hook made, given $*"\n' > tools/hooktool && chmod +x tools/hooktool
export PATH="$PWD/tools:$PATH"
set -- clobbered arguments
`
	const entrypointShell = `echo "entrypoint sees $FROM_HOOK"; cat made-by-hook.txt; hooktool x`
	tests := map[string]struct {
		hook       string // startup-hook.sh; "" for none
		runsHook   bool   // the spec's StartupHook
		shell      string
		entrypoint []string
		wantOut    []string
		wantErr    []string
		wantCode   int
	}{
		"a hook's exports, files and PATH reach a shell entrypoint, and its output is the task's": {
			hook: goodHook, runsHook: true, shell: entrypointShell,
			wantOut: []string{"hook: uid {uid} in {workdir}", "entrypoint sees exported by the hook", "written by the hook", "a tool the hook made, given x"},
			wantErr: []string{"hook to stderr"},
		},
		"an argv entrypoint is looked up after the hook, which may have installed it, and keeps its arguments": {
			hook: goodHook, runsHook: true, entrypoint: []string{"hooktool", "a b", "$FROM_HOOK"},
			wantOut: []string{"hook: uid {uid} in {workdir}", "a tool the hook made, given a b $FROM_HOOK"},
			wantErr: []string{"hook to stderr"},
		},
		"a hook that exits 3 ends the task with 3 and says so; the entrypoint does not run": {
			hook: "echo installing\nexit 3\n", runsHook: true, shell: "echo the entrypoint ran",
			wantOut:  []string{"installing"},
			wantErr:  []string{"startup-hook.sh exited with status 3; the task's entrypoint did not run"},
			wantCode: 3,
		},
		"a failing command fails the hook, as Determined's errexit does": {
			hook: "echo before\nfalse\necho after\n", runsHook: true, entrypoint: []string{"echo", "the entrypoint ran"},
			wantOut:  []string{"before"},
			wantErr:  []string{"startup-hook.sh exited with status 1; the task's entrypoint did not run"},
			wantCode: 1,
		},
		"errexit stays on only for the hook: the entrypoint's own failures are its own": {
			hook: "true\n", runsHook: true, shell: "false; echo on after a failure; exit 4",
			wantOut:  []string{"on after a failure"},
			wantCode: 4,
		},
		"a task that does not run hooks (a command) leaves the file alone": {
			hook: "echo the hook ran; exit 3\n", runsHook: false, shell: "echo the entrypoint ran",
			wantOut: []string{"the entrypoint ran"},
		},
		"a context without a hook runs the entrypoint as before": {
			runsHook: true, entrypoint: []string{"echo", "the entrypoint ran"},
			wantOut: []string{"the entrypoint ran"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m := newManager(t, nil)
			s := spec(t, "hook", tc.shell)
			s.Entrypoint, s.StartupHook = tc.entrypoint, tc.runsHook
			s.Files = map[string][]byte{}
			if tc.hook != "" {
				s.Files["startup-hook.sh"] = []byte(tc.hook)
			}
			launch(t, m, s)
			events := untilExit(t, m, "hook")
			uid := strconv.Itoa(os.Geteuid()) // a master that is not root runs tasks as itself
			if m.switchUsers {
				uid = strconv.Itoa(userOf(t).UID)
			}
			replace := strings.NewReplacer("{uid}", uid, "{workdir}", filepath.Clean(s.WorkDir))
			var wantOut []string
			for _, l := range tc.wantOut {
				wantOut = append(wantOut, replace.Replace(l))
			}
			if diff := cmp.Diff(wantOut, lines(logs(events, Stdout))); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErr, lines(logs(events, Stderr))); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if ex := exitOf(t, events); ex.ExitCode != tc.wantCode || ex.Err != nil || ex.Killed {
				t.Errorf("Exited = %+v, want code %d", ex, tc.wantCode)
			}
		})
	}
}

// TestAStartupHooksPipInstallGoesToTheTaskUsersHome installs a wheel the
// way Determined's users' hooks do (`python3 -m pip install`), with
// Debian's Python, which refuses installs (PEP 668) unless told otherwise:
// it lands in the task user's home, and the entrypoint imports it.
func TestAStartupHooksPipInstallGoesToTheTaskUsersHome(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-m", "pip", "--version").Run(); err != nil {
		t.Skipf("%s has no pip (Debian's python3-pip): %v", python, err)
	}
	m := newManager(t, nil)
	s := spec(t, "pip", `echo "HOME=$HOME"; `+python+` -c 'import hookdemo; print("imported", hookdemo.GREETING, "from", hookdemo.__file__)'`)
	s.StartupHook = true
	s.Files = map[string][]byte{
		"startup-hook.sh":               []byte(python + " -m pip install --no-index --no-cache-dir --quiet ./hookdemo-1.0-py3-none-any.whl\n"),
		"hookdemo-1.0-py3-none-any.whl": wheel(t, "hookdemo", `GREETING = "hello"`),
	}
	launch(t, m, s)
	events := untilExit(t, m, "pip")
	if ex := exitOf(t, events); ex.ExitCode != 0 {
		t.Fatalf("Exited = %+v; output:\n%s", ex, strings.Join(append(lines(logs(events, Stdout)), lines(logs(events, Stderr))...), "\n"))
	}
	home := envMap(events)["HOME"]
	if m.switchUsers && !strings.HasPrefix(home, m.opts.HomeRoot+"/") {
		t.Errorf("HOME = %q, want the task user's, under %s", home, m.opts.HomeRoot)
	}
	want := fmt.Sprintf("imported hello from %s/.local/lib/", home)
	if out := strings.Join(lines(logs(events, Stdout)), "\n"); !strings.Contains(out, want) {
		t.Errorf("stdout:\n%s\nwant a line with %q", out, want)
	}
}

func lines(ls []Log) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Line)
	}
	return out
}

// wheel is a pure-Python wheel of one module, made by hand: pip installs it
// without a network or a build backend.
func wheel(t *testing.T, name, source string) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	info := name + "-1.0.dist-info/"
	for _, f := range []struct{ name, body string }{
		{name + ".py", source + "\n"},
		{info + "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: resolute-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{info + "RECORD", ""},
	} {
		w, err := z.Create(f.name)
		if err == nil {
			_, err = w.Write([]byte(f.body))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
