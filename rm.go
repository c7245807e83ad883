package resolute

import (
	"context"
	"io"
	"syscall"
	"time"
)

// The resource-manager seam: what control asks a resource manager to run,
// and what it reports back. local/ and k8s/ use these types; the interface
// itself is control.ResourceManager.

// LaunchSpec is one allocation to start.
type LaunchSpec struct {
	AllocationID string // letters, digits, '.', '_' and '-'
	TaskID       string
	// Slots are the slot IDs the scheduler chose; they must be free. None
	// means a CPU-only task that holds no slot.
	Slots []int
	// WorkDir is the absolute directory the task runs in; it is created
	// with mode 0700 when missing.
	WorkDir string
	// Context, when set, reads the task's context directory (a gzipped tar,
	// kept in the database) from its start, for unpacking into WorkDir by
	// the rules of package contextdir; an empty read is no context. It is
	// read as a stream: a resource manager never needs to hold it whole.
	Context func(ctx context.Context) io.Reader
	// Files are written under WorkDir (after Context, so they win) with
	// mode 0700; keys are relative slash-separated paths.
	Files map[string][]byte
	// Env is added to the resource manager's base environment, which sets
	// CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES, DET_SLOT_IDS and
	// DET_AGENT_ID itself.
	Env map[string]string
	// Entrypoint is the argv to run; a bare name is looked up in the task's
	// PATH, a relative path is taken from WorkDir.
	Entrypoint []string
	// Shell, set instead of Entrypoint, is run as `sh -c Shell`.
	Shell string
	// PythonPath entries are put before PYTHONPATH; relative ones are taken
	// from WorkDir. (Each resource manager puts the harness there itself.)
	PythonPath []string
	// StartupHook runs the work directory's startup-hook.sh, when its
	// context has one, before Entrypoint or Shell (resolute.WithStartupHook):
	// sourced by sh, so its exports reach them; a hook that fails ends the
	// task with its status.
	StartupHook bool
	// RunAs is the Unix user the task runs as: its workspace's agent user,
	// its owner's linked agent user, or their default ids. The local resource manager runs the
	// processes as it (when the master is root, else as the master's user);
	// on Kubernetes a linked one sets the pod's runAsUser and runAsGroup.
	RunAs TaskUser

	// What a resource manager that runs containers (Kubernetes) needs
	// besides; the local resource manager ignores these.
	SlotAgents []string // the agent (node) of each entry of Slots
	// AvoidAgents, for a task with no Slots, are the agents (nodes) it must
	// not land on: disabled ones, and those a log policy excluded.
	AvoidAgents []string
	TaskType    string // TRIAL, COMMAND, NOTEBOOK, SHELL or TENSORBOARD
	User        string // the owner's username
	Pool        string // the resource pool
	// Namespace is the Kubernetes namespace of the task's workspace; ""
	// means the pool's, or the resource manager's.
	Namespace string
	Image     string         // environment.image for the task's device type
	PodSpec   map[string]any // environment.pod_spec
	Priority  *int           // resources.priority
	// Mounts are host directories the task sees: bind_mounts, and the
	// shared_fs checkpoint storage at its own path.
	Mounts []Mount
	// RegistryAuth, when set, is how to pull Image (environment.registry_auth).
	RegistryAuth *RegistryAuth
	// ForcePullImage pulls Image even when the node has it.
	ForcePullImage bool
	// Container is what the task's container is given besides:
	// resources.shm_size, resources.devices and the capabilities. Only a
	// resource manager whose CheckContainer accepted it gets it.
	Container ContainerSettings
}

// ContainerSettings are the settings of a task's container that not every
// resource manager can apply: Kubernetes applies them to the pod; the local
// resource manager, whose tasks are processes, refuses them at submission.
type ContainerSettings struct {
	ShmSize          *int64 // bytes of /dev/shm; nil: the runtime's default
	Devices          []Device
	AddCapabilities  []string
	DropCapabilities []string
	// PodSpec, RegistryAuth and ForcePullImage say that the config gives
	// environment.pod_spec, registry_auth or force_pull_image: what only a
	// resource manager that pulls images and makes pods can honour.
	PodSpec, RegistryAuth, ForcePullImage bool
}

// Device is a host device the task's container sees (resources.devices).
type Device struct {
	HostPath, ContainerPath string
	Mode                    string // Docker's cgroup permissions: r, w and m
}

// Empty says that nothing is asked of the container.
func (c ContainerSettings) Empty() bool {
	return c.ShmSize == nil && len(c.Devices) == 0 && len(c.AddCapabilities) == 0 && len(c.DropCapabilities) == 0 &&
		!c.PodSpec && !c.RegistryAuth && !c.ForcePullImage
}

// RegistryAuth is a container registry's credentials, as Docker's
// AuthConfig gives them.
type RegistryAuth struct {
	Username, Password, Auth, Email, ServerAddress string
}

// Mount is a host directory mounted into a task's container.
type Mount struct {
	HostPath, ContainerPath string
	ReadOnly                bool
}

// RecoveredAllocation is an allocation a resource manager found again when
// the master started: one that still runs, which it adopted, or one that
// ended while no master ran.
type RecoveredAllocation struct {
	AllocationID string
	// Running says it still runs: it holds its slots again, can be killed
	// and exec'd into, and reports AllocationExited when it ends.
	Running bool
	// ExitCode is the status an allocation that is not Running recorded
	// when it ended.
	ExitCode int
}

// Stream is a process started in a running allocation (a terminal when it
// has a TTY): its output is read, its input written; Close hangs it up.
type Stream interface {
	io.ReadWriteCloser
	// Resize sets the terminal's size; without a TTY it does nothing.
	Resize(cols, rows uint16) error
	// Wait waits for the process to end and returns its exit status.
	Wait() (int, error)
}

// AllocationEvent is what a resource manager reports: an AllocationStarted,
// AllocationLog or AllocationExited value.
type AllocationEvent interface {
	// Allocation is the ID of the allocation the event is about.
	Allocation() string
}

// AllocationStarted reports that an allocation's process is running.
type AllocationStarted struct {
	AllocationID string
	PID          int
	Addr         string // where the task's services listen
	Time         time.Time
}

// AllocationLog is one line of a task's output.
type AllocationLog struct {
	AllocationID string
	Time         time.Time // when the line was read
	Stream       string    // stdout or stderr
	// Level is DEBUG, INFO, WARNING, ERROR or CRITICAL when the line starts
	// with Determined's LOG_FORMAT prefix ("INFO: [pid] name: message"), else "".
	Level string
	// Rank is N when the line starts with "[rank=N] ", else nil.
	Rank *int
	// Line is the line as printed, without its newline; invalid UTF-8 is
	// replaced and NUL bytes dropped, and lines over 64 KiB come in pieces.
	Line string
	// Message is Line without the rank and level prefixes.
	Message string
	// Agent and Container are where the line was printed, as the resource
	// manager names them (TaskLog's AgentID and ContainerID); "" for a
	// line of the manager's own.
	Agent, Container string
}

// AllocationExited reports that an allocation's leader process ended. By
// then the rest of its process group has been killed, its slots are free and
// all its output has been delivered.
type AllocationExited struct {
	AllocationID string
	// ExitCode is the process's exit status, or 128+N when signal N killed
	// it (as shells and Docker report it), or -1 when unknown (see Err).
	ExitCode int
	Signal   syscall.Signal // the signal that killed it, or 0
	Killed   bool           // Kill was called for it
	// Requeue says the allocation never really ran (e.g. its pods stayed
	// Pending past the timeout): it goes back to the queue, not counted as
	// a failure.
	Requeue bool
	Err     error // why the status is unknown, when it is
	Time    time.Time
}

// Allocation implements AllocationEvent.
func (e AllocationStarted) Allocation() string { return e.AllocationID }

// Allocation implements AllocationEvent.
func (e AllocationLog) Allocation() string { return e.AllocationID }

// Allocation implements AllocationEvent.
func (e AllocationExited) Allocation() string { return e.AllocationID }
