package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
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

// attackScript is what an attacker's command runs: it looks through /proc
// for other processes' environments (tokens), command lines and working
// directories, and tries the paths it is given (another user's work dir
// and home, the master's state and database). It prints one line per
// finding: ENVIRON pid uid (an environment it could read), CMDLINE text,
// CWD pid uid (a working directory of another uid it could enter), PATH
// path result, and ME uid gid groups home.
const attackScript = `import json, os, sys
me = os.getuid()
print("ME", me, os.getgid(), ",".join(str(g) for g in sorted(os.getgroups())) or "-", os.environ.get("HOME"), flush=True)
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
    try:
        with open("/proc/%s/status" % pid) as f:
            uid = int([l for l in f if l.startswith("Uid:")][0].split()[1])
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            print("CMDLINE", f.read().replace(b"\0", b" ").decode(errors="replace"), flush=True)
    except (OSError, IndexError):
        continue
    try:
        with open("/proc/%s/environ" % pid, "rb") as f:
            env = f.read().replace(b"\0", b" ").decode(errors="replace")
        print("ENVIRON", pid, uid, env, flush=True)
    except OSError:
        pass
    if uid != me:
        try:
            print("CWD", pid, uid, os.listdir("/proc/%s/cwd" % pid), flush=True)
        except OSError:
            pass
for path in json.loads(sys.argv[1]):
    try:
        if os.path.isdir(path):
            result = "listed " + " ".join(os.listdir(path))
        else:
            with open(path, errors="replace") as f:
                result = "read " + f.read(200)
    except PermissionError:
        result = "denied"
    except FileNotFoundError:
        result = "missing"
    except OSError as e:
        result = "error " + str(e)
    print("PATH", path, result.replace("\n", " "), flush=True)
`

// TestOneUsersTasksCannotReachAnothersNorTheMasters is the attack of issue
// 15 through the real master, as root: ann (linked to a Unix user) runs a
// notebook, bo (unlinked: task_uid_base + id) a command; each then runs a
// command that tries to read the other's tokens from /proc (environ and
// command lines), their work directory, home and process environment, and
// the master's state and database. None of it is readable.
func TestOneUsersTasksCannotReachAnothersNorTheMasters(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("tasks run as their owners' Unix users only under a master running as root; run this test as root (CI does)")
	}
	if _, err := postgres.BinDir(); err != nil {
		t.Skip(err)
	}
	if exec.Command("/usr/bin/python3", "-c", "import notebook").Run() != nil {
		t.Skip("Debian's jupyter-notebook is not installed (make test installs it)")
	}
	data := filepath.Join(mastertest.TempDir(t), "data")
	m := mastertest.New(t, mastertest.Build(t), "--data-dir", data, "--resource-manager-slots", "4")
	m.Start()
	admin := m.Login("admin")
	const annUID = 4242 // no account on the machine: the link alone names it
	ann := newUser(t, m, admin, "ann", &resolute.AgentUserGroup{UID: annUID, GID: annUID, User: "ann", Group: "ann"})
	bo := newUser(t, m, admin, "bo", nil)
	boUID := m.TaskUIDBase + int(bo.user.ID)

	// The victims: ann's notebook and bo's command, each with a secret file.
	annSecret, boSecret := "ann-secret-"+strconv.FormatInt(time.Now().UnixNano(), 36), "bo-secret-"+strconv.FormatInt(time.Now().UnixNano(), 36)
	notebook := startTask(t, m, ann.token, "notebooks", resolute.CreateTaskRequest{Config: "resources: {slots: 0}\n",
		ContextTgz: packFiles(t, map[string]string{"secret.txt": annSecret})})
	command := startTask(t, m, bo.token, "commands", resolute.CreateTaskRequest{Config: "resources: {slots: 0}\n",
		Entrypoint: []string{"sh", "-c", "exec sleep 3601"}, ContextTgz: packFiles(t, map[string]string{"secret.txt": boSecret})})
	notebook = waitTask(t, m, ann.token, "notebooks", notebook.ID, func(k resolute.Task) bool { return k.Ready })
	_, nbToken, _ := strings.Cut(notebook.ServiceURL, "?token=")
	if nbToken == "" {
		t.Fatalf("the notebook's owner got no token: %+v", notebook)
	}
	// Jupyter read its token from the environment: it answers on the task
	// origin with it, and not without.
	for token, want := range map[string]int{nbToken: 200, "wrong": 401} {
		resp, err := http.Get(m.TasksURL + "/proxy/" + notebook.ID + "/api/status?token=" + token)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("the notebook with token %q: %d, want %d", token, resp.StatusCode, want)
		}
	}

	// As root the test finds what an attacker is after: each victim's
	// allocation token, and the notebook's token, in their environments.
	annSecrets := map[string]string{"ann's file": annSecret, "the notebook's token": nbToken,
		"the allocation token of ann's notebook": tokenOf(t, notebook.ID+".1")}
	boSecrets := map[string]string{"bo's file": boSecret, "the allocation token of bo's command": tokenOf(t, command.ID+".1")}
	for pid, cmdline := range cmdlines(t) {
		for _, secrets := range []map[string]string{annSecrets, boSecrets} {
			for what, secret := range secrets {
				if strings.Contains(cmdline, secret) {
					t.Errorf("%s is on the command line of process %d: %s", what, pid, cmdline)
				}
			}
		}
	}

	// The attackers.
	targets := func(victimAlloc string, victimUID int) []string {
		return []string{
			filepath.Join(data, "work"),
			filepath.Join(data, "work", victimAlloc),
			filepath.Join(data, "work", victimAlloc, "secret.txt"),
			filepath.Join(data, "homes", strconv.Itoa(victimUID)),
			filepath.Join(data, "allocations"),
			filepath.Join(data, "allocations", victimAlloc, "state.json"),
			filepath.Join(data, "postgres"),
			filepath.Join(data, "postgres", "data", "PG_VERSION"),
		}
	}
	for _, a := range []struct {
		name, token        string
		uid, victimUID     int
		victim, victimTask string
		secrets            map[string]string
	}{
		{"ann, linked, attacks bo's command", ann.token, annUID, boUID, command.ID + ".1", "sleep 3601", boSecrets},
		{"bo, unlinked, attacks ann's notebook", bo.token, boUID, annUID, notebook.ID + ".1", "-m notebook", annSecrets},
	} {
		t.Run(a.name, func(t *testing.T) {
			paths, _ := json.Marshal(targets(a.victim, a.victimUID))
			task := startTask(t, m, a.token, "commands", resolute.CreateTaskRequest{Config: "resources: {slots: 0}\n",
				Entrypoint: []string{"python3", "attack.py", string(paths)}, ContextTgz: packFiles(t, map[string]string{"attack.py": attackScript})})
			task = waitTask(t, m, a.token, "commands", task.ID, func(k resolute.Task) bool { return k.State == resolute.TaskTerminated })
			log := taskLog(t, m, a.token, task.ID)
			if task.ExitCode == nil || *task.ExitCode != 0 {
				t.Fatalf("the attack did not run to its end: %+v\n%s", task, log)
			}
			for what, secret := range a.secrets {
				if strings.Contains(log, secret) {
					t.Errorf("the attacker found %s", what)
				}
			}
			sawVictim, readOwn := false, false
			sc := bufio.NewScanner(strings.NewReader(log))
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				switch {
				case len(f) == 0:
				case f[0] == "ME":
					// No supplementary groups: not the master's.
					if want := fmt.Sprintf("ME %d %d - %s", a.uid, a.uid, filepath.Join(data, "homes", strconv.Itoa(a.uid))); sc.Text() != want {
						t.Errorf("the attacker runs as %q, want %q", sc.Text(), want)
					}
				case f[0] == "CMDLINE":
					sawVictim = sawVictim || strings.Contains(sc.Text(), a.victimTask)
				case f[0] == "ENVIRON" && len(f) > 2:
					if f[2] != strconv.Itoa(a.uid) {
						t.Errorf("the attacker read the environment of process %s of uid %s", f[1], f[2])
					} else {
						readOwn = true
					}
				case f[0] == "CWD":
					t.Errorf("the attacker entered another uid's working directory: %s", sc.Text())
				case f[0] == "PATH" && len(f) > 2:
					if f[2] != "denied" {
						t.Errorf("the attacker reached %s: %s", f[1], strings.Join(f[2:], " "))
					}
				}
			}
			if !sawVictim || !readOwn {
				t.Fatalf("the attack looked in the wrong place (saw the victim's process: %v, read its own environment: %v):\n%s",
					sawVictim, readOwn, log)
			}
		})
	}
}

// signedIn is a signed-in user of a test master.
type signedIn struct {
	user  resolute.User
	token string
}

// newUser has the administrator create (and link, when g is set) a user,
// who signs in.
func newUser(t *testing.T, m *mastertest.Master, admin, name string, g *resolute.AgentUserGroup) signedIn {
	t.Helper()
	const password = "a password long enough for anyone"
	var u resolute.UserResponse
	if code := m.Call("POST", "/api/v1/users", admin, resolute.CreateUserRequest{User: resolute.UserSpec{Username: name}, Password: password}, &u); code != 200 {
		t.Fatalf("create %s: %d", name, code)
	}
	if g != nil {
		if code := m.Call("PATCH", "/api/v1/users/"+strconv.FormatInt(u.User.ID, 10), admin, resolute.PatchUserRequest{AgentUserGroup: g}, &u); code != 200 {
			t.Fatalf("link %s: %d", name, code)
		}
	}
	var login resolute.LoginResponse
	if code := m.Call("POST", "/api/v1/auth/login", "", resolute.LoginRequest{Username: name, Password: password}, &login); code != 200 {
		t.Fatalf("%s signs in: %d", name, code)
	}
	return signedIn{user: u.User, token: login.Token}
}

func startTask(t *testing.T, m *mastertest.Master, token, kind string, req resolute.CreateTaskRequest) resolute.Task {
	t.Helper()
	var tr resolute.TaskResponse
	if code := m.Call("POST", "/api/v1/"+kind, token, req, &tr); code != 200 {
		t.Fatalf("start a %s: %d\n%s", kind, code, m.Output())
	}
	return tr.Task
}

// waitTask polls a task until ok holds, or fails when it ends first.
func waitTask(t *testing.T, m *mastertest.Master, token, kind, id string, ok func(resolute.Task) bool) resolute.Task {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var tr resolute.TaskResponse
		m.Call("GET", "/api/v1/"+kind+"/"+id, token, nil, &tr)
		if ok(tr.Task) {
			return tr.Task
		}
		if tr.Task.State == resolute.TaskTerminated || time.Now().After(deadline) {
			t.Fatalf("task %s: %+v\n%s", id, tr.Task, taskLog(t, m, token, id))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// taskLog is a task's log, one line per line.
func taskLog(t *testing.T, m *mastertest.Master, token, id string) string {
	t.Helper()
	body := m.Get("/api/v1/tasks/"+id+"/logs", token)
	var out strings.Builder
	dec := json.NewDecoder(strings.NewReader(body))
	for {
		var l struct{ Result resolute.TaskLog }
		if dec.Decode(&l) != nil {
			break
		}
		out.WriteString(l.Result.Log + "\n")
	}
	return out.String()
}

// packFiles is a context archive of files.
func packFiles(t *testing.T, files map[string]string) []byte {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return mastertest.PackDir(t, dir)
}

// tokenOf finds, as root, the allocation token in the environment of the
// allocation's processes.
func tokenOf(t *testing.T, allocationID string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		pids, _ := filepath.Glob("/proc/[0-9]*/environ")
		for _, p := range pids {
			env, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			vars := map[string]string{}
			for _, kv := range strings.Split(string(env), "\x00") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					vars[k] = v
				}
			}
			if vars["DET_ALLOCATION_ID"] == allocationID && vars["DET_SESSION_TOKEN"] != "" {
				return vars["DET_SESSION_TOKEN"]
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no process of %s holds an allocation token", allocationID)
	return ""
}

// cmdlines are the command lines of every process.
func cmdlines(t *testing.T) map[int]string {
	t.Helper()
	out := map[int]string{}
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		out[pid] = string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
	}
	return out
}
