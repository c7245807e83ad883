package local

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestTheLeaderRecordsItsExitStatus: the wrapper writes the status to the
// descriptor the master opened, in a directory its user cannot enter.
func TestTheLeaderRecordsItsExitStatus(t *testing.T) {
	tests := map[string]struct {
		script string
		code   int
		signal syscall.Signal
	}{
		"a clean exit":              {"exit 0", 0, 0},
		"a failure":                 {"exit 3", 3, 0},
		"death by a signal":         {"kill -TERM $$", 143, syscall.SIGTERM},
		"a handled TERM exits as 0": {"trap 'exit 0' TERM; kill -TERM $$; sleep 5", 0, 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f, err := os.OpenFile(filepath.Join(dir, exitFileName), os.O_WRONLY|os.O_CREATE, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			path, argv := recordExit("/bin/sh", []string{"sh", "-c", "[ -e /proc/self/fd/3 ] && echo the command holds the exit file >&2\n" + tc.script})
			var stderr strings.Builder
			cmd := &exec.Cmd{Path: path, Args: argv, ExtraFiles: []*os.File{f}, Stderr: &stderr}
			if os.Geteuid() == 0 { // as a task's user, who cannot enter dir
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(userOf(t).UID), Gid: uint32(userOf(t).GID)}}
			}
			err = cmd.Run()
			if strings.Contains(stderr.String(), "holds") {
				t.Fatal("the command inherited the exit file's descriptor")
			}
			ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if tc.signal != 0 {
				if !ws.Signaled() || ws.Signal() != tc.signal {
					t.Fatalf("wrapper status %v (%v), want killed by %v", ws, err, tc.signal)
				}
			} else if ws.ExitStatus() != tc.code {
				t.Fatalf("wrapper exit %d, want %d", ws.ExitStatus(), tc.code)
			}
			if code, ok := readExit(dir); !ok || code != tc.code {
				t.Fatalf("recorded %d (%v), want %d", code, ok, tc.code)
			}
		})
	}
}
