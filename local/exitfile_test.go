package local

import (
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

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
			path, argv := recordExit("/bin/sh", []string{"sh", "-c", tc.script}, filepath.Join(dir, exitFileName))
			cmd := &exec.Cmd{Path: path, Args: argv}
			err := cmd.Run()
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
