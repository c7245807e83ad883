package k8s

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/resolute-ml/resolute"
)

// Options configure a Manager.
type Options struct {
	Client kubernetes.Interface
	// Config is the client's REST configuration, for exec.
	Config *rest.Config
	// Namespace is where pods go unless their workspace or pool names another.
	Namespace string
	// WorkspaceNamespaces are the namespaces workspaces name (a launch's
	// LaunchSpec.Namespace), watched from the start; one a launch names
	// later is watched from then on.
	WorkspaceNamespaces []string
	// Pools are the resource pools; the first is used for unknown names.
	Pools          []Pool
	MaxSlotsPerPod int
	// SlotType is "gpu" (nvidia.com/gpu) or "cpu" (CPUPerSlot CPUs a slot).
	SlotType         string
	CPUPerSlot       resource.Quantity
	DefaultScheduler string // "", coscheduler or preemption
	// PendingTimeout is how long a gang's pods may wait to be scheduled
	// before the allocation is released and requeued (default 10 minutes).
	PendingTimeout time.Duration
	// Harness is the harness package (determined/...), shipped with every
	// task's files and put first on its PYTHONPATH; nil ships none.
	Harness fs.FS
	Logger  *slog.Logger
}

// Pool is one resource pool as the Kubernetes resource manager runs it.
type Pool struct {
	Name      string
	Namespace string // "" means Options.Namespace
	// The pod specs of task_container_defaults: the pool's own, else the
	// master's. Any may be nil.
	CPUPodSpec, GPUPodSpec, GCPodSpec *corev1.Pod
}

// Manager is the Kubernetes resource manager. Its methods are safe for
// concurrent use.
type Manager struct {
	opts      Options
	log       *slog.Logger
	logClient kubernetes.Interface // for log streams
	events    chan resolute.AllocationEvent

	factory   informers.SharedInformerFactory   // Resolute's pods
	others    informers.SharedInformerFactory   // every other pod that holds resources
	cluster   informers.SharedInformerFactory   // nodes
	evMu      sync.Mutex                        // guards podEvents and watched
	podEvents []informers.SharedInformerFactory // events about pods, by namespace
	watched   map[string]bool                   // namespaces of podEvents
	pods      corelisters.PodLister
	otherPods corelisters.PodLister
	nodes     corelisters.NodeLister

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	harness map[string][]byte // Options.Harness, by path under harnessDir

	mu     sync.Mutex
	allocs map[string]*allocation
}

// allocation is what the manager knows of one allocation it launched or
// adopted.
type allocation struct {
	id, namespace string
	pods          []podPlace
	launched      time.Time
	started       bool     // Started was sent
	ended         bool     // Exited was sent (or is being sent)
	killed        bool     // Kill was called
	result        *outcome // how it ends, once a pod has ended; the others are being deleted
	logs          sync.WaitGroup
	stopLogs      context.CancelFunc
	noted         map[string]bool // pod conditions already written to the log
}

// podPlace is one pod of an allocation: its name, node and slots, and
// whether the cache has had it (a pod not yet seen is not yet gone).
type podPlace struct {
	name, node string
	slots      []int
	seen       bool
}

// New starts the informers and waits until their caches are filled.
func New(ctx context.Context, opts Options) (*Manager, error) {
	if opts.Client == nil {
		return nil, errors.New("k8s: no client")
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	if len(opts.Pools) == 0 {
		opts.Pools = []Pool{{Name: "default"}}
	}
	if opts.SlotType == "" || opts.SlotType == "cuda" {
		opts.SlotType = "gpu"
	}
	if opts.PendingTimeout == 0 {
		opts.PendingTimeout = 10 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	m := &Manager{opts: opts, log: opts.Logger, events: make(chan resolute.AllocationEvent, 4096),
		allocs: map[string]*allocation{}, logClient: opts.Client}
	if opts.Harness != nil {
		var err error
		if m.harness, err = readFiles(opts.Harness, harnessDir); err != nil {
			return nil, fmt.Errorf("k8s: harness: %w", err)
		}
	}
	if opts.Config != nil {
		// Log streams get a client (and a request rate limit) of their own,
		// so that following many pods never slows launching more.
		cfg := rest.CopyConfig(opts.Config)
		cfg.QPS, cfg.Burst = 100, 200
		if c, err := kubernetes.NewForConfig(cfg); err == nil {
			m.logClient = c
		}
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())

	ours, _ := labels.NewRequirement(LabelAllocation, selection.Exists, nil)
	theirs, _ := labels.NewRequirement(LabelAllocation, selection.DoesNotExist, nil)
	m.factory = informers.NewSharedInformerFactoryWithOptions(opts.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = ours.String() }))
	m.others = informers.NewSharedInformerFactoryWithOptions(opts.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = theirs.String()
			o.FieldSelector = "status.phase!=Succeeded,status.phase!=Failed"
		}))
	m.cluster = informers.NewSharedInformerFactory(opts.Client, 0)
	// Events are read in Resolute's namespaces only (the Helm chart's Roles
	// grant no more).
	m.watched = map[string]bool{}
	for _, ns := range m.namespaces() {
		m.addEventInformer(ns)
	}
	podInf := m.factory.Core().V1().Pods()
	m.pods = podInf.Lister()
	podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { m.podChanged(o) },
		UpdateFunc: func(_, o any) { m.podChanged(o) },
		DeleteFunc: func(o any) { m.podChanged(o) },
	})
	m.otherPods = m.others.Core().V1().Pods().Lister()
	m.nodes = m.cluster.Core().V1().Nodes().Lister()

	for _, f := range m.factories() {
		f.Start(m.ctx.Done())
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				m.Close()
				return nil, fmt.Errorf("k8s: watching %v: %w", typ, errOr(ctx.Err()))
			}
		}
	}
	for name, value := range map[string]int32{DefaultPriorityClass: 50, SystemPriorityClass: 1000000} {
		if err := m.ensurePriorityClass(ctx, name, value); err != nil {
			m.log.Warn("priority class", "name", name, "err", err)
		}
	}
	m.wg.Add(1)
	go m.watchPending()
	return m, nil
}

// harnessDir is where a task finds the harness, relative to its work
// directory.
const harnessDir = ".resolute/harness"

// readFiles reads every file of fsys, keyed by dir + "/" + its path.
func readFiles(fsys fs.FS, dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		out[dir+"/"+p], err = fs.ReadFile(fsys, p)
		return err
	})
	return out, err
}

// ListenAddr is every address: a task's services are reached at its pod's
// IP.
func (m *Manager) ListenAddr() string { return "0.0.0.0" }

func errOr(err error) error {
	if err == nil {
		return errors.New("the cache did not sync")
	}
	return err
}

// Events is where the manager reports allocations starting, their log lines
// and their ends.
func (m *Manager) Events() <-chan resolute.AllocationEvent { return m.events }

// Close stops watching; pods keep running, to be adopted by the next start.
func (m *Manager) Close() error {
	m.cancel()
	for _, f := range m.factories() {
		f.Shutdown()
	}
	m.wg.Wait()
	return nil
}

// factories are every informer factory of the manager.
func (m *Manager) factories() []informers.SharedInformerFactory {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	return append([]informers.SharedInformerFactory{m.factory, m.others, m.cluster}, m.podEvents...)
}

// addEventInformer makes (not starts) an informer of the events about pods
// in namespace ns, unless there is one.
func (m *Manager) addEventInformer(ns string) (informers.SharedInformerFactory, bool) {
	m.evMu.Lock()
	defer m.evMu.Unlock()
	if m.watched[ns] {
		return nil, false
	}
	f := informers.NewSharedInformerFactoryWithOptions(m.opts.Client, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "involvedObject.kind=Pod" }))
	f.Core().V1().Events().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { m.eventSeen(o) },
		UpdateFunc: func(_, o any) { m.eventSeen(o) },
	})
	m.podEvents = append(m.podEvents, f)
	m.watched[ns] = true
	return f, true
}

// watchNamespace starts reading the events of a namespace a launch names
// that the manager did not watch yet (a workspace's, bound after start).
func (m *Manager) watchNamespace(ns string) {
	if f, ok := m.addEventInformer(ns); ok {
		f.Start(m.ctx.Done())
		m.log.Info("watching pod events", "namespace", ns)
	}
}

// namespaces are where Resolute's pods go: the default namespace, the
// pools' own and the workspaces'.
func (m *Manager) namespaces() []string {
	out := []string{m.opts.Namespace}
	for _, p := range m.opts.Pools {
		if p.Namespace != "" && !slices.Contains(out, p.Namespace) {
			out = append(out, p.Namespace)
		}
	}
	for _, ns := range m.opts.WorkspaceNamespaces {
		if ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	m.evMu.Lock()
	defer m.evMu.Unlock()
	for ns := range m.watched {
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// pool is the named pool, or the first.
func (m *Manager) pool(name string) Pool {
	for _, p := range m.opts.Pools {
		if p.Name == name {
			return p
		}
	}
	return m.opts.Pools[0]
}

// namespaceOf is the namespace of a launch's pods in pool p: its
// workspace's, else the pool's, else the manager's.
func (m *Manager) namespaceOf(spec resolute.LaunchSpec, p Pool) string {
	if spec.Namespace != "" {
		return spec.Namespace
	}
	if p.Namespace != "" {
		return p.Namespace
	}
	return m.opts.Namespace
}

// send delivers an event unless the manager is closing.
func (m *Manager) send(e resolute.AllocationEvent) {
	select {
	case m.events <- e:
	case <-m.ctx.Done():
	}
}

// logLine sends a line of the manager's own into an allocation's log.
func (m *Manager) logLine(id, level, msg string) {
	m.send(resolute.AllocationLog{AllocationID: id, Time: time.Now(), Stream: "stdout", Level: level,
		Line: msg, Message: msg})
}
