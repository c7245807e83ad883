package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/resolute-ml/resolute"
)

// AllocationSpec is what Launch runs: the resource-manager seam's LaunchSpec.
type AllocationSpec = resolute.LaunchSpec

// allocation is one launched or adopted allocation.
type allocation struct {
	id, taskID string
	slots      []int
	dir        string // its directory in the state dir
	workDir    string
	env        []string
	cred       *taskCred // what its processes run as; nil: the master's user. Set under Manager.mu.
	adopted    bool
	notes      []string      // lines of the manager's own, sent after Started
	exited     chan struct{} // closed once the leader has exited
	tails      sync.WaitGroup

	// Set while starting, under both a.mu and Manager.mu; read under either.
	pid, pgid  int
	startTicks uint64
	startedAt  time.Time

	// ended is guarded by Manager.mu; so is ending, set once finish
	// sweeps its uid: it no longer counts as running as it.
	ended, ending bool

	// mu is held by Launch until the process has started.
	mu       sync.Mutex
	killed   bool
	gone     bool // the leader has exited
	sessions map[*Stream]struct{}
}

var allocationIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$`)

func validateSpec(s AllocationSpec) error {
	if !allocationIDPattern.MatchString(s.AllocationID) {
		return resolute.Errorf(resolute.EInvalid, "allocation ID %q must be letters, digits, '.', '_' or '-'", s.AllocationID)
	}
	if !filepath.IsAbs(s.WorkDir) {
		return resolute.Errorf(resolute.EInvalid, "work dir %q must be an absolute path", s.WorkDir)
	}
	if (s.Shell == "") == (len(s.Entrypoint) == 0) {
		return resolute.Errorf(resolute.EInvalid, "exactly one of a shell command and an entrypoint is required")
	}
	if len(s.Entrypoint) > 0 && s.Entrypoint[0] == "" {
		return resolute.Errorf(resolute.EInvalid, "the entrypoint's program is empty")
	}
	for k, v := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
			return resolute.Errorf(resolute.EInvalid, "environment variable %q is not valid", k)
		}
	}
	for name := range s.Files {
		if err := checkRelPath(name); err != nil {
			return err
		}
	}
	return nil
}

// Launch prepares the allocation's work directory and starts its process as
// a new process group. It returns once the process has started (Started is
// queued) or failed to (nothing is queued then); the slots must be free, else
// it fails with conflict.
func (m *Manager) Launch(ctx context.Context, spec AllocationSpec) error {
	if err := validateSpec(spec); err != nil {
		return err
	}
	a := &allocation{
		id: spec.AllocationID, taskID: spec.TaskID, slots: append([]int(nil), spec.Slots...),
		dir: filepath.Join(m.opts.StateDir, spec.AllocationID), workDir: filepath.Clean(spec.WorkDir),
		exited: make(chan struct{}), sessions: make(map[*Stream]struct{}),
	}
	if spec.Image != "" && spec.TaskType == "TRIAL" {
		a.notes = append(a.notes, fmt.Sprintf("the local resource manager runs tasks without containers: environment.image %q is recorded but not used", spec.Image))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := m.reserve(a); err != nil {
		return err
	}
	cmd, exitFile, err := m.prepare(ctx, a, spec)
	if err == nil {
		err = m.start(a, cmd, exitFile)
	}
	if err != nil {
		m.release(a, true)
		_ = os.RemoveAll(a.dir)
		m.removeWorkDir(a.workDir)
		return err
	}
	return nil
}

// removeWorkDir removes an allocation's work directory once nothing runs in
// it, unless the manager keeps them. Its output is not there: the master
// has it in its database.
func (m *Manager) removeWorkDir(dir string) {
	if m.opts.KeepWorkDirs || dir == "" {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		m.log.Warn("cannot remove an ended allocation's work directory", "dir", dir, "error", err)
	}
}

// freshWorkDir makes dir anew: empty, the master's, mode 0700, for prepare
// to fill and giveTree to hand over while no task's user can enter it. One
// already there (kept by KeepWorkDirs, or left by a launch of the same
// allocation that a crash cut short) is its task user's, who may have
// filled it with links for the master to write or chown through: it is
// removed (os.RemoveAll unlinks links, never follows them), not reused, and
// Mkdir, which fails on anything in its way, makes the new one.
func (m *Manager) freshWorkDir(dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		m.log.Info("removing the work directory an earlier launch of this allocation left", "dir", dir)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	return os.Mkdir(dir, 0o700)
}

// prepare fills the work dir and hands it to the task's user, opens the
// exit file and builds the command.
func (m *Manager) prepare(ctx context.Context, a *allocation, spec AllocationSpec) (*exec.Cmd, *os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	cred, note, err := m.credFor(spec)
	if err != nil {
		return nil, nil, err
	}
	m.sweepMu.Lock() // a sweep of the uid ends before its process starts
	m.mu.Lock()
	a.cred = cred
	m.mu.Unlock()
	m.sweepMu.Unlock()
	if note != "" {
		a.notes = append(a.notes, note)
	}
	parents := os.FileMode(0o700)
	if cred != nil { // the task's user must pass through the parents we make
		parents = 0o711
	}
	if err := os.MkdirAll(filepath.Dir(a.workDir), parents); err != nil {
		return nil, nil, fmt.Errorf("launch %s: create work dir: %w", a.id, err)
	}
	if err := m.freshWorkDir(a.workDir); err != nil {
		return nil, nil, fmt.Errorf("launch %s: create work dir: %w", a.id, err)
	}
	if err := fillWorkDir(ctx, a.workDir, spec.Context, spec.Files); err != nil {
		return nil, nil, fmt.Errorf("launch %s: %w", a.id, err)
	}
	if err := giveTree(a.workDir, cred); err != nil {
		return nil, nil, fmt.Errorf("launch %s: give the work dir to uid %d: %w", a.id, cred.UID, err)
	}
	a.env = m.taskEnv(a, spec)
	hook := spec.StartupHook && hasStartupHook(a.workDir)
	argv, path := []string{"sh", "-c", spec.Shell}, "/bin/sh"
	if spec.Shell == "" {
		argv = spec.Entrypoint
		// After a startup hook, sh looks the program up: the hook may
		// install it, or change PATH, as it may in Determined.
		if !hook {
			if path, err = lookPath(argv[0], a.env, a.workDir); err != nil {
				return nil, nil, err
			}
		}
	}
	if hook {
		argv, path = resolute.WithStartupHook(argv), "/bin/sh"
	}
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("launch %s: create state dir: %w", a.id, err)
	}
	exitFile, err := os.OpenFile(filepath.Join(a.dir, exitFileName), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("launch %s: open exit file: %w", a.id, err)
	}
	path, argv = recordExit(path, argv)
	return &exec.Cmd{
		Path: path, Args: argv, Dir: a.workDir, Env: a.env, ExtraFiles: []*os.File{exitFile},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Credential: cred.sysCred()},
	}, exitFile, nil
}

// hasStartupHook says whether a work directory's context put something
// named startup-hook.sh at its top. Whether it is a file the task's user
// can read is for the task's own shell to find out (as that user), not for
// the master, which would follow a link the user made.
func hasStartupHook(workDir string) bool {
	_, err := os.Lstat(filepath.Join(workDir, resolute.StartupHookFile))
	return err == nil
}

// exitFileName holds an allocation's exit status, written by the task's own
// leader process, so a master that was not running when the task ended still
// learns how it ended.
const exitFileName = "exit"

// recordExit wraps a command in a shell that runs it, writes its exit status
// to its descriptor 3 (the exit file, which the master opens: the file lies
// in the master's state directory, which the task's user cannot enter) and
// exits with it. The command itself runs without descriptor 3. The shell's
// no-op trap lets the group's SIGTERM reach the command (handled signals are
// reset on exec) while the shell itself lives on to record the status; a
// command killed by a signal makes the shell die of the same signal, so the
// exit reads the same.
func recordExit(path string, argv []string) (string, []string) {
	script := `trap : TERM INT HUP; "$@" 3>&-; c=$?; echo "$c" >&3; ` +
		`if [ "$c" -gt 128 ]; then trap - TERM INT HUP; kill -$((c - 128)) $$; fi; exit "$c"`
	return "/bin/sh", append([]string{"sh", "-c", script, "sh", path}, argv[1:]...)
}

// readExit returns the exit status an allocation's leader recorded.
func readExit(dir string) (int, bool) {
	b, err := os.ReadFile(filepath.Join(dir, exitFileName))
	if err != nil {
		return 0, false
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return code, err == nil
}

// start runs cmd with its output going to files in a.dir, then records the
// state file and starts the tailers and the waiter.
func (m *Manager) start(a *allocation, cmd *exec.Cmd, exitFile *os.File) error {
	defer exitFile.Close() // the child has its own copy
	outs := make([]*os.File, 2)
	for i, name := range []string{Stdout, Stderr} {
		f, err := os.OpenFile(filepath.Join(a.dir, name), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
		if err != nil {
			closeAll(outs)
			return fmt.Errorf("launch %s: open %s: %w", a.id, name, err)
		}
		outs[i] = f
	}
	cmd.Stdout, cmd.Stderr = outs[0], outs[1]
	err := cmd.Start()
	closeAll(outs) // the child has its own copies
	if err != nil {
		return resolute.Errorf(resolute.EInvalid, "start %s: %v", a.id, err)
	}
	pid := cmd.Process.Pid
	st, _ := readProcStat(pid) // the child exists until we reap it
	m.mu.Lock()
	a.pid, a.pgid, a.startTicks, a.startedAt = pid, pid, st.startTicks, time.Now()
	m.mu.Unlock()
	if err := writeState(a); err != nil {
		// The task runs; only adoption after a restart is lost.
		m.log.Warn("cannot write allocation state; it cannot be recovered after a restart", "allocation", a.id, "error", err)
	}
	m.events.push(Started{AllocationID: a.id, PID: pid, Addr: loopback, Time: a.startedAt})
	for _, note := range a.notes { // queued at once, as Started
		m.events.add(Log{AllocationID: a.id, Time: a.startedAt, Stream: Stdout, Level: "INFO", Line: note, Message: note,
			Agent: AgentName, Container: a.id}, false)
	}
	m.startTailers(a, 0, 0)
	go m.wait(a, cmd)
	return nil
}

// wait reaps the leader and finishes the allocation.
func (m *Manager) wait(a *allocation, cmd *exec.Cmd) {
	err := cmd.Wait()
	ex := Exited{AllocationID: a.id, ExitCode: -1}
	if cmd.ProcessState == nil {
		ex.Err = err // waiting failed; the status is lost
	} else if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		ex.ExitCode = ws.ExitStatus()
		if ws.Signaled() {
			ex.Signal = ws.Signal()
			ex.ExitCode = 128 + int(ws.Signal())
		}
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		ex.Err = err
	}
	m.finish(a, ex)
}

// finish kills what is left of the allocation, waits for its output to be
// delivered, frees its slots and queues Exited.
func (m *Manager) finish(a *allocation, ex Exited) {
	// Like a container whose init ended: nothing of the task outlives it
	// (but what a linked user's task detaches from its group; strays.go).
	_ = signalGroup(a.pgid, syscall.SIGKILL)
	a.mu.Lock()
	a.gone = true
	ex.Killed = a.killed
	sessions := make([]*Stream, 0, len(a.sessions))
	for s := range a.sessions {
		sessions = append(sessions, s)
	}
	a.mu.Unlock()
	close(a.exited)
	for _, s := range sessions {
		s.kill()
	}
	m.sweepAfter(a) // before its state goes: a restart cut short here sweeps again
	a.tails.Wait()
	m.release(a, false)
	_ = os.RemoveAll(a.dir)
	m.removeWorkDir(a.workDir)
	ex.Time = time.Now()
	m.events.push(ex)
}

// taskEnv builds the task's environment: base, then who the task runs as
// (HOME, USER, LOGNAME), then spec.Env, then the manager's own variables
// (the task Python's unless spec.Env names it).
func (m *Manager) taskEnv(a *allocation, spec AllocationSpec) []string {
	vars := make(map[string]string)
	for _, kv := range m.baseEnv {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	for k, v := range a.cred.identityEnv() { // not the master's HOME and USER
		vars[k] = v
	}
	for k, v := range spec.Env {
		vars[k] = v
	}
	m.mu.Lock()
	var gpus []string
	for _, id := range a.slots {
		if m.slots[id].Type == SlotCUDA {
			gpus = append(gpus, strconv.Itoa(m.slots[id].DeviceIndex))
		}
	}
	m.mu.Unlock()
	if len(gpus) > 0 {
		vars["CUDA_VISIBLE_DEVICES"] = strings.Join(gpus, ",")
		// NVML indices follow the PCI bus; make CUDA count the same way.
		vars["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
		delete(vars, "NVIDIA_VISIBLE_DEVICES")
	} else {
		vars["CUDA_VISIBLE_DEVICES"] = ""
		vars["NVIDIA_VISIBLE_DEVICES"] = "void"
	}
	ids := make([]string, len(a.slots))
	for i, id := range a.slots {
		ids[i] = strconv.Itoa(id)
	}
	vars["DET_SLOT_IDS"] = "[" + strings.Join(ids, ",") + "]"
	vars["DET_AGENT_ID"] = m.opts.AgentID
	vars["DET_RESOURCES_TYPE"] = "process"
	if _, set := spec.Env["DET_PYTHON_EXECUTABLE"]; !set && m.opts.Python != "" {
		vars["DET_PYTHON_EXECUTABLE"] = m.opts.Python
	}
	// A startup hook's `pip install` (Determined's users put theirs
	// there) goes to the task user's home: pip does that by itself when
	// it cannot write the Python's site-packages, which a task's user never
	// can, but Debian's Python refuses any install (PEP 668) unless told
	// to go ahead. A task may say otherwise.
	if _, set := vars["PIP_BREAK_SYSTEM_PACKAGES"]; !set {
		vars["PIP_BREAK_SYSTEM_PACKAGES"] = "1"
	}
	if m.opts.BinDir != "" {
		path := spec.Env["PATH"]
		if path == "" {
			path = "/usr/local/bin:/usr/bin:/bin"
		}
		vars["PATH"] = m.opts.BinDir + ":" + path
	}
	pythonPath := spec.PythonPath
	if m.opts.HarnessDir != "" {
		pythonPath = append([]string{m.opts.HarnessDir}, pythonPath...)
	}
	if len(pythonPath) > 0 {
		var parts []string
		for _, p := range pythonPath {
			if !filepath.IsAbs(p) {
				p = filepath.Join(a.workDir, p)
			}
			parts = append(parts, p)
		}
		if old := vars["PYTHONPATH"]; old != "" {
			parts = append(parts, old)
		}
		vars["PYTHONPATH"] = strings.Join(parts, string(os.PathListSeparator))
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// lookPath finds name in the task's PATH (not the master's). Names with a
// slash are used as they are; relative ones are resolved from dir by exec.
func lookPath(name string, env []string, dir string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", resolute.Errorf(resolute.EInvalid, "%s is not installed in the task environment: it is not in the task's PATH", name)
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		if f != nil {
			_ = f.Close()
		}
	}
}
