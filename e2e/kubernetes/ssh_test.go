package kubernetes_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
)

// TestSSHIntoAShellPodThroughTheMaster: a shell's pod runs sshd on the
// pod's IP, and the ssh command det prints reaches it through the master's
// tunnel, with the shell's environment.
func TestSSHIntoAShellPodThroughTheMaster(t *testing.T) {
	for _, p := range []string{"/usr/sbin/sshd", "/usr/bin/ssh"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s is missing: apt-get install openssh-server openssh-client (make test installs them)", p)
		}
	}
	k := newCluster(t)
	var shell resolute.TaskResponse
	if code := k.m.Call("POST", "/api/v1/shells", k.token, map[string]any{}, &shell); code != 200 {
		t.Fatalf("start shell: %d", code)
	}
	task := k.waitTask(shell.Task.ID, func(t resolute.Task) bool { return t.Ready || t.State == resolute.TaskTerminated })
	if !task.Ready {
		t.Fatalf("the shell never became ready: %+v\n%s", task, k.m.Output())
	}

	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	det := filepath.Join(t.TempDir(), "det")
	if b, err := exec.Command(goBin, "build", "-o", det, "github.com/resolute-ml/resolute/cmd/det").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/det: %v\n%s", err, b)
	}
	home := t.TempDir()
	env := append(os.Environ(), "DET_MASTER="+k.m.URL, "DET_USER_TOKEN="+k.token, "XDG_CONFIG_HOME="+home, "HOME="+home)
	show := exec.Command(det, "shell", "show-ssh-command", shell.Task.ID)
	show.Env = env
	out, err := show.Output()
	if err != nil {
		t.Fatalf("det shell show-ssh-command: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ssh := exec.CommandContext(ctx, "sh", "-c", strings.TrimSpace(string(out))+` 'echo "in task=$DET_TASK_ID pod=$DET_KUBERNETES_POD_IP"'`)
	ssh.Env = env
	ssh.WaitDelay = 5 * time.Second
	got, err := ssh.CombinedOutput()
	if err != nil || !strings.Contains(string(got), "in task="+shell.Task.ID+" pod=") {
		logs := k.m.Get("/api/v1/tasks/"+shell.Task.ID+"/logs", k.token)
		t.Fatalf("ssh into the shell's pod: %v\n%s\nthe shell's log:\n%s", err, got, logs)
	}
}
