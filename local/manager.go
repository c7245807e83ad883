package local

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/resolute-ml/resolute"
)

// Slot types.
const (
	SlotCPU  = "cpu"
	SlotCUDA = "cuda"
)

// DefaultMaxQueuedLogs is Options.MaxQueuedLogs's default.
const DefaultMaxQueuedLogs = 100_000

// maxFinished is how many ended allocations the manager remembers, so that
// killing them is a no-op rather than not_found.
const maxFinished = 4096

// Options configure a Manager.
type Options struct {
	// StateDir holds one directory per allocation: its state file and its
	// output files. Required; created with mode 0700.
	StateDir string
	// Slots is the number of CPU slots when no GPU is found; 0 means
	// runtime.NumCPU().
	Slots int
	// GPUs lists the machine's GPUs and reads their usage; nil means
	// NVML (NewNVML), whose absence gives CPU slots.
	GPUs GPUs
	// GPUSampleInterval is how often the GPUs' usage is read for Agents;
	// 0 means 5s.
	GPUSampleInterval time.Duration
	// AgentID names this machine in snapshots and DET_AGENT_ID; "" means
	// the host name.
	AgentID string
	// BaseEnv is the environment every task starts from, as KEY=VALUE. Nil
	// means the variables of the master's environment named in InheritedEnv,
	// so the master's own secrets never reach tasks.
	BaseEnv []string
	// MaxQueuedLogs is how many events may wait in Events before log tailing
	// pauses; 0 means DefaultMaxQueuedLogs.
	MaxQueuedLogs int
	// PollInterval is how often adopted allocations are checked for exit;
	// 0 means 500ms.
	PollInterval time.Duration
	// HarnessDir, when set, is put first on every task's PYTHONPATH: where
	// the master installed the harness (the determined package).
	HarnessDir string
	// BinDir, when set, is put first on every task's PATH, before the PATH
	// its environment names or else /usr/local/bin:/usr/bin:/bin; its
	// python3 and python run the task Python.
	BinDir string
	// Python, when set, is every task's DET_PYTHON_EXECUTABLE unless its
	// environment names one.
	Python string
	// KeepWorkDirs keeps the work directories of allocations that ended
	// (for debugging); by default each is removed when its allocation ends.
	KeepWorkDirs bool
	// Logger gets the manager's own diagnostics; nil discards them.
	Logger *slog.Logger

	// What tasks running as their own Unix users need (see users.go); used
	// only when the master is root. New checks that task users can reach
	// each of these directories, and the harness, and fails saying which
	// they cannot.

	// WorkRoot, when set, is where the work directories are (control's
	// RunOptions.WorkRoot), one per allocation, named after it: made mode
	// 0711, so that task users enter their own and list none. Recover
	// removes those that belong to no allocation that still runs, unless
	// KeepWorkDirs.
	WorkRoot string
	// HomeRoot holds the home directories of task users without one of
	// their own (mode 0711; each home its user's, 0700); "" means "homes"
	// next to StateDir.
	HomeRoot string
	// SharedDirs are directories every task writes to (shared_fs
	// checkpoint storage): a missing one is made mode 01777 (sticky, as
	// /tmp); an existing one must let others write.
	SharedDirs []string
}

// InheritedEnv names the variables of the master's environment that tasks
// get when Options.BaseEnv is nil.
var InheritedEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE",
	"TZ", "TMPDIR", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
}

// Slot is one unit of capacity: a GPU, or a CPU share.
type Slot struct {
	ID           int
	Type         string // SlotCPU or SlotCUDA
	DeviceIndex  int    // the GPU's index; the slot's ID for CPU slots
	Device       string // the GPU's name, or "cpu"
	UUID         string // the GPU's UUID
	MemoryBytes  uint64 // the GPU's memory
	AllocationID string // the allocation holding it, or ""
}

// AllocationInfo describes an allocation that has not ended.
type AllocationInfo struct {
	AllocationID string
	TaskID       string
	Slots        []int
	PID          int
	StartedAt    time.Time
	Adopted      bool // found by Recover after a restart
}

// Snapshot is what the machine has and what holds it.
type Snapshot struct {
	AgentID     string
	Slots       []Slot
	Allocations []AllocationInfo // sorted by AllocationID
}

// Manager runs allocations as process groups on this machine. Its methods
// are safe for concurrent use.
type Manager struct {
	opts    Options
	log     *slog.Logger
	baseEnv []string
	events  *queue
	stop    chan struct{} // closed by Close: tailers and watchers end
	readers sync.WaitGroup

	// switchUsers says tasks run as their specs' users: the master is root.
	switchUsers bool
	// sweepMu is held while a uid's strays are swept, while a launch takes
	// its uid and while Recover adopts (strays.go).
	sweepMu sync.Mutex

	mu     sync.Mutex
	closed bool
	slots  []Slot
	usage  map[string]resolute.GPUUsage // by GPU UUID, the latest sample
	// usageFailing says the last read of the usage failed (logged once).
	usageFailing bool
	allocs       map[string]*allocation
	finished     []string // ended allocation IDs, oldest first
}

// New discovers the machine's slots and returns a Manager. GPU discovery
// failures are logged and leave the machine with CPU slots.
func New(opts Options) (*Manager, error) {
	if opts.StateDir == "" {
		return nil, resolute.Errorf(resolute.EInvalid, "local: a state directory is required")
	}
	if opts.Slots < 0 {
		return nil, resolute.Errorf(resolute.EInvalid, "local: slots must not be negative")
	}
	if err := os.MkdirAll(opts.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("local: create state dir: %w", err)
	}
	if opts.GPUs == nil {
		opts.GPUs = NewNVML("")
	}
	if opts.GPUSampleInterval <= 0 {
		opts.GPUSampleInterval = 5 * time.Second
	}
	if opts.AgentID == "" {
		opts.AgentID, _ = os.Hostname()
	}
	if opts.MaxQueuedLogs <= 0 {
		opts.MaxQueuedLogs = DefaultMaxQueuedLogs
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 500 * time.Millisecond
	}
	if opts.HomeRoot == "" {
		opts.HomeRoot = filepath.Join(filepath.Dir(filepath.Clean(opts.StateDir)), "homes")
	}
	m := &Manager{
		opts:        opts,
		log:         opts.Logger,
		events:      newQueue(opts.MaxQueuedLogs),
		stop:        make(chan struct{}),
		allocs:      make(map[string]*allocation),
		switchUsers: os.Geteuid() == 0,
	}
	if m.log == nil {
		m.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if m.switchUsers {
		if err := m.prepareTaskDirs(); err != nil {
			return nil, err
		}
	} else {
		m.log.Warn("the master does not run as root, so every task runs as the master's own user: "+
			"any task can read every other task's tokens, files and environment, and the master's files; "+
			"run the master as root to run tasks as their owners' Unix users", "uid", os.Geteuid())
	}
	m.baseEnv = opts.BaseEnv
	if m.baseEnv == nil {
		for _, k := range InheritedEnv {
			if v, ok := os.LookupEnv(k); ok {
				m.baseEnv = append(m.baseEnv, k+"="+v)
			}
		}
	}
	m.slots = discoverSlots(opts, m.log)
	if len(m.slots) > 0 && m.slots[0].Type == SlotCUDA {
		m.sampleGPUs() // before New returns, so the first Agents has usage
		go m.sampleGPUsEvery(opts.GPUSampleInterval)
	}
	return m, nil
}

// discoverSlots lists the GPUs and decides the slots: one per GPU, in index
// order; else, when NVML is absent, fails or finds none, opts.Slots CPU
// slots, said in one log line.
func discoverSlots(opts Options, log *slog.Logger) []Slot {
	gpus, err := safeDiscover(opts.GPUs.List)
	n := opts.Slots
	if n == 0 {
		n = runtime.NumCPU()
	}
	switch {
	case err != nil:
		log.Info("no GPUs: using CPU slots", "slots", n, "reason", err)
	case len(gpus) == 0:
		log.Info("no GPUs: using CPU slots", "slots", n, "reason", "no GPU device found")
	default:
		names := make([]string, len(gpus))
		for i, g := range gpus {
			names[i] = g.Name
		}
		log.Info("GPUs found: one slot each", "gpus", len(gpus), "names", strings.Join(names, ", "))
	}
	if err == nil && len(gpus) > 0 {
		sort.Slice(gpus, func(i, j int) bool { return gpus[i].Index < gpus[j].Index })
		slots := make([]Slot, len(gpus))
		for i, g := range gpus {
			slots[i] = Slot{ID: i, Type: SlotCUDA, DeviceIndex: g.Index, Device: g.Name, UUID: g.UUID, MemoryBytes: g.MemoryBytes}
		}
		return slots
	}
	slots := make([]Slot, n)
	for i := range slots {
		slots[i] = Slot{ID: i, Type: SlotCPU, DeviceIndex: i, Device: "cpu"}
	}
	return slots
}

// safeDiscover runs a discovery function, turning a panic into an error: a
// broken driver must not take the master down.
func safeDiscover(f func(context.Context) ([]GPU, error)) (gpus []GPU, err error) {
	defer func() {
		if r := recover(); r != nil {
			gpus, err = nil, fmt.Errorf("gpu discovery panicked: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return f(ctx)
}

// Events delivers the events of all allocations (see the package doc for
// order and buffering). It is closed by Close; events still queued then are
// dropped.
func (m *Manager) Events() <-chan Event { return m.events.out }

// Capacity returns the slots and what holds them.
func (m *Manager) Capacity() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Snapshot{AgentID: m.opts.AgentID, Slots: slices.Clone(m.slots)}
	for _, a := range m.allocs {
		if a.ended {
			continue
		}
		s.Allocations = append(s.Allocations, AllocationInfo{
			AllocationID: a.id, TaskID: a.taskID, Slots: slices.Clone(a.slots),
			PID: a.pid, StartedAt: a.startedAt, Adopted: a.adopted,
		})
	}
	sort.Slice(s.Allocations, func(i, j int) bool {
		return s.Allocations[i].AllocationID < s.Allocations[j].AllocationID
	})
	return s
}

// Close stops log tailing, exit watching of adopted allocations and event
// delivery. Running tasks keep running; a new Manager on the same state
// directory can adopt them with Recover.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	close(m.stop)
	m.events.close()
	m.readers.Wait()
	if c, ok := m.opts.GPUs.(io.Closer); ok {
		c.Close()
	}
	return nil
}

// reserve registers a new allocation holding slots, or fails with conflict
// or invalid. The caller holds a.mu until the allocation has started.
func (m *Manager) reserve(a *allocation) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return resolute.Errorf(resolute.EUnavailable, "local: the resource manager is closed")
	}
	if _, ok := m.allocs[a.id]; ok {
		return resolute.Errorf(resolute.EConflict, "allocation %s already exists", a.id)
	}
	if err := m.checkSlots(a.slots); err != nil {
		return err
	}
	for _, id := range a.slots {
		m.slots[id].AllocationID = a.id
	}
	m.allocs[a.id] = a
	return nil
}

func (m *Manager) checkSlots(ids []int) error {
	seen := make(map[int]bool, len(ids))
	var busy []string
	for _, id := range ids {
		if id < 0 || id >= len(m.slots) {
			return resolute.Errorf(resolute.EInvalid, "slot %d does not exist (this machine has %d)", id, len(m.slots))
		}
		if seen[id] {
			return resolute.Errorf(resolute.EInvalid, "slot %d is listed twice", id)
		}
		seen[id] = true
		if holder := m.slots[id].AllocationID; holder != "" {
			busy = append(busy, fmt.Sprintf("slot %d is held by %s", id, holder))
		}
	}
	if len(busy) > 0 {
		return resolute.Errorf(resolute.EConflict, "%s", strings.Join(busy, "; "))
	}
	return nil
}

// release frees a's slots and remembers it as ended (or forgets it when
// it never started).
func (m *Manager) release(a *allocation, forget bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range a.slots {
		if id >= 0 && id < len(m.slots) && m.slots[id].AllocationID == a.id {
			m.slots[id].AllocationID = ""
		}
	}
	if forget {
		delete(m.allocs, a.id)
		return
	}
	a.ended = true
	m.finished = append(m.finished, a.id)
	if len(m.finished) > maxFinished {
		delete(m.allocs, m.finished[0])
		m.finished = m.finished[1:]
	}
}

func (m *Manager) lookup(id string) (*allocation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.allocs[id]
	if !ok {
		return nil, resolute.Errorf(resolute.ENotFound, "allocation %s not found", id)
	}
	return a, nil
}

// FreeSlots returns the ids of the slots no allocation holds.
func (m *Manager) FreeSlots() []int {
	var free []int
	for _, s := range m.Capacity().Slots {
		if s.AllocationID == "" {
			free = append(free, s.ID)
		}
	}
	return free
}

// AgentName is this machine's name in Agents, for the scheduler and the
// cluster view (its tasks' DET_AGENT_ID is Options.AgentID).
const AgentName = "local"

// Agents lists this machine with every slot and the allocation holding it,
// whatever the pool: the master's slot_ids divide its slots among pools.
func (m *Manager) Agents(pool string) []resolute.Agent {
	snap := m.Capacity()
	a := resolute.Agent{ID: AgentName, Slots: make([]resolute.Slot, len(snap.Slots))}
	usage := m.gpuUsage()
	for i, s := range snap.Slots {
		a.Slots[i] = resolute.Slot{ID: s.ID, Device: s.Device, AllocationID: s.AllocationID}
		if u, ok := usage[s.UUID]; ok && s.Type == SlotCUDA {
			a.Slots[i].Usage = &u
		}
	}
	return []resolute.Agent{a}
}

// ListenAddr is loopback: tasks run on the master's machine.
func (m *Manager) ListenAddr() string { return loopback }

// loopback is where the master reaches its tasks' services.
const loopback = "127.0.0.1"

// SlotType is cuda when the machine's slots are GPUs, else cpu.
func (m *Manager) SlotType() string {
	if s := m.Capacity().Slots; len(s) > 0 {
		return s[0].Type
	}
	return SlotCPU
}

// CheckContainer refuses every container setting: tasks here are process
// groups on the master's machine, with no container to give a /dev/shm of
// its own, devices or capabilities, no pod and no image to pull.
func (m *Manager) CheckContainer(s resolute.ContainerSettings) error {
	const why = "is not supported on the local resource manager: tasks run as processes, not in containers"
	switch {
	case s.ShmSize != nil:
		return resolute.Errorf(resolute.EInvalid, "resources.shm_size %s (they share the machine's /dev/shm); remove it, or run on Kubernetes", why)
	case len(s.Devices) > 0:
		return resolute.Errorf(resolute.EInvalid, "resources.devices %s (a task sees the machine's devices as its Unix user may); remove it, or run on Kubernetes", why)
	case len(s.AddCapabilities) > 0:
		return resolute.Errorf(resolute.EInvalid, "environment.add_capabilities %s (they run as their owners' Unix users); remove it, or run on Kubernetes", why)
	case len(s.DropCapabilities) > 0:
		return resolute.Errorf(resolute.EInvalid, "environment.drop_capabilities %s (they run as their owners' Unix users, with none to drop); remove it, or run on Kubernetes", why)
	case s.PodSpec:
		return resolute.Errorf(resolute.EInvalid, "environment.pod_spec %s (there is no pod); remove it, or run on Kubernetes", why)
	case s.RegistryAuth:
		return resolute.Errorf(resolute.EInvalid, "environment.registry_auth %s (no image is pulled: environment.image is only recorded); remove it, or run on Kubernetes", why)
	case s.ForcePullImage:
		return resolute.Errorf(resolute.EInvalid, "environment.force_pull_image %s (no image is pulled: environment.image is only recorded); remove it, or run on Kubernetes", why)
	}
	return nil
}

// CheckMounts refuses the bind mounts a process cannot be given: tasks here
// see the machine's own files, so a host directory is found only at its own
// path, and only as the task's Unix user may read or write it.
func (m *Manager) CheckMounts(mounts []resolute.Mount) error {
	for i, mt := range mounts {
		switch {
		case filepath.Clean(mt.ContainerPath) != filepath.Clean(mt.HostPath):
			return resolute.Errorf(resolute.EInvalid, "bind_mounts[%d]: a container_path other than host_path (%s at %s) is not supported on the local resource manager: "+
				"tasks run as processes and see %s at its own path; set container_path to host_path, or run on Kubernetes", i, mt.HostPath, mt.ContainerPath, mt.HostPath)
		case mt.ReadOnly:
			return resolute.Errorf(resolute.EInvalid, "bind_mounts[%d].read_only is not supported on the local resource manager: "+
				"tasks run as processes and may write %s as far as their Unix user may; remove it, or run on Kubernetes", i, mt.HostPath)
		}
	}
	return nil
}
