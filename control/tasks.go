package control

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/contextdir"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
)

// Tasks are the commands, notebooks, shells and TensorBoards (and the
// checkpoint GC tasks the experiments start): created and killed for their
// owners, launched by the admission loop, ready when their log says so, and
// ended when their allocation exits or they stay idle too long.
type Tasks struct {
	c *core
}

// TaskRequest is a new command, notebook, shell or TensorBoard.
type TaskRequest struct {
	Type       string // resolute.TaskCommand...
	ConfigYAML string
	Template   string
	Overrides  []string
	Context    contextdir.Archive // tar.gz as uploaded; nil: none
	ProjectID  int64
	// Entrypoint, for commands, comes from `det cmd run ENTRYPOINT...` and
	// wins over the config's.
	Entrypoint []string
	// ExperimentIDs and TrialIDs are what a TensorBoard shows: all trials
	// of each experiment, and each trial. A TensorBoard needs one at least.
	ExperimentIDs []int64
	TrialIDs      []int64
}

// readyLines are the log lines that say a task's service serves.
var readyLines = map[string]*regexp.Regexp{
	resolute.TaskNotebook:    regexp.MustCompile(`(Jupyter Notebook|Jupyter Server|JupyterLab).* is running at|http://127\.0\.0\.1:\d+/proxy/`),
	resolute.TaskTensorBoard: regexp.MustCompile(`TensorBoard .* at http`),
	// A shell is ready once its keep-alive process runs.
	resolute.TaskShell: regexp.MustCompile(`^shell ready$`),
}

// Create validates and queues a task (seeds: "Commands and Shells",
// "Notebooks", "TensorBoards"). Tasks with slots go to the default compute
// pool, zero-slot ones to the aux pool, unless resources.resource_pool says.
func (x *Tasks) Create(ctx context.Context, a authz.Actor, req TaskRequest) (resolute.Task, error) {
	if a.UserID() == 0 { // only people launch tasks; their workspace is checked below
		if err := authz.Can(a, authz.CreateTask, authz.Cluster); err != nil {
			return resolute.Task{}, err
		}
	}
	kind, ok := map[string]string{resolute.TaskCommand: expconf.TaskCommand, resolute.TaskNotebook: expconf.TaskNotebook,
		resolute.TaskShell: expconf.TaskShell, resolute.TaskTensorBoard: expconf.TaskTensorBoard}[req.Type]
	if !ok {
		return resolute.Task{}, resolute.Errorf(resolute.EInvalid, "type: unknown task type %q", req.Type)
	}
	if err := checkContext(req.Context); err != nil {
		return resolute.Task{}, err
	}
	if err := x.checkTensorBoardSources(ctx, a, req); err != nil {
		return resolute.Task{}, err
	}
	layers := [][]byte{}
	if req.Template != "" {
		t, err := readTemplate(ctx, x.c.db, a, req.Template)
		if err != nil {
			return resolute.Task{}, err
		}
		layers = append(layers, []byte(t.ConfigYAML))
	}
	layers = append(layers, []byte(req.ConfigYAML))
	overrides := req.Overrides
	if len(req.Entrypoint) > 0 {
		ep, _ := json.Marshal(req.Entrypoint)
		overrides = append(overrides, "entrypoint="+string(ep))
	}
	cfg, err := expconf.ParseTaskLayers(layers, overrides, kind)
	if err != nil {
		return resolute.Task{}, invalid(err)
	}
	if err := x.c.checkRuntime(cfg.Resources, cfg.Environment, cfg.BindMounts); err != nil {
		return resolute.Task{}, err
	}
	projectID := req.ProjectID
	if projectID == 0 {
		projectID, err = x.c.projectFor(ctx, &expconf.ExperimentConfig{}, 0)
		if err != nil {
			return resolute.Task{}, err
		}
	}
	project, err := x.c.db.Project(ctx, projectID)
	if err != nil {
		return resolute.Task{}, err
	}
	if err := authz.Can(a, authz.CreateTask, authz.InWorkspace(project.WorkspaceID)); err != nil {
		return resolute.Task{}, err
	}
	configJSON, err := json.Marshal(cfg.Map())
	if err != nil {
		return resolute.Task{}, err
	}
	token := ""
	if req.Type == resolute.TaskNotebook {
		token = randomHex(16)
	}
	var keys resolute.TaskSSHKeys
	if req.Type == resolute.TaskShell {
		if keys, err = x.shellKeys(ctx, a, projectID); err != nil {
			return resolute.Task{}, err
		}
	}
	var id, pool string
	err = x.c.db.InTx(ctx, func(q *db.Queries) error {
		// The workspace's default pools and its right to the pool, under
		// the bindings' lock (see Experiments.Create).
		pl, err := placementOf(ctx, q, projectID)
		if err != nil {
			return err
		}
		if pool, err = x.c.routePool(pl, cfg.Resources.ResourcePool, cfg.Slots == 0); err != nil {
			return err
		}
		id, err = q.CreateTask(ctx, db.NewTask{Type: req.Type, Description: taskDescription(req, cfg), Config: configJSON,
			Context: contextReader(req.Context), UserID: a.UserID(), ProjectID: projectID, ResourcePool: pool, Priority: cfg.Resources.Priority,
			Slots: cfg.Slots, ServiceToken: token, ExperimentIDs: req.ExperimentIDs, TrialIDs: req.TrialIDs})
		if err != nil {
			return err
		}
		if req.Type == resolute.TaskShell {
			keys.TaskID = id
			if err := q.CreateTaskSSHKeys(ctx, keys); err != nil {
				return err
			}
		}
		return q.CreateAllocation(ctx, id+".1", id, nil, cfg.Slots)
	})
	if err != nil {
		return resolute.Task{}, err
	}
	x.c.logger.Info("task created", "task", id, "type", req.Type, "pool", pool)
	x.c.wakeAdmission()
	return x.c.db.Task(ctx, id)
}

func taskDescription(req TaskRequest, cfg *expconf.TaskConfig) string {
	kind := req.Type
	switch {
	case cfg.Description != "":
		return cfg.Description
	case kind == resolute.TaskTensorBoard:
		return tensorboardDescription(req.ExperimentIDs, req.TrialIDs)
	case kind == resolute.TaskCommand:
		if cfg.Entrypoint.Shell != "" {
			return "Command: " + cfg.Entrypoint.Shell
		}
		return "Command: " + strings.Join(cfg.Entrypoint.Exec, " ")
	}
	return strings.ToUpper(kind[:1]) + strings.ToLower(kind[1:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Kill ends a task: a waiting one at once, a running one with SIGTERM
// then SIGKILL. Tasks are not preemptible and do not checkpoint.
func (x *Tasks) Kill(ctx context.Context, a authz.Actor, id string) error {
	t, err := x.c.db.Task(ctx, id)
	if err != nil {
		return err
	}
	if err := authz.Can(a, authz.ChangeTask, authz.Task(t)); err != nil {
		return err
	}
	if t.State == resolute.TaskTerminated {
		return resolute.Errorf(resolute.EConflict, "task %s has ended", id)
	}
	allocs, err := x.c.db.LiveAllocations(ctx)
	if err != nil {
		return err
	}
	for _, al := range allocs {
		if al.TaskID != id {
			continue
		}
		if al.State == resolute.AllocationPending {
			if _, err := x.c.db.EndAllocation(ctx, al.ID, nil, "killed before it started"); err != nil {
				return err
			}
			return x.c.db.EndTask(ctx, id, nil, "killed before it started")
		}
		if err := x.c.db.SetTaskState(ctx, id, resolute.TaskTerminating); err != nil {
			return err
		}
		// Marked overdue too: if the resource manager does not have it yet
		// (it is being launched), the next cycle kills it.
		if _, err := x.c.db.RequestPreemption(ctx, al.ID, x.c.now()); err != nil {
			return err
		}
		if err := x.c.rm.Kill(ctx, al.ID, x.c.opts.KillGrace); err != nil && resolute.ErrorCode(err) != resolute.ENotFound {
			return err
		}
		return nil
	}
	return x.c.db.EndTask(ctx, id, nil, "killed")
}

// allocationExited records the end of a task's allocation, and so of the
// task.
func (x *Tasks) allocationExited(ctx context.Context, a resolute.Allocation, exitCode *int, reason string) error {
	if _, err := x.c.db.EndAllocation(ctx, a.ID, exitCode, reason); err != nil {
		return err
	}
	if reason == "" {
		reason = "exited"
		if exitCode != nil {
			reason = fmt.Sprintf("exited with status %d", *exitCode)
		}
	}
	x.c.logger.Info("task ended", "task", a.TaskID, "reason", reason)
	// A checkpoint GC task's checkpoints are marked deleted with its end.
	return x.c.db.InTx(ctx, func(q *db.Queries) error {
		if err := q.EndTask(ctx, a.TaskID, exitCode, reason); err != nil {
			return err
		}
		t, err := q.Task(ctx, a.TaskID)
		if err != nil || t.Type != resolute.TaskCheckpointGC {
			return err
		}
		return checkpointGCEnded(ctx, q, x.c.logger, a.TaskID, exitCode)
	})
}

// launch starts a task's allocation: the command, Jupyter, a shell's
// keep-alive process, or TensorBoard, with the task's environment.
func (x *Tasks) launch(ctx context.Context, a resolute.Allocation, slots []int, agents, avoid []string, token string) error {
	t, err := x.c.db.Task(ctx, a.TaskID)
	if err != nil {
		return err
	}
	cfg, err := expconf.ParseTask(t.Config, strings.ToLower(t.Type))
	if err != nil {
		return err
	}
	ws, err := x.c.workspaceSettingsOf(ctx, t.ProjectID)
	if err != nil {
		return err
	}
	runAs, err := x.c.taskUser(ctx, t.UserID, ws)
	if err != nil {
		return err
	}
	env := map[string]string{}
	vars := cfg.Environment.EnvironmentVariables.CPU
	if len(slots) > 0 && len(cfg.Environment.EnvironmentVariables.CUDA) > 0 {
		vars = cfg.Environment.EnvironmentVariables.CUDA
	}
	for _, kv := range vars {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	for k, v := range map[string]string{
		"DET_MASTER": x.c.opts.MasterURL, "DET_MASTER_ADDR": x.c.opts.MasterURL, "DET_CLUSTER_ID": x.c.opts.ClusterID,
		"DET_TASK_ID": t.ID, "DET_ALLOCATION_ID": a.ID, "DET_RESOURCES_ID": a.ID, "DET_CONTAINER_ID": a.ID, "DET_SESSION_TOKEN": token,
		"DET_USER": t.Username, "DET_TASK_TYPE": t.Type, "PYTHONUNBUFFERED": "1",
	} {
		env[k] = v
	}
	archive := &launchContext{open: func(ctx context.Context) io.Reader { return x.c.db.TaskContext(ctx, t.ID) }}
	spec := resolute.LaunchSpec{AllocationID: a.ID, TaskID: t.ID, Slots: slots, WorkDir: filepath.Join(x.c.opts.WorkRoot, a.ID),
		Context: archive.reader, Env: env, SlotAgents: agents, AvoidAgents: avoid, TaskType: t.Type, User: t.Username, Pool: t.ResourcePool,
		Image:   imageFor(cfg.Environment.Image.CPU, cfg.Environment.Image.CUDA, len(slots) > 0),
		PodSpec: cfg.Environment.PodSpec, Priority: t.Priority, Mounts: mountsOf(cfg.BindMounts, nil),
		RegistryAuth: registryAuth(cfg.Environment.RegistryAuth), ForcePullImage: cfg.Environment.ForcePullImage,
		RunAs: runAs, Namespace: ws.Namespace,
		Container: containerOf(cfg.Resources, cfg.Environment)}
	spec.StartupHook = resolute.RunsStartupHook(t.Type)
	listen := x.c.rm.ListenAddr()
	prefix := "/proxy/" + t.ID + "/"
	switch t.Type {
	case resolute.TaskCommand, resolute.TaskCheckpointGC:
		spec.Shell, spec.Entrypoint = cfg.Entrypoint.Shell, cfg.Entrypoint.Exec
		storageEnv, err := gcStorageEnv(cfg)
		if err != nil {
			return err
		}
		maps.Copy(env, storageEnv)
	case resolute.TaskShell:
		// The shell's terminals are opened into the allocation; its
		// keep-alive process runs its sshd and keeps it (and its
		// environment) alive until it is killed.
		if err := x.shellSSH(ctx, t, &spec); err != nil {
			return err
		}
	case resolute.TaskNotebook:
		port, err := freePort()
		if err != nil {
			return err
		}
		if err := x.c.db.SetTaskService(ctx, t.ID, port); err != nil {
			return err
		}
		env["NOTEBOOK_PORT"] = strconv.Itoa(port)
		// The token goes in the environment, which only the task's own
		// user can read (/proc/<pid>/environ), never on the command line,
		// which everyone on the machine can (/proc/<pid>/cmdline).
		env["DET_NOTEBOOK_TOKEN"] = t.ServiceToken
		env["JUPYTER_TOKEN"] = t.ServiceToken
		spec.Entrypoint = jupyterCommand(listen, port, prefix)
	case resolute.TaskTensorBoard:
		// The resource manager looks tensorboard up where the task runs:
		// a missing program fails the launch, or the task with the shell's
		// "not found" in its log.
		sources, err := x.tensorboardSources(ctx, t.ExperimentIDs, t.TrialIDs)
		if err != nil {
			return fmt.Errorf("the TensorBoard's experiments and trials: %w", err)
		}
		port, err := freePort()
		if err != nil {
			return err
		}
		if err := x.c.db.SetTaskService(ctx, t.ID, port); err != nil {
			return err
		}
		env["TENSORBOARD_PORT"] = strconv.Itoa(port)
		for _, s := range sources { // read where the trials wrote them
			if s.Storage == nil {
				spec.Mounts = append(spec.Mounts, resolute.Mount{HostPath: s.Dir, ContainerPath: s.Dir, ReadOnly: true})
			}
		}
		args := []string{"tensorboard", "--port", strconv.Itoa(port), "--host", listen, "--path_prefix", strings.TrimSuffix(prefix, "/")}
		args = append(args, tensorboardLogdir(sources)...)
		synced, syncEnv, err := tensorboardSync(sources, append(args, cfg.TensorboardArgs...))
		if err != nil {
			return err
		}
		spec.Entrypoint = synced
		maps.Copy(env, syncEnv)
	}
	if err := x.c.db.SetTaskState(ctx, t.ID, resolute.TaskRunning); err != nil {
		return err
	}
	if t.Type == resolute.TaskCommand || t.Type == resolute.TaskCheckpointGC {
		if err := x.c.db.SetTaskReady(ctx, t.ID); err != nil {
			return err
		}
	}
	return archive.launched(x.c.rm.Launch(ctx, spec))
}

// jupyterCommand runs the classic notebook server of Debian's
// python3-notebook (or JupyterLab's server when installed) under base URL
// prefix on listen: the task's python3 (the task Python on the master's
// machine, the image's in a pod). It reads its token from JUPYTER_TOKEN
// (notebook 6.4 and later), so no secret is on its command line.
func jupyterCommand(listen string, port int, prefix string) []string {
	return []string{"python3", "-m", "notebook", "--no-browser", "--ip=" + listen, "--port=" + strconv.Itoa(port),
		"--NotebookApp.port_retries=0", "--NotebookApp.base_url=" + prefix,
		"--NotebookApp.allow_remote_access=True", "--NotebookApp.notebook_dir=.",
		"--allow-root"} // an unlinked user's pod runs as its image's user, which may be root
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// logLine looks at a task's log line for the sign that its service is ready.
func (x *Tasks) logLine(ctx context.Context, task, line string) {
	kind := strings.ToUpper(task[:strings.IndexByte(task+"-", '-')])
	re := readyLines[kind]
	if re == nil || !re.MatchString(line) {
		return
	}
	if err := untilAvailable(ctx, func() error { return x.c.db.SetTaskReady(ctx, task) }); err != nil && ctx.Err() == nil {
		x.c.logger.Error("task ready", "task", task, "err", err)
	}
}
