package masterconf

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
)

// Config is the master's configuration.
type Config struct {
	// File is the configuration file Load read (--config), "" for none.
	File string `yaml:"-"`

	Port    int    `yaml:"port"`
	DataDir string `yaml:"data_dir"`
	// ExternalURL is the address tasks and links use to reach the master;
	// default http(s)://localhost:<port>.
	ExternalURL string `yaml:"external_url"`
	// TasksURL is the task origin as browsers reach it: where notebooks,
	// TensorBoards and anything else tasks serve are proxied, on an origin
	// that is not the master's (see TaskOrigin). {task} in its host, e.g.
	// https://{task}.tasks.example.com, gives every task an origin of its
	// own.
	TasksURL string `yaml:"tasks_url"`
	// TasksPort is the port of the master's second listener, which serves
	// only the task origin; default port+1.
	TasksPort int `yaml:"tasks_port"`

	DB       DB       `yaml:"db"`
	Security Security `yaml:"security"`
	TLS      TLS      `yaml:"tls"`
	Log      Log      `yaml:"log"`

	Observability Observability `yaml:"observability"`

	// MaxRequestBodyBytes bounds ordinary API and form requests: a larger
	// body is answered 413. Uploads with their own limit (experiment
	// contexts) are not bound by it.
	MaxRequestBodyBytes int64 `yaml:"max_request_body_bytes"`
	// MaxConcurrentUploads is how many requests may upload a context
	// directory at once (each is streamed to a temporary file in
	// <data_dir>/uploads); further ones wait their turn.
	MaxConcurrentUploads int `yaml:"max_concurrent_uploads"`

	CheckpointStorage     map[string]any  `yaml:"checkpoint_storage"`
	ResourceManager       ResourceManager `yaml:"resource_manager"`
	ResourcePools         []ResourcePool  `yaml:"resource_pools"`
	TaskContainerDefaults map[string]any  `yaml:"task_container_defaults"`

	// TaskPython is the Python that runs tasks (DET_PYTHON_EXECUTABLE, and
	// python3 on their PATH); default /usr/bin/python3 when it exists, which
	// sees Debian's packages such as python3-torch.
	TaskPython string `yaml:"task_python"`

	// NotebookTimeout is the default idle timeout of notebooks, in seconds;
	// 0 turns it off (the default, as Determined).
	NotebookTimeout int `yaml:"notebook_timeout"`
	// TensorboardTimeout is the idle timeout of TensorBoards, in seconds.
	TensorboardTimeout int `yaml:"tensorboard_timeout"`

	// TaskUIDBase gives the tasks of users no administrator linked to an
	// agent user ids of their own: uid and gid task_uid_base + user id.
	// Default resolute.DefaultTaskUIDBase (2000000000).
	TaskUIDBase int `yaml:"task_uid_base"`

	// Webhooks and RetentionPolicy: see retention.go.
	Webhooks        Webhooks         `yaml:"webhooks"`
	RetentionPolicy *RetentionPolicy `yaml:"retention_policy"`
}

// The bounds of task_uid_base: above the ids of ordinary accounts
// (login.defs' UID_MAX is 60000), and low enough that users' ids fit below
// resolute.MaxTaskUID.
const (
	MinTaskUIDBase = 65536
	MaxTaskUIDBase = 4_000_000_000
)

// DB is where the database is. With no Host the master runs its own
// PostgreSQL in <data_dir>/postgres.
type DB struct {
	Host     string `yaml:"host"`
	Port     int    `yaml:"port"`
	Name     string `yaml:"name"`
	User     string `yaml:"user"`
	Password string `yaml:"password"`
	SSLMode  string `yaml:"ssl_mode"`
}

// Security holds account settings.
type Security struct {
	// InitialUserPassword is given to the built-in users admin and determined
	// when they are created; without it they have no password.
	InitialUserPassword string `yaml:"initial_user_password"`
	// DefaultPassword is the older name of InitialUserPassword (the Helm
	// chart's defaultPassword).
	DefaultPassword string `yaml:"default_password"`
	// SessionLifetime is how long a login lasts.
	SessionLifetime Duration `yaml:"session_lifetime"`
	// MinPasswordLength is the fewest characters of a password set for a
	// user (created with one, changed, or set by an administrator).
	MinPasswordLength int `yaml:"min_password_length"`
	// TrustedProxies are the addresses (CIDRs, or single IPs) of proxies
	// that terminate TLS in front of the master: from them, and only from
	// them, X-Forwarded-Proto: https makes cookies Secure and
	// X-Forwarded-For gives the client's address. None by default. As a
	// flag or variable: a comma-separated list.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// Authz picks how permissions are decided.
	Authz Authz `yaml:"authz"`
}

// Authz is security.authz: Type basic (the default: owners and
// administrators, Determined's open-source rules) or rbac (roles assigned
// to users and groups, cluster-wide or per workspace).
type Authz struct {
	Type string `yaml:"type"`
}

// RBAC says whether roles decide permissions.
func (a Authz) RBAC() bool { return a.Type == "rbac" }

// TrustedProxyPrefixes are TrustedProxies parsed; Load has validated them.
func (s Security) TrustedProxyPrefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range s.TrustedProxies {
		if prefix, err := parsePrefix(p); err == nil {
			out = append(out, prefix)
		}
	}
	return out
}

// parsePrefix reads a CIDR, or one address as the prefix of just itself.
func parsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4In6() {
		return p.Masked(), err
	}
	// ::ffff:a.b.c.d/n is the IPv4 prefix /n-96, as the master sees such
	// clients (their addresses unmapped).
	if p.Bits() < 96 {
		return netip.Prefix{}, fmt.Errorf("an IPv4-mapped prefix must be at least /96")
	}
	return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96).Masked(), nil
}

// TLS turns on HTTPS when both files are given.
type TLS struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// Log configures the master's own log.
type Log struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // text or json
}

// ResourceManager says where tasks run.
type ResourceManager struct {
	Type string `yaml:"type"` // local (default) or kubernetes
	// Slots is the number of CPU slots of the local resource manager when no
	// GPU is found; default: the number of cores.
	Slots                      int        `yaml:"slots"`
	Scheduler                  *Scheduler `yaml:"scheduler"`
	DefaultAuxResourcePool     string     `yaml:"default_aux_resource_pool"`
	DefaultComputeResourcePool string     `yaml:"default_compute_resource_pool"`

	// The Kubernetes resource manager's keys (package k8s).
	Kubeconfig string `yaml:"kubeconfig"` // empty: in-cluster config
	// Namespace is where pods go unless a pool names its own;
	// default_namespace is Determined 0.38's name for it.
	Namespace        string `yaml:"namespace"`
	DefaultNamespace string `yaml:"default_namespace"`
	// MaxSlotsPerPod is the most slots one pod may hold; a task with more
	// is split into slots/max pods. Required on Kubernetes.
	MaxSlotsPerPod       int                  `yaml:"max_slots_per_pod"`
	SlotType             string               `yaml:"slot_type"` // gpu (default) or cpu
	SlotResourceRequests SlotResourceRequests `yaml:"slot_resource_requests"`
	DefaultScheduler     string               `yaml:"default_scheduler"` // "", coscheduler or preemption
	// DeterminedMaster* is the master address tasks use, when it is not the
	// external_url (e.g. a Service name inside the cluster).
	DeterminedMasterHost   string `yaml:"determined_master_host"`
	DeterminedMasterPort   int    `yaml:"determined_master_port"`
	DeterminedMasterScheme string `yaml:"determined_master_scheme"`
	// PendingTimeout is how many seconds a gang's pods may stay Pending
	// before the allocation is released and requeued.
	PendingTimeout int `yaml:"pending_timeout"`

	// KeepWorkDirs keeps the work directories (<data_dir>/work/<allocation>)
	// of ended allocations of the local resource manager, for debugging;
	// by default each is removed when its allocation ends.
	KeepWorkDirs bool `yaml:"keep_work_dirs"`
}

// SlotResourceRequests is what one CPU slot asks of Kubernetes.
type SlotResourceRequests struct {
	CPU float64 `yaml:"cpu"`
}

// KubernetesNamespace is the namespace of the resource manager's pods.
func (r ResourceManager) KubernetesNamespace() string {
	switch {
	case r.Namespace != "":
		return r.Namespace
	case r.DefaultNamespace != "":
		return r.DefaultNamespace
	}
	return "default"
}

// TaskMasterURL is the master address tasks use: determined_master_* when
// set, else the master's URL.
func (c *Config) TaskMasterURL() string {
	r := c.ResourceManager
	if r.DeterminedMasterHost == "" {
		return c.URL()
	}
	scheme := r.DeterminedMasterScheme
	if scheme == "" {
		scheme = "http"
		if c.TLS.Cert != "" {
			scheme = "https"
		}
	}
	port := r.DeterminedMasterPort
	if port == 0 {
		port = c.Port
	}
	return fmt.Sprintf("%s://%s:%d", scheme, r.DeterminedMasterHost, port)
}

// ResourcePool is one entry of resource_pools. On the local resource
// manager a pool gets the slots its slot_ids name, or the next `slots` of
// the machine's slots in order; the first pool without either gets the rest.
type ResourcePool struct {
	PoolName    string `yaml:"pool_name"`
	Description string `yaml:"description"`
	// Scheduler, when given, replaces resource_manager.scheduler whole (a
	// blank type there means fair_share), as in the seeds' example.
	Scheduler             *Scheduler     `yaml:"scheduler"`
	TaskContainerDefaults map[string]any `yaml:"task_container_defaults"`
	KubernetesNamespace   string         `yaml:"kubernetes_namespace"`
	Slots                 int            `yaml:"slots"`
	SlotIDs               []int          `yaml:"slot_ids"`
}

// Scheduler is a scheduler block: resource_manager.scheduler or a pool's.
type Scheduler struct {
	Type            string `yaml:"type"` // priority, fair_share or round_robin
	Preemption      bool   `yaml:"preemption"`
	FittingPolicy   string `yaml:"fitting_policy"` // best or worst
	DefaultPriority int    `yaml:"default_priority"`
	// Priority is Determined's nested form: priority: {preemption, default_priority}.
	Priority *struct {
		Preemption      bool `yaml:"preemption"`
		DefaultPriority int  `yaml:"default_priority"`
	} `yaml:"priority"`
}

// Duration is a time.Duration written as "30m" or "168h" in YAML.
type Duration struct{ time.Duration }

// Default returns the configuration before any file, variable or flag.
func Default() Config {
	return Config{
		Port:                 8080,
		DataDir:              defaultDataDir(),
		DB:                   DB{Port: 5432, Name: "resolute", User: "postgres", SSLMode: "prefer"},
		Security:             Security{SessionLifetime: Duration{7 * 24 * time.Hour}, MinPasswordLength: 8, Authz: Authz{Type: "basic"}},
		Log:                  Log{Level: "info", Format: "text"},
		MaxRequestBodyBytes:  1 << 20,
		MaxConcurrentUploads: 4,
		ResourceManager:      ResourceManager{Type: "local"},
		TensorboardTimeout:   300,
		TaskUIDBase:          resolute.DefaultTaskUIDBase,
	}
}

// defaultDataDir is /var/lib/resolute for root (the postgres user must be
// able to enter it, which root's home does not allow) and the XDG data
// directory for everyone else.
func defaultDataDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/resolute"
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "resolute")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".local", "share", "resolute")
}

// InitialPassword is the password for the built-in users, from either key.
func (c *Config) InitialPassword() string {
	if c.Security.InitialUserPassword != "" {
		return c.Security.InitialUserPassword
	}
	return c.Security.DefaultPassword
}

// URL is the address tasks and the CLI use to reach this master.
func (c *Config) URL() string {
	if c.ExternalURL != "" {
		return strings.TrimSuffix(c.ExternalURL, "/")
	}
	scheme := "http"
	if c.TLS.Cert != "" {
		scheme = "https"
	}
	return fmt.Sprintf("%s://localhost:%d", scheme, c.Port)
}

// checkDefaults validates checkpoint_storage and task_container_defaults the
// way experiment configs will read them.
func checkDefaults(prefix string, storage, tcd map[string]any) Errors {
	_, err := expconf.MasterDefaults(storage, tcd)
	var fieldErrs expconf.Errors
	if err == nil {
		return nil
	} else if !errors.As(err, &fieldErrs) {
		return Errors{{Path: prefix + "task_container_defaults", Message: err.Error()}}
	}
	var out Errors
	for _, e := range fieldErrs {
		out = append(out, FieldError{Path: prefix + e.Path, Message: e.Message})
	}
	return out
}

// Defaults is the lowest layer of every experiment config: the master's
// checkpoint_storage and task_container_defaults, shaped like an experiment
// config. Load has validated both.
func (c *Config) Defaults() []byte {
	data, _ := expconf.MasterDefaults(c.CheckpointStorage, c.TaskContainerDefaults)
	return data
}

// PoolDefaults is the lowest config layer of each pool that has its own
// task_container_defaults; they replace the master's, as in Determined.
func (c *Config) PoolDefaults() map[string][]byte {
	out := map[string][]byte{}
	for _, p := range c.ResourcePools {
		if p.TaskContainerDefaults != nil {
			out[p.PoolName], _ = expconf.MasterDefaults(c.CheckpointStorage, p.TaskContainerDefaults)
		}
	}
	return out
}

// validate checks values that decode but make no sense.
func (c *Config) validate() Errors {
	var errs Errors
	bad := func(path, format string, args ...any) {
		errs = append(errs, FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if c.Port < 1 || c.Port > 65535 {
		bad("port", "must be between 1 and 65535 (got %d)", c.Port)
	}
	if c.DataDir == "" {
		bad("data_dir", "must not be empty")
	}
	errs = append(errs, c.checkTaskOrigin()...)
	errs = append(errs, c.Observability.check()...)
	if c.DB.Host != "" && (c.DB.Port < 1 || c.DB.Port > 65535) {
		bad("db.port", "must be between 1 and 65535 (got %d)", c.DB.Port)
	}
	if !slices.Contains([]string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}, c.DB.SSLMode) {
		bad("db.ssl_mode", "must be one of disable, allow, prefer, require, verify-ca, verify-full (got %q)", c.DB.SSLMode)
	}
	if (c.TLS.Cert == "") != (c.TLS.Key == "") {
		bad("tls", "set both cert and key, or neither")
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		bad("log.level", "must be one of debug, info, warn, error (got %q)", c.Log.Level)
	}
	if !slices.Contains([]string{"text", "json"}, c.Log.Format) {
		bad("log.format", "must be text or json (got %q)", c.Log.Format)
	}
	if c.Security.SessionLifetime.Duration < time.Minute {
		bad("security.session_lifetime", "must be at least 1m (got %v)", c.Security.SessionLifetime.Duration)
	}
	if n := c.Security.MinPasswordLength; n < 1 || n > 72 {
		bad("security.min_password_length", "must be between 1 and 72, the most bcrypt reads (got %d)", n)
	}
	for i, p := range c.Security.TrustedProxies {
		if _, err := parsePrefix(p); err != nil {
			bad(fmt.Sprintf("security.trusted_proxies[%d]", i), "expected an address or a CIDR like 10.0.0.0/8, got %q", p)
		}
	}
	if !slices.Contains([]string{"basic", "rbac"}, c.Security.Authz.Type) {
		bad("security.authz.type", "must be basic or rbac (got %q)", c.Security.Authz.Type)
	}
	if c.MaxRequestBodyBytes < 1024 {
		bad("max_request_body_bytes", "must be at least 1024 (got %d)", c.MaxRequestBodyBytes)
	}
	if c.MaxConcurrentUploads < 1 {
		bad("max_concurrent_uploads", "must be at least 1 (got %d)", c.MaxConcurrentUploads)
	}
	switch c.ResourceManager.Type {
	case "local":
	case "kubernetes":
		errs = append(errs, c.checkKubernetes()...)
	default:
		bad("resource_manager.type", "must be local or kubernetes (got %q)", c.ResourceManager.Type)
	}
	errs = append(errs, c.checkResourceManagerKeys()...)
	if c.ResourceManager.Slots < 0 {
		bad("resource_manager.slots", "must not be negative (got %d)", c.ResourceManager.Slots)
	}
	names := map[string]bool{}
	for i, p := range c.ResourcePools {
		path := fmt.Sprintf("resource_pools[%d].pool_name", i)
		if p.PoolName == "" {
			bad(path, "is required")
		} else if names[p.PoolName] {
			bad(path, "%q is used by another pool", p.PoolName)
		}
		names[p.PoolName] = true
	}
	errs = append(errs, checkDefaults("", c.CheckpointStorage, c.TaskContainerDefaults)...)
	errs = append(errs, checkScheduler("resource_manager.scheduler", c.ResourceManager.Scheduler)...)
	for i, p := range c.ResourcePools {
		errs = append(errs, checkScheduler(fmt.Sprintf("resource_pools[%d].scheduler", i), p.Scheduler)...)
	}
	known := map[string]bool{}
	for _, n := range c.PoolNames() {
		known[n] = true
	}
	for key, name := range map[string]string{"default_aux_resource_pool": c.ResourceManager.DefaultAuxResourcePool,
		"default_compute_resource_pool": c.ResourceManager.DefaultComputeResourcePool} {
		if name != "" && !known[name] {
			bad("resource_manager."+key, "pool %q does not exist; the pools are %s", name, strings.Join(c.PoolNames(), ", "))
		}
	}
	for i, p := range c.ResourcePools {
		errs = append(errs, checkDefaults(fmt.Sprintf("resource_pools[%d].", i), nil, p.TaskContainerDefaults)...)
	}
	if c.NotebookTimeout < 0 {
		bad("notebook_timeout", "must not be negative (got %d)", c.NotebookTimeout)
	}
	if c.TensorboardTimeout < 0 {
		bad("tensorboard_timeout", "must not be negative (got %d)", c.TensorboardTimeout)
	}
	if c.TaskUIDBase < MinTaskUIDBase || c.TaskUIDBase > MaxTaskUIDBase {
		bad("task_uid_base", "must be between %d and %d: unlinked users' tasks run as uid task_uid_base + user id, which must not be a real account's (got %d)",
			MinTaskUIDBase, MaxTaskUIDBase, c.TaskUIDBase)
	}
	return append(errs, c.checkRetention()...)
}

// checkKubernetes validates the Kubernetes resource manager's keys.
func (c *Config) checkKubernetes() Errors {
	var errs Errors
	bad := func(path, format string, args ...any) {
		errs = append(errs, FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	r := c.ResourceManager
	if r.MaxSlotsPerPod < 1 {
		bad("resource_manager.max_slots_per_pod", "is required on Kubernetes: the most slots (GPUs) one pod may use, usually the GPUs of your largest node (got %d)", r.MaxSlotsPerPod)
	}
	switch r.SlotType {
	case "", "gpu", "cuda":
	case "cpu":
		if r.SlotResourceRequests.CPU <= 0 {
			bad("resource_manager.slot_resource_requests.cpu", "must be more than 0 when slot_type is cpu (got %g)", r.SlotResourceRequests.CPU)
		}
	default:
		bad("resource_manager.slot_type", "must be gpu or cpu (got %q)", r.SlotType)
	}
	switch r.DefaultScheduler {
	case "", "coscheduler", "preemption", "default":
	default:
		bad("resource_manager.default_scheduler", "must be empty, coscheduler or preemption (got %q)", r.DefaultScheduler)
	}
	switch r.DeterminedMasterScheme {
	case "", "http", "https":
	default:
		bad("resource_manager.determined_master_scheme", "must be http or https (got %q)", r.DeterminedMasterScheme)
	}
	if r.PendingTimeout < 0 {
		bad("resource_manager.pending_timeout", "must not be negative (got %d)", r.PendingTimeout)
	}
	return errs
}
