package main

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

func TestShellStartAndOpenStreamATerminal(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()

	// Attached: stdin is a pipe, so no raw mode, but everything streams.
	// (printf's arguments keep the typed line from matching the output.)
	r := c.run("printf 'started-%s\\n' ok\nexit\n", "shell", "start", "--config", "resources.slots=0")
	if r.code != 0 || !strings.Contains(r.stdout, "started-ok") {
		t.Fatalf("det shell start: %d\nstdout: %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	id := regexp.MustCompile(`Launched shell (\S+);`).FindStringSubmatch(r.stderr)
	if id == nil {
		t.Fatalf("stderr: %s", r.stderr)
	}

	r = c.run("printf 'via-%s\\n' cli\nexit\n", "shell", "open", id[1])
	if r.code != 0 || !strings.Contains(r.stdout, "via-cli") {
		t.Fatalf("det shell open: %d\nstdout: %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// The remote shell's exit status is det's; Ctrl-D at the end of input
	// ends it too.
	if r = c.run("(exit 3)\nexit $?\n", "shell", "open", id[1]); r.code != 3 {
		t.Fatalf("exit 3: %d\nstdout: %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r = c.run("printf 'eof-%s\\n' ok\n", "shell", "open", id[1]); r.code != 0 || !strings.Contains(r.stdout, "eof-ok") {
		t.Fatalf("end of input: %d\nstdout: %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}

	// A detached start prints the ID; an ended shell is refused with why.
	other := strings.TrimSpace(c.ok("", "shell", "start", "-d", "--config", "resources.slots=0"))
	if !strings.HasPrefix(other, "shell-") || other == id[1] {
		t.Fatalf("det shell start -d: %q", other)
	}
	c.m.Tasks.Kill(t.Context(), authz.System, id[1])
	c.ended("shell", id[1])
	if r = c.run("", "shell", "open", id[1]); r.code == 0 || !strings.Contains(r.stderr, "has ended") {
		t.Fatalf("open an ended shell: %d\nstdout: %q\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// openPTY opens a pseudo-terminal pair, for det to run in as in a window.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminals:", err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

func TestShellOpenInATerminalIsRawAndRestoresIt(t *testing.T) {
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	id := strings.TrimSpace(c.ok("", "shell", "start", "-d", "--config", "resources.slots=0"))
	master, slave := openPTY(t)
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 33, Col: 111}); err != nil {
		t.Fatal(err)
	}
	before, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var mu sync.Mutex
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	waitFor := func(re string) {
		t.Helper()
		rx := regexp.MustCompile(re)
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			ok, s := rx.MatchString(out.String()), out.String()
			mu.Unlock()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %q:\n%q", re, s)
			}
		}
	}
	done := make(chan error, 1)
	var errOut strings.Builder
	go func() {
		done <- run(t.Context(), []string{"shell", "open", id}, slave, slave, &errOut, func(k string) string { return c.env[k] })
	}()
	waitFor(`# $|\$ $`) // a prompt
	// Ctrl-C reaches the remote side: it interrupts sleep there, not det.
	master.Write([]byte("sleep 100\n"))
	time.Sleep(300 * time.Millisecond)
	master.Write([]byte{3})
	master.Write([]byte("stty size; printf 'after-%s\\n' int\n"))
	waitFor(`33 111\r?\n(.|\n)*after-int`)
	master.Write([]byte("exit\n"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("det shell open: %v\n%s", err, errOut.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("det shell open did not end")
	}
	after, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
		t.Fatalf("terminal not restored: %+v, was %+v", after, before)
	}
}
