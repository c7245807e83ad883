package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// TestShellTmuxStartAndOpenAreRealTerminals runs the det binary in a tmux
// window, as a person would in theirs: det shell start opens a terminal in
// raw mode where the remote shell runs commands, sees the window's size and
// its changes and gets Ctrl-C; exit leaves det with the local terminal as it
// was; det shell open gets back into the same shell.
func TestShellTmuxStartAndOpenAreRealTerminals(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not on PATH: this test drives det in a tmux window (apt-get install tmux)")
	}
	m := handlerstest.Start(t, handlerstest.Options{InitialPassword: "tmux-pw"})
	det := buildDet(t)

	// det's environment: this master, a config dir of its own, logged in
	// as admin with det user login.
	env := []string{"DET_MASTER=" + m.URL, "XDG_CONFIG_HOME=" + t.TempDir(), "HOME=" + t.TempDir()}
	login := exec.Command(det, "user", "login", "admin")
	login.Env = append(os.Environ(), append(env, "DET_PASS=tmux-pw")...)
	if out, err := login.CombinedOutput(); err != nil {
		t.Fatalf("det user login admin: %v\n%s", err, out)
	}

	tm := startTmux(t, 120, 40, env, det+" shell start --config resources.slots=0")

	// The remote shell's prompt, then one of ours that the typed line
	// does not contain.
	tm.waitFor(t, 90*time.Second, `Terminal into shell shell-\d+`)
	tm.waitFor(t, 30*time.Second, `(?m)[#$]\s*$`)
	id := regexp.MustCompile(`Launched shell (shell-\d+);`).FindStringSubmatch(tm.capture(t))
	if id == nil {
		t.Fatalf("no shell ID in the pane:\n%s", tm.capture(t))
	}
	tm.typeLine(t, `PS1='P''S> '`)
	tm.waitFor(t, 20*time.Second, `(?m)^PS>\s*$`)
	// idle: the pane ends with our prompt, nothing typed after it.
	idle := regexp.MustCompile(`(?m)^PS>\s*\z`)

	// Commands run remotely: the shell computes what the line does not say.
	tm.typeLine(t, `echo $((6*7))x`)
	tm.waitFor(t, 20*time.Second, `(?m)^42x\s*$`)

	// The remote PTY has the pane's size, and follows it.
	rows, cols := tm.paneSize(t)
	if cols != 120 {
		t.Fatalf("pane is %dx%d, want 120 columns", cols, rows)
	}
	tm.typeLine(t, `echo size=$(stty size | tr ' ' x)`)
	tm.waitFor(t, 20*time.Second, fmt.Sprintf(`(?m)^size=%dx%d\s*$`, rows, cols))
	tm.tmux(t, "resize-window", "-t", tm.session, "-x", "100", "-y", "30")
	rows, cols = tm.paneSize(t)
	if cols != 100 || (rows != 30 && rows != 29) { // 29 with tmux's status line
		t.Fatalf("after resize-window the pane is %dx%d", cols, rows)
	}
	time.Sleep(500 * time.Millisecond) // SIGWINCH to det, a resize message to the master
	tm.typeLine(t, `echo size=$(stty size | tr ' ' x)`)
	tm.waitFor(t, 20*time.Second, fmt.Sprintf(`(?m)^size=%dx%d\s*$`, rows, cols))

	// Ctrl-C reaches the remote side: sleep ends, det does not.
	tm.waitFor(t, 20*time.Second, idle.String())
	tm.typeLine(t, "sleep 100")
	tm.waitFor(t, 20*time.Second, `(?m)^PS> sleep 100\s*\z`)
	time.Sleep(time.Second)
	if !regexp.MustCompile(`(?m)^PS> sleep 100\s*\z`).MatchString(tm.capture(t)) {
		t.Fatalf("sleep 100 ended at once:\n%s", tm.capture(t))
	}
	tm.tmux(t, "send-keys", "-t", tm.session, "C-c")
	tm.waitFor(t, 10*time.Second, `(?m)^\^C\s*\nPS>\s*\z`) // at once, not in 100s
	tm.typeLine(t, `echo $((6*8))y > tmux-mark; cat tmux-mark`)
	tm.waitFor(t, 20*time.Second, `(?m)^48y\s*$`)
	if strings.Contains(tm.capture(t), "DET-EXIT") {
		t.Fatalf("Ctrl-C ended det:\n%s", tm.capture(t))
	}

	// exit ends the remote shell, then det, with the terminal restored.
	tm.typeLine(t, "exit")
	tm.waitFor(t, 30*time.Second, `DET-EXIT=0`)
	tm.waitFor(t, 10*time.Second, `STTY-END`)
	checkCooked(t, tm.capture(t))

	// det shell open gets a new terminal into the same shell: its work
	// directory still has the file.
	open := startTmux(t, 100, 30, env, det+" shell open "+id[1])
	open.waitFor(t, 60*time.Second, `Terminal into shell `+id[1])
	open.waitFor(t, 30*time.Second, `(?m)[#$]\s*$`)
	open.typeLine(t, `cat tmux-mark; echo $((7*9))z`)
	open.waitFor(t, 20*time.Second, `(?m)^48y\s*$`)
	open.waitFor(t, 20*time.Second, `(?m)^63z\s*$`)
	open.typeLine(t, "exit 3")
	open.waitFor(t, 30*time.Second, `DET-EXIT=3`)
	open.waitFor(t, 10*time.Second, `STTY-END`)
	checkCooked(t, open.capture(t))

	// With stdout piped, the terminal still has the window's size, from
	// stdin's.
	piped := startTmux(t, 90, 25, env, det+" shell open "+id[1]+" | cat")
	piped.waitFor(t, 60*time.Second, `(?m)[#$]\s*$`)
	rows, cols = piped.paneSize(t)
	piped.typeLine(t, `echo size=$(stty size | tr ' ' x)`)
	piped.waitFor(t, 20*time.Second, fmt.Sprintf(`(?m)^size=%dx%d\s*$`, rows, cols))
	piped.typeLine(t, "exit")
	piped.waitFor(t, 30*time.Second, `DET-EXIT=0`)
	piped.waitFor(t, 10*time.Second, `STTY-END`)
	checkCooked(t, piped.capture(t))
}

// checkCooked checks what a pane printed after det: the terminal's settings
// are as before, canonical mode and echo on.
func checkCooked(t *testing.T, pane string) {
	t.Helper()
	i := strings.Index(pane, "DET-EXIT=")
	if i < 0 {
		t.Fatalf("no DET-EXIT in the pane:\n%s", pane)
	}
	after := pane[i:]
	if !strings.Contains(after, "STTY-SAME") {
		t.Fatalf("after det the terminal's settings differ from before it:\n%s", after)
	}
	for _, flag := range []string{"icanon", "echo", "isig", "icrnl", "opost"} {
		if !regexp.MustCompile(`(^|\s)` + flag + `(\s|$)`).MatchString(after) {
			t.Fatalf("after det the terminal lacks %s:\n%s", flag, after)
		}
	}
}

// buildDet builds cmd/det into a temporary directory.
func buildDet(t testing.TB) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		goBin = "go"
	}
	out := filepath.Join(t.TempDir(), "det")
	cmd := exec.Command(goBin, "build", "-o", out, "github.com/resolute-ml/resolute/cmd/det")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/det: %v\n%s", err, b)
	}
	return out
}

// tmuxPane is a tmux server of the test's own, with one session whose
// window runs a command.
type tmuxPane struct {
	socket, session string
}

// startTmux starts a detached tmux server, with no configuration, whose
// window of cols×rows runs command with env under sh; after it the pane
// prints DET-EXIT=status, STTY-SAME if the terminal's settings are as before
// it, then stty -a, then STTY-END, and stays.
func startTmux(t *testing.T, cols, rows int, env []string, command string) *tmuxPane {
	t.Helper()
	p := &tmuxPane{socket: fmt.Sprintf("resolute-e2e-%d-%d", os.Getpid(), time.Now().UnixNano()), session: "det"}
	var assign strings.Builder
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&assign, "%s=%s ", k, shellQuote(v))
	}
	script := fmt.Sprintf(`before=$(stty -g); %s %s; echo DET-EXIT=$?; [ "$(stty -g)" = "$before" ] && echo STTY-SAME; `+
		`stty -a; echo STTY-END; exec sleep 3600`, assign.String(), command)
	// A pane whose command dies stays, for capture-pane to show why.
	cmd := exec.Command("tmux", "-L", p.socket, "-f", "/dev/null", "start-server", ";",
		"set-option", "-g", "remain-on-exit", "on", ";",
		"set-option", "-g", "history-limit", "10000", ";",
		"new-session", "-d", "-s", p.session, "-x", fmt.Sprint(cols), "-y", fmt.Sprint(rows), "sh", "-c", script)
	cmd.Env = withoutEnv(os.Environ(), "TMUX", "TMUX_PANE")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("tmux pane %s at the end:\n%s", p.socket, p.capture(t))
		}
		exec.Command("tmux", "-L", p.socket, "kill-server").Run()
	})
	return p
}

// tmux runs a tmux command against the pane's server.
func (p *tmuxPane) tmux(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...)
	cmd.Env = withoutEnv(os.Environ(), "TMUX", "TMUX_PANE")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// capture is the pane's text, its history included, wrapped lines joined.
func (p *tmuxPane) capture(t *testing.T) string {
	t.Helper()
	return p.tmux(t, "capture-pane", "-p", "-J", "-S", "-", "-t", p.session)
}

// typeLine types s and Enter.
func (p *tmuxPane) typeLine(t *testing.T, s string) {
	t.Helper()
	p.tmux(t, "send-keys", "-t", p.session, "-l", s)
	p.tmux(t, "send-keys", "-t", p.session, "Enter")
}

// paneSize is the pane's rows and columns, as tmux says.
func (p *tmuxPane) paneSize(t *testing.T) (rows, cols int) {
	t.Helper()
	s := strings.TrimSpace(p.tmux(t, "display-message", "-p", "-t", p.session, "#{pane_height} #{pane_width}"))
	if _, err := fmt.Sscan(s, &rows, &cols); err != nil {
		t.Fatalf("pane size %q: %v", s, err)
	}
	return rows, cols
}

// waitFor polls the pane until it matches re.
func (p *tmuxPane) waitFor(t *testing.T, timeout time.Duration, re string) {
	t.Helper()
	rx := regexp.MustCompile(re)
	for deadline := time.Now().Add(timeout); ; time.Sleep(100 * time.Millisecond) {
		s := p.capture(t)
		if rx.MatchString(s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %q in the pane:\n%s", timeout, re, s)
		}
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, n := range names {
			drop = drop || k == n
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
