package local

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// asTaskUser runs python code as the tests' task user, with args.
func asTaskUser(t *testing.T, code string, args ...string) *exec.Cmd {
	t.Helper()
	python := "/usr/bin/python3" // one every user can run
	if _, err := os.Stat(python); err != nil {
		t.Skip("needs /usr/bin/python3 for the task user's attack")
	}
	cmd := exec.Command(python, append([]string{"-c", code}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{
		Uid: uint32(userOf(t).UID), Gid: uint32(userOf(t).GID), Groups: []uint32{}}}
	return cmd
}

// TestALaunchMakesAnewTheWorkDirItsTaskUserLeft launches over a work
// directory that its task's user left (KeepWorkDirs, or a launch cut short
// by a crash), with a link where the launch writes a file of its spec, to a
// root-only file: the launch writes into a new directory, never through the
// link, and nothing the user left is there.
func TestALaunchMakesAnewTheWorkDirItsTaskUserLeft(t *testing.T) {
	needRoot(t)
	m := newManager(t, nil)
	s := spec(t, "again", "cat config; ls")
	s.Files = map[string][]byte{"config": []byte("the spec's\n")}
	victim := filepath.Join(reachableDir(t), "root-only")
	if err := os.WriteFile(victim, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(s.WorkDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(s.WorkDir, "config")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.WorkDir, "planted"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{s.WorkDir, filepath.Join(s.WorkDir, "config"), filepath.Join(s.WorkDir, "planted")} {
		if err := os.Lchown(p, userOf(t).UID, userOf(t).GID); err != nil {
			t.Fatal(err)
		}
	}

	launch(t, m, s)
	var lines []string
	for _, l := range logs(untilExit(t, m, "again"), Stdout) {
		lines = append(lines, l.Line)
	}
	if got, want := strings.Join(lines, "\n"), "the spec's\nconfig"; got != want {
		t.Errorf("the task saw\n%s\nwant\n%s", got, want)
	}
	if b, _ := os.ReadFile(victim); string(b) != "root's\n" || owner(t, victim) != "0:0 600" {
		t.Errorf("the root-only file is now %q, %s", b, owner(t, victim))
	}
}

// TestASharedDirIsMadeWithoutFollowingATaskUsersLink makes a shared
// directory (checkpoint storage) in a directory everyone writes to, as /tmp,
// again and again for two seconds, while a task's user, as that user, puts
// a link to a root-owned directory where it is made and takes it away in a
// loop: that directory never becomes everyone's.
func TestASharedDirIsMadeWithoutFollowingATaskUsersLink(t *testing.T) {
	needRoot(t)
	base := reachableDir(t)
	tmp, victim := filepath.Join(base, "tmp"), filepath.Join(base, "etc")
	for _, d := range []string{tmp, victim} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(tmp, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(tmp, "checkpoints")
	m := &Manager{opts: Options{SharedDirs: []string{shared}}}

	attack := asTaskUser(t, `
import os, sys, time
end, n = time.monotonic() + 2, 0
while time.monotonic() < end:
    try:
        os.symlink(sys.argv[1], sys.argv[2])
        os.unlink(sys.argv[2])
        n += 1
    except OSError:
        pass  # the master's directory is there
print(n)
`, victim, shared)
	var out, stderr strings.Builder
	attack.Stdout, attack.Stderr = &out, &stderr
	if err := attack.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- attack.Wait() }()
	tries := 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("the attacker failed: %v: %s", err, stderr.String())
			}
			running = false
		default:
			if fi, err := os.Lstat(shared); err == nil && fi.IsDir() {
				if err := os.Remove(shared); err != nil { // the master's, from the last try
					t.Fatal(err)
				}
			}
			_ = m.prepareTaskDirs() // fails when it finds the link: the victim is not shared
			tries++
			if got := owner(t, victim); got != "0:0 755" {
				t.Fatalf("after %d tries the root-owned directory is %s, want 0:0 755", tries, got)
			}
		}
	}
	t.Logf("%d tries while the task's user made and removed the link %s times", tries, strings.TrimSpace(out.String()))
	if tries == 0 || strings.TrimSpace(out.String()) == "0" {
		t.Fatalf("no race was run: %d tries, %s links", tries, out.String())
	}
}
