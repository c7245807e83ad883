package control

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/expconf"
)

// SSH into shells, as Determined's: each shell is created with a key pair
// for its owner and a host key, and runs Debian's OpenSSH sshd as its own
// Unix user (no root) on a port of its own, with that host key and the
// owner's public key as its only authorized key. Nobody reaches the port
// but through the master: `det shell ssh-proxy` (ssh's ProxyCommand) opens
// the master's signed-in websocket GET /api/v1/tasks/{id}/tunnel, which
// Tasks.Tunnel lets through to the shell's owner alone; the same tunnel
// reaches the ports a task's environment.proxy_ports lists.

// sshDir is where in a shell's work directory its sshd's files are.
const sshDir = ".resolute-ssh"

// newSSHKeys makes a shell's keys: the owner's and the sshd's host key,
// both ed25519, the private halves in OpenSSH's format.
func newSSHKeys(taskID, login string) (resolute.TaskSSHKeys, error) {
	k := resolute.TaskSSHKeys{TaskID: taskID, Login: login}
	var err error
	if k.PrivateKey, k.PublicKey, err = ed25519Pair("resolute " + taskID); err != nil {
		return k, err
	}
	k.HostPrivateKey, k.HostPublicKey, err = ed25519Pair("resolute host " + taskID)
	return k, err
}

func ed25519Pair(comment string) (private, public string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	block, err := ssh.MarshalPrivateKey(priv, comment)
	if err != nil {
		return "", "", err
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return "", "", err
	}
	return string(pem.EncodeToMemory(block)), strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))), nil
}

// SSHKeys returns a shell's keys to its owner, and to no one else: the
// private key is their credential, as their session is, not an
// administrator's to use.
func (x *Tasks) SSHKeys(ctx context.Context, a authz.Actor, id string) (resolute.TaskSSHKeys, error) {
	t, err := x.c.db.Task(ctx, id)
	if err != nil {
		return resolute.TaskSSHKeys{}, err
	}
	if err := ownTask(a, t); err != nil {
		return resolute.TaskSSHKeys{}, err
	}
	if t.Type != resolute.TaskShell {
		return resolute.TaskSSHKeys{}, resolute.Errorf(resolute.ENotFound, "%s is not a shell: only shells serve SSH", id)
	}
	k, err := x.c.db.TaskSSHKeys(ctx, id)
	if resolute.ErrorCode(err) == resolute.ENotFound {
		return k, resolute.Errorf(resolute.ENotFound, "shell %s has no SSH keys: it was started before shells served SSH", id)
	}
	return k, err
}

// ownTask lets the task's owner through: one who may open it (authz: under
// RBAC a shell needs an Editor's role in its workspace, EditorRestricted
// opens none) and is its owner. Administrators may kill others' tasks but
// not use their keys or reach their ports.
func ownTask(a authz.Actor, t resolute.Task) error {
	if err := authz.Can(a, authz.OpenTask, authz.Task(t)); err != nil {
		return err
	}
	if a.UserID() != t.UserID {
		return resolute.Errorf(resolute.EForbidden, "only %s, who started %s, may reach it over SSH or its proxy ports", t.Username, t.ID)
	}
	return nil
}

// Tunnel says where the master connects a tunnel into task id: port 0 is a
// shell's sshd; any other must be one of the task's proxy_ports. Only the
// task's owner gets through, and only while it runs.
func (x *Tasks) Tunnel(ctx context.Context, a authz.Actor, id string, port int) (string, error) {
	if n, ok := strings.CutPrefix(id, "trial-"); ok {
		trialID, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return "", resolute.Errorf(resolute.ENotFound, "task %s not found", id)
		}
		return x.trialTunnel(ctx, a, trialID, port)
	}
	t, err := x.c.db.Task(ctx, id)
	if err != nil {
		return "", err
	}
	if err := ownTask(a, t); err != nil {
		return "", err
	}
	if t.State == resolute.TaskTerminated || t.State == resolute.TaskTerminating {
		return "", resolute.Errorf(resolute.EGone, "%s has ended", id)
	}
	host, err := x.c.taskHost(t.ServiceHost, id)
	if err != nil {
		return "", err
	}
	if port == 0 {
		if t.Type != resolute.TaskShell {
			return "", resolute.Errorf(resolute.EInvalid, "port: required: %s is not a shell", id)
		}
		if t.ServicePort == nil || !t.Ready {
			return "", resolute.Errorf(resolute.EConflict, "shell %s is not running yet (%s)", id, t.State)
		}
		return net.JoinHostPort(host, strconv.Itoa(*t.ServicePort)), nil
	}
	cfg, err := expconf.ParseTask(t.Config, strings.ToLower(t.Type))
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(cfg.Environment.ProxyPorts, func(pp expconf.ProxyPort) bool { return pp.Port == port }) {
		return "", resolute.Errorf(resolute.EForbidden, "port %d of %s is not one of its environment.proxy_ports", port, id)
	}
	if t.State != resolute.TaskRunning {
		return "", resolute.Errorf(resolute.EConflict, "%s is not running yet (%s)", id, t.State)
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// trialTunnel says where a tunnel into trial id's running allocation goes:
// one of its experiment's proxy_ports, for the experiment's owner alone.
func (x *Tasks) trialTunnel(ctx context.Context, a authz.Actor, id int64, port int) (string, error) {
	t, err := x.c.db.Trial(ctx, id)
	if err != nil {
		return "", err
	}
	e, err := x.c.db.Experiment(ctx, t.ExperimentID)
	if err != nil {
		return "", err
	}
	if err := authz.Can(a, authz.ChangeExperiment, authz.Experiment(e)); err != nil {
		return "", err
	}
	if a.UserID() != e.UserID {
		return "", resolute.Errorf(resolute.EForbidden, "only %s, who started experiment %d, may reach its trials' proxy ports", e.Username, e.ID)
	}
	if port == 0 {
		return "", resolute.Errorf(resolute.EInvalid, "port: required: a trial serves no SSH")
	}
	cfg, err := expconf.ParseExperiment(e.Config)
	if err != nil {
		return "", err
	}
	if !slices.ContainsFunc(cfg.Environment.ProxyPorts, func(pp expconf.ProxyPort) bool { return pp.Port == port }) {
		return "", resolute.Errorf(resolute.EForbidden, "port %d of trial %d is not one of its experiment's environment.proxy_ports", port, id)
	}
	_, addr, err := x.c.db.RunningTrialAllocation(ctx, id)
	if resolute.ErrorCode(err) == resolute.ENotFound {
		return "", resolute.Errorf(resolute.EConflict, "trial %d is not running", id)
	}
	if err != nil {
		return "", err
	}
	if addr, err = x.c.taskHost(addr, fmt.Sprintf("trial %d", id)); err != nil {
		return "", err
	}
	return net.JoinHostPort(addr, strconv.Itoa(port)), nil
}

// taskHost is where the master reaches a task that the resource manager
// reported at addr: there, or, where tasks run on the master's own machine
// (a loopback ListenAddr), its loopback. Elsewhere (pods) a task whose
// address is not known yet is not reached at all: the master's own
// loopback is no task's.
func (c *core) taskHost(addr, what string) (string, error) {
	if addr != "" {
		return addr, nil
	}
	if ip := net.ParseIP(c.rm.ListenAddr()); ip != nil && ip.IsLoopback() {
		return "127.0.0.1", nil
	}
	return "", resolute.Errorf(resolute.EConflict, "%s is not running yet: its address is not known", what)
}

// sshdConfig is the sshd's configuration: keys only, as the shell's own
// user (so no PAM, no privilege separation to another user), forwarding
// and SFTP (scp, VS Code) allowed. The paths are given on sshd's command
// line, where the work directory is known.
const sshdConfig = `# Written by Resolute for this shell's sshd; see README, "SSH into shells".
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
StrictModes no
AllowTcpForwarding yes
AllowStreamLocalForwarding yes
X11Forwarding no
PermitTTY yes
PrintMotd no
ClientAliveInterval 60
Subsystem sftp internal-sftp
`

// sshdScript is a shell's keep-alive process: it starts sshd, when there is
// one, on RESOLUTE_SSH_LISTEN, waits until it listens, says the shell is
// ready and sleeps. The sshd's sessions get the task's DET_* variables.
// A Unix user without an account (the default ids of an unlinked owner)
// gets one in nss_wrapper's files, for sshd to find its login.
const sshdScript = `d="$PWD/` + sshDir + `"
sshd=/usr/sbin/sshd
wrap=
if [ ! -x "$sshd" ]; then
  echo "ssh: this shell serves no SSH: $sshd is missing (Debian's openssh-server); its terminals work as before"
  sshd=
elif [ "$(getent passwd "$RESOLUTE_SSH_LOGIN" 2>/dev/null | cut -d: -f3)" != "$(id -u)" ]; then
  nss=$(ls /usr/lib/*/libnss_wrapper.so /usr/lib64/libnss_wrapper.so /usr/lib/libnss_wrapper.so 2>/dev/null | head -n 1)
  if [ -z "$nss" ]; then
    echo "ssh: this shell serves no SSH: uid $(id -u) has no account named $RESOLUTE_SSH_LOGIN and libnss_wrapper.so (Debian's libnss-wrapper) is missing"
    sshd=
  else
    login_shell=/bin/sh; [ -x /bin/bash ] && login_shell=/bin/bash
    # The login first (the first match wins), then the image's own accounts
    # (sshd as root wants its privilege separation user).
    { printf '%s:x:%s:%s::%s:%s\n' "$RESOLUTE_SSH_LOGIN" "$(id -u)" "$(id -g)" "${HOME:-$PWD}" "$login_shell"; cat /etc/passwd 2>/dev/null; } > "$d/passwd"
    { printf '%s:x:%s:\n' "$RESOLUTE_SSH_LOGIN" "$(id -g)"; cat /etc/group 2>/dev/null; } > "$d/group"
    wrap="LD_PRELOAD=$nss NSS_WRAPPER_PASSWD=$d/passwd NSS_WRAPPER_GROUP=$d/group"
  fi
fi
if [ -n "$sshd" ]; then
  # One SetEnv line: sshd keeps the first only.
  env | while IFS= read -r kv; do
    case "$kv" in
      *'"'*|*'\'*) ;;
      DET_*=*|PYTHONPATH=*|CUDA_VISIBLE_DEVICES=*|NVIDIA_VISIBLE_DEVICES=*) printf ' "%s"' "$kv" ;;
    esac
  done > "$d/setenv"
  [ -s "$d/setenv" ] && { printf 'SetEnv'; cat "$d/setenv"; echo; } >> "$d/sshd_config"
  [ "$(id -u)" = 0 ] && mkdir -p /run/sshd # as root (an image's user in a pod), sshd wants it
  rm -f "$d/sshd.pid"
  chmod 600 "$d/host_key" # sshd refuses a host key others may read
  env $wrap "$sshd" -D -e -f "$d/sshd_config" -o "HostKey=$d/host_key" -o "AuthorizedKeysFile=$d/authorized_keys" \
    -o "PidFile=$d/sshd.pid" -o "ListenAddress=$RESOLUTE_SSH_LISTEN" &
  i=0
  while [ ! -s "$d/sshd.pid" ] && kill -0 $! 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  [ -s "$d/sshd.pid" ] || echo "ssh: sshd did not start; this shell's terminals work as before"
fi
echo 'shell ready'
while :; do sleep 3600; done`

// shellSSH fills a shell's launch with its sshd: its files, its port (the
// task's service port) and the keep-alive script that runs it. A shell
// created before shells served SSH has no keys and runs without.
func (x *Tasks) shellSSH(ctx context.Context, t resolute.Task, spec *resolute.LaunchSpec) error {
	keys, err := x.c.db.TaskSSHKeys(ctx, t.ID)
	if resolute.ErrorCode(err) == resolute.ENotFound {
		spec.Shell = "echo 'shell ready'; while :; do sleep 3600; done"
		return nil
	}
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	if err := x.c.db.SetTaskService(ctx, t.ID, port); err != nil {
		return err
	}
	if spec.Files == nil {
		spec.Files = map[string][]byte{}
	}
	spec.Files[sshDir+"/sshd_config"] = []byte(sshdConfig)
	spec.Files[sshDir+"/host_key"] = []byte(keys.HostPrivateKey)
	spec.Files[sshDir+"/authorized_keys"] = []byte(keys.PublicKey + "\n")
	spec.Env["RESOLUTE_SSH_LOGIN"] = keys.Login
	spec.Env["RESOLUTE_SSH_LISTEN"] = net.JoinHostPort(x.c.rm.ListenAddr(), strconv.Itoa(port))
	spec.Shell = sshdScript
	return nil
}

// shellKeys makes a new shell's keys, for the login its owner's tasks run
// as in the project's workspace.
func (x *Tasks) shellKeys(ctx context.Context, a authz.Actor, projectID int64) (resolute.TaskSSHKeys, error) {
	ws, err := x.c.workspaceSettingsOf(ctx, projectID)
	if err != nil {
		return resolute.TaskSSHKeys{}, err
	}
	u, err := x.c.taskUser(ctx, a.UserID(), ws)
	if err != nil {
		return resolute.TaskSSHKeys{}, err
	}
	k, err := newSSHKeys("", u.User)
	if err != nil {
		return k, fmt.Errorf("make the shell's SSH keys: %w", err)
	}
	return k, nil
}
