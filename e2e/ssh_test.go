package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/e2e/mastertest"
	"github.com/resolute-ml/resolute/postgres"
)

// sshPrereqs skips a test that needs what SSH into shells needs: a master
// running as root (tasks as their owners' Unix users), Debian's sshd and
// ssh client, and nss_wrapper for the default ids, which have no account.
func sshPrereqs(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("tasks run as their owners' Unix users only under a master running as root; run this test as root (CI does)")
	}
	if _, err := postgres.BinDir(); err != nil {
		t.Skip(err)
	}
	for _, p := range []string{"/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/scp"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s is missing: apt-get install openssh-server openssh-client (make test installs them)", p)
		}
	}
	if libs, _ := filepath.Glob("/usr/lib/*/libnss_wrapper.so"); len(libs) == 0 {
		t.Skip("libnss_wrapper.so is missing: apt-get install libnss-wrapper (make test installs it)")
	}
}

// detAs runs the det binary as the holder of token, with a config dir of
// its own, and returns its stdout, stderr and error.
type detAs struct {
	det, master, token, home string
}

func (d detAs) env() []string {
	return append(os.Environ(), "DET_MASTER="+d.master, "DET_USER_TOKEN="+d.token, "XDG_CONFIG_HOME="+d.home, "HOME="+d.home)
}

func (d detAs) run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.det, args...)
	cmd.Env = d.env()
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// sh runs a shell command line (an ssh or scp command det printed, and
// more) in det's environment.
func (d detAs) sh(t *testing.T, line string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = d.env()
	cmd.Stdin = strings.NewReader("")
	cmd.WaitDelay = 5 * time.Second // a ProxyCommand left behind must not hold the output open
	t.Logf("$ %s", line)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// freeLocalPort is a loopback port nothing listens on now.
func freeLocalPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// getUntil GETs url until it answers 200 with want in its body.
func getUntil(t *testing.T, url, want string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(string(b), want) {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("GET %s: no %q within %s; last: %s", url, want, within, last)
}

// TestSSHIntoAShellThroughTheMastersProxyWithTheRealClient is point 6 of
// issue 20 end to end: ann's shell runs sshd as her Unix user; the ssh
// command det prints (ProxyCommand det shell ssh-proxy, over the master's
// websocket) runs a command there, scp copies a file both ways, and -L
// forwards a local port to one inside the task. Bo cannot get her key, open
// her tunnel, or log in with his own shell's key through hers; the
// administrator cannot get her key either.
func TestSSHIntoAShellThroughTheMastersProxyWithTheRealClient(t *testing.T) {
	sshPrereqs(t)
	data := filepath.Join(mastertest.TempDir(t), "data")
	m := mastertest.New(t, mastertest.Build(t), "--data-dir", data, "--resource-manager-slots", "4")
	m.Start()
	det := buildDet(t)
	admin := m.Login("admin")
	ann := newUser(t, m, admin, "ann", nil) // default ids: no account on the machine
	bo := newUser(t, m, admin, "bo", nil)
	annUID := m.TaskUIDBase + int(ann.user.ID)
	asAnn := detAs{det, m.URL, ann.token, t.TempDir()}
	asBo := detAs{det, m.URL, bo.token, t.TempDir()}
	asAdmin := detAs{det, m.URL, admin, t.TempDir()}

	shell := startTask(t, m, ann.token, "shells", resolute.CreateTaskRequest{Config: "resources: {slots: 0}\n"})
	boShell := startTask(t, m, bo.token, "shells", resolute.CreateTaskRequest{Config: "resources: {slots: 0}\n"})
	shell = waitTask(t, m, ann.token, "shells", shell.ID, func(k resolute.Task) bool { return k.Ready })
	waitTask(t, m, bo.token, "shells", boShell.ID, func(k resolute.Task) bool { return k.Ready })
	// Ready is the keep-alive running; sshd's own line follows it, later
	// on a loaded machine.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		log := taskLog(t, m, ann.token, shell.ID)
		if strings.Contains(log, "Server listening on 127.0.0.1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ann's sshd does not listen on loopback:\n%s", log)
		}
	}

	out, errOut, err := asAnn.run(t, "shell", "show-ssh-command", shell.ID)
	if err != nil {
		t.Fatalf("det shell show-ssh-command: %v\n%s", err, errOut)
	}
	sshCmd := strings.TrimSpace(out)
	if !strings.HasPrefix(sshCmd, "ssh ") || !strings.Contains(sshCmd, "shell ssh-proxy "+shell.ID) || !strings.Contains(sshCmd, "StrictHostKeyChecking=yes") {
		t.Fatalf("the ssh command: %s", sshCmd)
	}
	opts, dest := sshCmd[len("ssh "):strings.LastIndex(sshCmd, " ")], sshCmd[strings.LastIndex(sshCmd, " ")+1:]

	// A command, as ann's Unix user, with the task's environment.
	got, err := asAnn.sh(t, sshCmd+` 'echo "uid=$(id -u) task=$DET_TASK_ID"'`)
	if want := fmt.Sprintf("uid=%d task=%s", annUID, shell.ID); err != nil || !strings.Contains(got, want) {
		t.Fatalf("ssh ran %q (%v), want %q\n%s", got, err, want, taskLog(t, m, ann.token, shell.ID))
	}

	// det shell open --ssh runs the real client, with ssh's own options
	// and a command.
	if out, errOut, err := asAnn.run(t, "shell", "open", "--ssh", shell.ID, "--", "-o", "LogLevel=ERROR", "echo", "via-open-$((6*7))"); err != nil ||
		strings.TrimSpace(out) != "via-open-42" {
		t.Fatalf("det shell open --ssh: %q %q %v", out, errOut, err)
	}

	// scp both ways (SFTP, as OpenSSH 9's scp speaks).
	local := filepath.Join(t.TempDir(), "up.txt")
	payload := "sent-by-scp-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := os.WriteFile(local, []byte(payload), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := asAnn.sh(t, "scp "+opts+" "+local+" "+dest+":up.txt"); err != nil {
		t.Fatalf("scp to the shell: %v\n%s", err, got)
	}
	if got, err := asAnn.sh(t, sshCmd+` 'cat up.txt; echo; stat -c %u up.txt'`); err != nil || !strings.Contains(got, payload) || !strings.Contains(got, strconv.Itoa(annUID)) {
		t.Fatalf("the copied file in the shell: %q (%v)", got, err)
	}
	back := filepath.Join(t.TempDir(), "down.txt")
	if got, err := asAnn.sh(t, "scp "+opts+" "+dest+":up.txt "+back); err != nil {
		t.Fatalf("scp from the shell: %v\n%s", err, got)
	}
	if b, _ := os.ReadFile(back); string(b) != payload {
		t.Fatalf("scp brought back %q, want %q", b, payload)
	}

	// -L: a local port to a web server the session starts in the task.
	inner, outer := freeLocalPort(t), freeLocalPort(t)
	marker := "served-inside-" + shell.ID
	fwd := exec.Command("sh", "-c", fmt.Sprintf(`exec %s -L %d:127.0.0.1:%d 'mkdir -p www && cd www && echo %s > marker.txt && exec python3 -m http.server %d --bind 127.0.0.1'`,
		sshCmd, outer, inner, marker, inner))
	fwd.Env = asAnn.env()
	var fwdOut strings.Builder
	fwd.Stdout, fwd.Stderr = &fwdOut, &fwdOut
	fwd.WaitDelay = 5 * time.Second
	if err := fwd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fwd.Process.Kill(); fwd.Wait() })
	getUntil(t, fmt.Sprintf("http://127.0.0.1:%d/marker.txt", outer), marker, time.Minute)

	// Bo: no key of ann's shell, no tunnel into it; his own shell's key
	// does not open hers even through her tunnel. The administrator may
	// kill her shell but gets no key to it either.
	for who, d := range map[string]struct {
		as   detAs
		want string
	}{"bo": {asBo, "belongs to ann"}, "the administrator": {asAdmin, "only ann"}} {
		if out, errOut, err := d.as.run(t, "shell", "show-ssh-command", shell.ID); err == nil || !strings.Contains(errOut, d.want) {
			t.Errorf("%s got ann's SSH command: %q %q %v", who, out, errOut, err)
		}
	}
	if got, err := asBo.sh(t, sshCmd+` 'echo reached'`); err == nil || strings.Contains(got, "reached") {
		t.Errorf("bo reached ann's shell with her key through his own sign-in: %q", got)
	} else if !strings.Contains(got, "belongs to ann") {
		t.Errorf("bo's tunnel into ann's shell failed without the master's refusal: %s", got)
	}
	boCmd, errOut, err := asBo.run(t, "shell", "show-ssh-command", boShell.ID)
	if err != nil {
		t.Fatalf("bo's own ssh command: %v\n%s", err, errOut)
	}
	boKey := between(boCmd, "IdentityFile=", " ")
	annKey := between(sshCmd, "IdentityFile=", " ")
	if boKey == "" || annKey == "" {
		t.Fatalf("no IdentityFile in %q or %q", boCmd, sshCmd)
	}
	if got, err := asAnn.sh(t, strings.Replace(sshCmd, annKey, boKey, 1)+` 'echo reached'`); err == nil || strings.Contains(got, "reached") ||
		!strings.Contains(got, "Permission denied (publickey)") {
		t.Errorf("bo's key through ann's tunnel: %q (%v), want sshd's refusal", got, err)
	}
}

// between is what in s follows start, up to end (or the end of s).
func between(s, start, end string) string {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, end)
	return strings.Trim(v, "'")
}

// TestProxyPortsReachTheirTaskForItsOwnerOnly: a command's
// environment.proxy_ports are reached through the master with det task
// tunnel, by its owner; another user, and a port it does not list, are
// refused; unauthenticated ports are refused at submission, as are the
// container settings the local resource manager cannot apply.
func TestProxyPortsReachTheirTaskForItsOwnerOnly(t *testing.T) {
	sshPrereqs(t)
	data := filepath.Join(mastertest.TempDir(t), "data")
	m := mastertest.New(t, mastertest.Build(t), "--data-dir", data, "--resource-manager-slots", "4")
	m.Start()
	det := buildDet(t)
	admin := m.Login("admin")
	ann := newUser(t, m, admin, "ann", nil)
	bo := newUser(t, m, admin, "bo", nil)
	asAnn := detAs{det, m.URL, ann.token, t.TempDir()}
	asBo := detAs{det, m.URL, bo.token, t.TempDir()}

	for config, want := range map[string]string{
		"environment: {proxy_ports: [{proxy_port: 8080, proxy_tcp: true, unauthenticated: true}]}\n": "unauthenticated: true is not supported",
		"resources: {slots: 0, devices: ['/dev/fuse:/dev/fuse']}\n":                                  "resources.devices is not supported on the local resource manager: tasks run as processes",
		"resources: {slots: 0, shm_size: 4G}\n":                                                      "resources.shm_size is not supported on the local resource manager",
		"bind_mounts: [{host_path: /srv, container_path: /data}]\n":                                  "bind_mounts[0]: a container_path other than host_path (/srv at /data) is not supported on the local resource manager",
		"environment: {pod_spec: {spec: {hostNetwork: true}}}\n":                                     "environment.pod_spec is not supported on the local resource manager",
		"environment: {add_capabilities: [SYS_PTRACE]}\n":                                            "environment.add_capabilities is not supported on the local resource manager",
	} {
		var e resolute.ErrorResponse
		code := m.Call("POST", "/api/v1/commands", ann.token, resolute.CreateTaskRequest{Config: config, Entrypoint: []string{"true"}}, &e)
		if code != http.StatusBadRequest || !strings.Contains(e.Error.Message, want) {
			t.Errorf("%s: %d %q, want 400 saying %q", strings.TrimSpace(config), code, e.Error.Message, want)
		}
	}

	const experiment = "name: refused\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss, max_length: {batches: 1}}\n"
	for config, want := range map[string]string{
		"environment: {proxy_ports: [{proxy_port: 8080, proxy_tcp: true, unauthenticated: true}]}\n": "unauthenticated: true is not supported",
		"resources: {slots_per_trial: 0, shm_size: 4G}\n":                                            "resources.shm_size is not supported on the local resource manager",
		"environment: {drop_capabilities: [NET_RAW]}\n":                                              "environment.drop_capabilities is not supported on the local resource manager",
	} {
		var e resolute.ErrorResponse
		code := m.Call("POST", "/api/v1/experiments", ann.token, resolute.CreateExperimentRequest{
			ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: experiment + config}}, &e)
		if code != http.StatusBadRequest || !strings.Contains(e.Error.Message, want) {
			t.Errorf("an experiment with %s: %d %q, want 400 saying %q", strings.TrimSpace(config), code, e.Error.Message, want)
		}
	}

	port := freeLocalPort(t)
	marker := "proxied-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	cmd := startTask(t, m, ann.token, "commands", resolute.CreateTaskRequest{
		Config:     fmt.Sprintf("resources: {slots: 0}\nenvironment: {proxy_ports: [{proxy_port: %d, proxy_tcp: true}]}\n", port),
		Entrypoint: []string{"python3", "-m", "http.server", strconv.Itoa(port), "--bind", "127.0.0.1"},
		ContextTgz: packFiles(t, map[string]string{"marker.txt": marker})})
	waitTask(t, m, ann.token, "commands", cmd.ID, func(k resolute.Task) bool { return k.State == resolute.TaskRunning })

	local := freeLocalPort(t)
	tun := exec.Command(det, "task", "tunnel", cmd.ID, strconv.Itoa(port), "--listen", strconv.Itoa(local))
	tun.Env = asAnn.env()
	var tunOut strings.Builder
	tun.Stdout, tun.Stderr = &tunOut, &tunOut
	tun.WaitDelay = 5 * time.Second
	if err := tun.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tun.Process.Kill(); tun.Wait() })
	getUntil(t, fmt.Sprintf("http://127.0.0.1:%d/marker.txt", local), marker, time.Minute)

	if _, errOut, err := asBo.run(t, "task", "tunnel", cmd.ID, strconv.Itoa(port)); err == nil || !strings.Contains(errOut, "belongs to ann") {
		t.Errorf("bo's tunnel into ann's port: %v %q", err, errOut)
	}
	if _, errOut, err := asAnn.run(t, "task", "tunnel", cmd.ID, "22"); err == nil || !strings.Contains(errOut, "not one of its environment.proxy_ports") {
		t.Errorf("a port the command does not list: %v %q", err, errOut)
	}

	// A trial's port, of its experiment's proxy_ports, as trial-ID.
	trialPort := freeLocalPort(t)
	dir := t.TempDir()
	trialMarker := "trial-" + marker
	if err := os.WriteFile(filepath.Join(dir, "marker.txt"), []byte(trialMarker), 0o644); err != nil {
		t.Fatal(err)
	}
	exp := m.CreateExperiment(ann.token, fmt.Sprintf("name: serves\nentrypoint: python3 -m http.server %d --bind 127.0.0.1\n"+
		"searcher: {name: single, metric: loss, max_length: {batches: 1}}\nresources: {slots_per_trial: 0}\n"+
		"environment: {proxy_ports: [{proxy_port: %d, proxy_tcp: true}]}\n", trialPort, trialPort), dir)
	var trialID int64
	for deadline := time.Now().Add(2 * time.Minute); trialID == 0; time.Sleep(200 * time.Millisecond) {
		if trials := m.Trials(ann.token, exp); len(trials) > 0 && trials[0].State == resolute.StateActive {
			trialID = trials[0].ID
		} else if time.Now().After(deadline) {
			t.Fatalf("the experiment's trial does not run: %+v", trials)
		}
	}
	trialTask := resolute.TrialTaskID(trialID)
	if _, errOut, err := asBo.run(t, "task", "tunnel", trialTask, strconv.Itoa(trialPort)); err == nil || !strings.Contains(errOut, "belongs to ann") {
		t.Errorf("bo's tunnel into ann's trial: %v %q", err, errOut)
	}
	trialLocal := freeLocalPort(t)
	ttun := exec.Command(det, "task", "tunnel", trialTask, strconv.Itoa(trialPort), "--listen", strconv.Itoa(trialLocal))
	ttun.Env = asAnn.env()
	ttun.WaitDelay = 5 * time.Second
	if err := ttun.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ttun.Process.Kill(); ttun.Wait() })
	getUntil(t, fmt.Sprintf("http://127.0.0.1:%d/marker.txt", trialLocal), trialMarker, time.Minute)
	m.Call("POST", fmt.Sprintf("/api/v1/experiments/%d/kill", exp), ann.token, nil, nil)
}
