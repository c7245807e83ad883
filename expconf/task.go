package expconf

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// Task types that take a TaskConfig.
const (
	TaskCommand     = "command"
	TaskNotebook    = "notebook"
	TaskShell       = "shell"
	TaskTensorBoard = "tensorboard"
	// TaskCheckpointGC is the master's own checkpoint GC task: a command.
	TaskCheckpointGC = "checkpoint_gc"
)

// Notebook idle types: what makes a notebook count as idle.
const (
	IdleKernelsOrTerminals = "kernels_or_terminals"
	IdleKernelConnections  = "kernel_connections"
	IdleActivity           = "activity"
)

// TaskConfig is the config of a command, notebook, shell or TensorBoard,
// with defaults applied.
type TaskConfig struct {
	Description string
	Environment EnvironmentConfig
	// Resources holds resource_pool, priority, weight, shm_size and devices;
	// its SlotsPerTrial is unused (see Slots).
	Resources  ResourcesConfig
	Slots      int // default 1; always 0 for a TensorBoard
	BindMounts []BindMount
	Entrypoint Entrypoint
	// IdleTimeout is nil when unset: the master's default applies.
	IdleTimeout      *time.Duration
	NotebookIdleType string // default kernels_or_terminals
	TensorboardArgs  []string
	Debug            bool
	// CheckpointStorage is where a checkpoint GC task deletes (only
	// checkpoint_gc tasks have it).
	CheckpointStorage *CheckpointStorageConfig

	// Warnings lists deprecated or ignored keys, one "path: message" each.
	Warnings []string
}

var taskTypes = []string{TaskCommand, TaskNotebook, TaskShell, TaskTensorBoard, TaskCheckpointGC}

// ParseTask parses the config of a task of taskType (one of TaskCommand,
// TaskNotebook, TaskShell, TaskTensorBoard, TaskCheckpointGC) strictly, with
// defaults. An entrypoint is required for commands (and checkpoint GC) only.
func ParseTask(data []byte, taskType string) (*TaskConfig, error) {
	doc, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	return decodeTask(doc, taskType)
}

func decodeTask(doc *yaml.Node, taskType string) (*TaskConfig, error) {
	d := &decoder{}
	known := false
	for _, t := range taskTypes {
		known = known || t == taskType
	}
	if !known {
		return nil, fmt.Errorf("expconf: unknown task type %q", taskType)
	}
	o := d.object(doc, "")
	t := &TaskConfig{NotebookIdleType: IdleKernelsOrTerminals}
	o.text("description", &t.Description, "\n\t")
	t.Environment = d.environment(o.take("environment"), "environment")
	t.Resources, t.Slots = d.resources(o.take("resources"), "resources", true)
	t.Resources.SlotsPerTrial = 0
	if taskType == TaskTensorBoard {
		if t.Slots != 0 && o.has("resources") {
			d.warn("resources.slots", "a TensorBoard uses no slots; set to 0")
		}
		t.Slots = 0
	}
	t.BindMounts = d.bindMounts(o, "bind_mounts")
	o.reject("work_dir", "not supported: a task starts in its context directory; cd in its entrypoint")
	t.Entrypoint = d.entrypoint(o)
	if (taskType == TaskCommand || taskType == TaskCheckpointGC) && t.Entrypoint.IsZero() && !o.has("entrypoint") {
		d.fail(o.line(), "entrypoint", "required for a command")
	}
	var idle string
	if o.str("idle_timeout", &idle) {
		dur, err := time.ParseDuration(idle)
		switch {
		case err != nil:
			d.fail(o.take("idle_timeout"), "idle_timeout", "expected a duration like \"30m\", got %q", idle)
		case dur <= 0:
			d.fail(o.take("idle_timeout"), "idle_timeout", "must be positive, got %q", idle)
		default:
			t.IdleTimeout = &dur
		}
	}
	if o.str("notebook_idle_type", &t.NotebookIdleType) {
		d.oneOf(o.take("notebook_idle_type"), "notebook_idle_type", t.NotebookIdleType,
			IdleKernelsOrTerminals, IdleKernelConnections, IdleActivity)
	}
	t.TensorboardArgs = o.strList("tensorboard_args")
	o.boolean("debug", &t.Debug)
	if n := o.take("checkpoint_storage"); n != nil && taskType == TaskCheckpointGC {
		t.CheckpointStorage = d.checkpointStorage(n, "checkpoint_storage")
	} else if n != nil {
		d.fail(n, "checkpoint_storage", "only a checkpoint GC task has checkpoint storage")
	}
	for _, key := range sortedKeys(enterpriseKeys) {
		o.reject(key, enterpriseKeys[key])
	}
	o.done()
	t.Warnings = d.warns
	if err := d.errs.errOrNil(); err != nil {
		return nil, err
	}
	return t, nil
}

// Map renders the task config as plain YAML-shaped values.
func (t *TaskConfig) Map() map[string]any {
	m := map[string]any{
		"environment":        t.Environment.render(),
		"resources":          t.Resources.render(true, t.Slots),
		"bind_mounts":        renderBindMounts(t.BindMounts),
		"notebook_idle_type": t.NotebookIdleType,
		"debug":              t.Debug,
	}
	putStr(m, "description", t.Description)
	if ep := t.Entrypoint.render(); ep != nil {
		m["entrypoint"] = ep
	}
	if t.IdleTimeout != nil {
		m["idle_timeout"] = t.IdleTimeout.String()
	}
	if t.TensorboardArgs != nil {
		m["tensorboard_args"] = t.TensorboardArgs
	}
	if cs := t.CheckpointStorage.render(); cs != nil {
		m["checkpoint_storage"] = cs
	}
	return m
}

// YAML renders the task config as YAML, keys sorted.
func (t *TaskConfig) YAML() ([]byte, error) {
	return renderYAML(t.Map())
}
