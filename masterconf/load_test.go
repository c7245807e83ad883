package masterconf

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func load(t *testing.T, yamlText string, env map[string]string, args ...string) (Config, error) {
	t.Helper()
	if yamlText != "" {
		p := filepath.Join(t.TempDir(), "master.yaml")
		if err := os.WriteFile(p, []byte(yamlText), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append([]string{"--config", p}, args...)
	}
	return Load(args, func(k string) string { return env[k] }, io.Discard)
}

func TestLoadLayersFileThenEnvThenFlags(t *testing.T) {
	cfg, err := load(t, `
port: 9000
data_dir: /srv/resolute
db: {host: db.internal, password: "1234"}
security: {initial_user_password: s3cret, session_lifetime: 12h}
log: {level: debug}
resource_manager: {slots: 3}
resource_pools:
  - pool_name: gpu
    description: the A100s
notebook_timeout: 1800
`, map[string]string{"RESOLUTE_PORT": "9100", "RESOLUTE_DB_NAME": "det", "RESOLUTE_LOG_FORMAT": "json",
		"RESOLUTE_RESOURCE_MANAGER_KEEP_WORK_DIRS": "true"},
		"--port", "9200", "--resource-manager-slots", "4", "--task-uid-base", "3000000000", "--max-concurrent-uploads", "2")
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.File = cfg.File
	want.Port = 9200
	want.DataDir = "/srv/resolute"
	want.DB.Host, want.DB.Password, want.DB.Name = "db.internal", "1234", "det"
	want.Security.InitialUserPassword = "s3cret"
	want.Security.SessionLifetime = Duration{12 * time.Hour}
	want.Log = Log{Level: "debug", Format: "json"}
	want.ResourceManager.Slots = 4
	want.ResourceManager.KeepWorkDirs = true
	want.MaxConcurrentUploads = 2
	want.ResourcePools = []ResourcePool{{PoolName: "gpu", Description: "the A100s"}}
	want.NotebookTimeout = 1800
	want.TaskUIDBase = 3_000_000_000
	want.CheckpointStorage = map[string]any{"type": "shared_fs", "host_path": "/srv/resolute/checkpoints"}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Fatalf("config (-want +got):\n%s", diff)
	}
}

func TestLoadRejectsBadInputNamingTheKey(t *testing.T) {
	tests := map[string]struct {
		yaml string
		env  map[string]string
		args []string
		want []string
	}{
		"an unknown key suggests the near one": {
			yaml: "prot: 8080\n",
			want: []string{"prot: unknown key (did you mean port?) (line 1)"},
		},
		"a nested unknown key has its path": {
			yaml: "db:\n  hots: x\n",
			want: []string{"db.hots: unknown key (did you mean host?) (line 2)"},
		},
		"a wrong type names what was expected": {
			yaml: "port: eighty\n",
			want: []string{`port: expected an integer, got "eighty" (line 1)`},
		},
		"every error is reported at once": {
			yaml: "port: x\nlog: {level: loud}\nfoo: 1\n",
			want: []string{`port: expected an integer, got "x" (line 1)`, "foo: unknown key (line 3)"},
		},
		"values are checked after decoding": {
			yaml: "log: {level: loud}\ntls: {cert: a.pem}\n",
			want: []string{`log.level: must be one of debug, info, warn, error (got "loud")`, "tls: set both cert and key, or neither"},
		},
		"a bad environment variable is named by its key": {
			env:  map[string]string{"RESOLUTE_PORT": "http"},
			want: []string{`port: expected an integer, got "http"`},
		},
		"a bad duration": {
			yaml: "security: {session_lifetime: forever}\n",
			want: []string{`security.session_lifetime: expected a duration like 30m or 168h, got "forever" (line 1)`},
		},
		"task_uid_base below the ids of ordinary accounts' range is refused": {
			yaml: "task_uid_base: 1000\n",
			want: []string{"task_uid_base: must be between 65536 and 4000000000"},
		},
		"task_uid_base too near the top of the uid range is refused, from the environment too": {
			env:  map[string]string{"RESOLUTE_TASK_UID_BASE": "4294967000"},
			want: []string{"task_uid_base: must be between 65536 and 4000000000", "(got 4294967000)"},
		},
		"at least one upload at a time": {
			args: []string{"--max-concurrent-uploads", "0"},
			want: []string{"max_concurrent_uploads: must be at least 1 (got 0)"},
		},
		"pools need names": {
			yaml: "resource_pools: [{description: x}, {pool_name: a}, {pool_name: a}]\n",
			want: []string{"resource_pools[0].pool_name: is required", `resource_pools[2].pool_name: "a" is used by another pool`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, tc.yaml, tc.env, tc.args...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

func TestStringKeysTakeNumbersAsText(t *testing.T) {
	cfg, err := load(t, "db: {password: 12345}\n", nil, "--security-initial-user-password", "true")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DB.Password != "12345" || cfg.InitialPassword() != "true" {
		t.Fatalf("password %q, initial %q", cfg.DB.Password, cfg.InitialPassword())
	}
}

func TestDefaultPasswordIsTheOldName(t *testing.T) {
	cfg, err := load(t, "security: {default_password: old}\n", nil)
	if err != nil || cfg.InitialPassword() != "old" {
		t.Fatalf("initial password %q, %v", cfg.InitialPassword(), err)
	}
}

func TestURL(t *testing.T) {
	cfg := Default()
	if got := cfg.URL(); got != "http://localhost:8080" {
		t.Fatalf("URL() = %q", got)
	}
	cfg.TLS = TLS{Cert: "c", Key: "k"}
	cfg.Port = 8443
	if got := cfg.URL(); got != "https://localhost:8443" {
		t.Fatalf("URL() with TLS = %q", got)
	}
}

func TestDefaultsAreCheckedAsConfigs(t *testing.T) {
	_, err := load(t, "checkpoint_storage: {type: shared_fs}\ntask_container_defaults: {imag: x}\n", nil)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"checkpoint_storage.host_path", "task_container_defaults.imag: unknown key (did you mean image?)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	cfg, err := load(t, "checkpoint_storage: {type: shared_fs, host_path: /mnt}\ntask_container_defaults: {image: a:1}\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := string(cfg.Defaults()); !strings.Contains(d, "host_path: /mnt") || !strings.Contains(d, "image: a:1") {
		t.Fatalf("defaults layer:\n%s", d)
	}
}

func TestPoolsGetTheirSlotsAndSchedulers(t *testing.T) {
	cfg, err := load(t, `
resource_manager:
  scheduler: {type: priority, preemption: true, default_priority: 40}
resource_pools:
  - pool_name: big
    slots: 3
  - pool_name: pinned
    slot_ids: [7]
    scheduler: {preemption: true}
  - pool_name: rest
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	pools, err := cfg.Pools(8)
	if err != nil {
		t.Fatal(err)
	}
	want := []Pool{
		{Name: "big", Scheduler: Scheduler{Type: "priority", Preemption: true, FittingPolicy: "best", DefaultPriority: 40}, SlotIDs: []int{0, 1, 2}},
		// A pool's own block inherits nothing: its blank type is fair_share.
		{Name: "pinned", Scheduler: Scheduler{Type: "fair_share", Preemption: true, FittingPolicy: "best", DefaultPriority: 42}, SlotIDs: []int{7}},
		{Name: "rest", Scheduler: Scheduler{Type: "priority", Preemption: true, FittingPolicy: "best", DefaultPriority: 40}, SlotIDs: []int{3, 4, 5, 6}},
	}
	if diff := cmp.Diff(want, pools); diff != "" {
		t.Fatalf("pools (-want +got):\n%s", diff)
	}
	if cfg.ComputePool() != "big" {
		t.Errorf("compute pool %q", cfg.ComputePool())
	}
	if _, err := cfg.Pools(2); err == nil || !strings.Contains(err.Error(), "resource_pools[1].slot_ids: slot 7 does not exist") {
		t.Errorf("too few slots: %v", err)
	}
	_, err = load(t, "resource_manager: {default_compute_resource_pool: gpu}\n", nil)
	if err == nil || !strings.Contains(err.Error(), `pool "gpu" does not exist; the pools are default`) {
		t.Errorf("unknown default pool: %v", err)
	}
}

// TestKubernetesPoolsDefaultToPriority50 checks that pools without a default
// priority get 50 on Kubernetes (higher runs first there) while one that
// names 42 keeps it.
func TestKubernetesPoolsDefaultToPriority50(t *testing.T) {
	cfg, err := load(t, `
resource_manager: {type: kubernetes, max_slots_per_pod: 8}
resource_pools:
  - pool_name: plain
  - pool_name: own
    scheduler: {type: priority}
  - pool_name: named
    scheduler: {type: priority, default_priority: 42}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	pools, err := cfg.Pools(0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, p := range pools {
		got[p.Name] = p.Scheduler.DefaultPriority
	}
	if want := map[string]int{"plain": 50, "own": 50, "named": 42}; !cmp.Equal(want, got) {
		t.Fatalf("default priorities %v, want %v", got, want)
	}
}

func TestKubernetesKeys(t *testing.T) {
	cfg, err := load(t, `
port: 8080
resource_manager:
  type: kubernetes
  kubeconfig: /etc/kube/config
  default_namespace: training
  max_slots_per_pod: 8
  slot_type: cpu
  slot_resource_requests: {cpu: 2.5}
  default_scheduler: coscheduler
  determined_master_host: resolute.default.svc
  pending_timeout: 120
resource_pools:
  - pool_name: a100
    kubernetes_namespace: team-a
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	rm := cfg.ResourceManager
	if rm.KubernetesNamespace() != "training" || rm.MaxSlotsPerPod != 8 || rm.SlotResourceRequests.CPU != 2.5 ||
		rm.DefaultScheduler != "coscheduler" || rm.PendingTimeout != 120 || cfg.ResourcePools[0].KubernetesNamespace != "team-a" {
		t.Errorf("resource_manager = %+v", rm)
	}
	if got := cfg.TaskMasterURL(); got != "http://resolute.default.svc:8080" {
		t.Errorf("TaskMasterURL = %q", got)
	}

	for yamlText, want := range map[string]string{
		"resource_manager: {type: kubernetes}":                                             "resource_manager.max_slots_per_pod: is required on Kubernetes",
		"resource_manager: {type: kubernetes, max_slots_per_pod: 8, slot_type: tpu}":       "resource_manager.slot_type: must be gpu or cpu",
		"resource_manager: {type: kubernetes, max_slots_per_pod: 8, slot_type: cpu}":       "resource_manager.slot_resource_requests.cpu: must be more than 0",
		"resource_manager: {type: kubernetes, max_slots_per_pod: 8, default_scheduler: x}": "resource_manager.default_scheduler: must be empty, coscheduler or preemption",
	} {
		_, err := load(t, yamlText, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", yamlText, err, want)
		}
	}
}

func TestTheTaskOriginIsAnotherHostByDefault(t *testing.T) {
	tests := map[string]struct {
		yaml, origin string
		env          map[string]string
		args         []string
		warns        bool
	}{
		"the default master on localhost gets 127.0.0.1 on port+1": {
			origin: "http://127.0.0.1:8081",
		},
		"a master on 127.0.0.1 gets localhost": {
			yaml: "port: 9000\nexternal_url: http://127.0.0.1:9000\n", origin: "http://localhost:9001",
		},
		"TLS makes it https, and tasks_port moves it": {
			yaml: "port: 8443\ntls: {cert: c.pem, key: k.pem}\ntasks_port: 9443\n", origin: "https://127.0.0.1:9443",
		},
		"another master's host name is shared, with a warning": {
			yaml: "external_url: https://resolute.example.com/\n", origin: "https://resolute.example.com:8081", warns: true,
		},
		"tasks_url is taken as it is, from the flag": {
			args: []string{"--tasks-url", "https://tasks.example.com/"}, origin: "https://tasks.example.com",
		},
		"tasks_url from the environment": {
			env: map[string]string{"RESOLUTE_TASKS_URL": "http://tasks.internal:8081"}, origin: "http://tasks.internal:8081",
		},
		"a tasks_url on the master's host name warns": {
			yaml: "external_url: https://ml.example.com\ntasks_url: https://ml.example.com:8443\n", origin: "https://ml.example.com:8443", warns: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := load(t, tc.yaml, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			origin, warning := cfg.TaskOrigin()
			if string(origin) != tc.origin {
				t.Errorf("task origin %q, want %q", origin, tc.origin)
			}
			if tc.warns != (warning != "") {
				t.Errorf("warning %q, want one: %v", warning, tc.warns)
			}
			if tc.warns && !strings.Contains(warning, "set tasks_url to a host name of its own") {
				t.Errorf("the warning does not say what to do: %q", warning)
			}
		})
	}
}

func TestBadTaskOriginsNameTheKey(t *testing.T) {
	for yamlText, want := range map[string]string{
		"tasks_url: tasks.example.com\n":                                             `tasks_url: must start with http:// or https:// (got "tasks.example.com")`,
		"tasks_url: https://tasks.example.com/notebooks\n":                           "tasks_url: must be an origin, without a path",
		"tasks_url: http://localhost:8080\n":                                         "tasks_url: must not be the master's own origin http://localhost:8080",
		"external_url: https://ml.example.com\ntasks_url: https://ml.example.com/\n": "tasks_url: must not be the master's own origin",
		"tasks_url: http://:8081\n":                                                  "tasks_url: must name a host",
		"tasks_port: 8080\n":                                                         "tasks_port: must not be the master's port 8080",
		"tasks_port: 70000\n":                                                        "tasks_port: must be between 1 and 65535 (got 70000)",
		"port: 65535\n":                                                              "tasks_port: defaults to port+1, which is not a port when port is 65535",
		"external_url: ftp://ml.example.com\n":                                       "external_url: must start with http:// or https://",
	} {
		_, err := load(t, yamlText, nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", strings.TrimSpace(yamlText), err, want)
		}
	}
}

func TestATasksURLWithTaskGivesEveryTaskAnOriginOfItsOwn(t *testing.T) {
	tests := map[string]struct {
		yaml, origin, notebook string
	}{
		"a wildcard domain": {
			yaml:   "external_url: https://ml.example.com\ntasks_url: https://{task}.tasks.example.com/\n",
			origin: "https://{task}.tasks.example.com", notebook: "https://notebook-12.tasks.example.com",
		},
		"every *.localhost on one machine": {
			yaml:   "tasks_url: http://{task}.localhost:8081\n",
			origin: "http://{task}.localhost:8081", notebook: "http://notebook-12.localhost:8081",
		},
		"a prefix of a label": {
			yaml:   "tasks_url: https://task-{task}.example.com\n",
			origin: "https://task-{task}.example.com", notebook: "https://task-notebook-12.example.com",
		},
		"a suffix of a label, under TLS": {
			yaml:   "tls: {cert: c.pem, key: k.pem}\ntasks_url: https://{task}-tasks.example.com:8443\n",
			origin: "https://{task}-tasks.example.com:8443", notebook: "https://notebook-12-tasks.example.com:8443",
		},
		"one origin for every task, as before": {
			yaml:   "tasks_url: https://tasks.example.com\n",
			origin: "https://tasks.example.com", notebook: "https://tasks.example.com",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := load(t, tc.yaml, nil)
			if err != nil {
				t.Fatal(err)
			}
			origin, warning := cfg.TaskOrigin()
			if string(origin) != tc.origin || warning != "" {
				t.Errorf("task origin %q (%s), want %q", origin, warning, tc.origin)
			}
			if got := origin.Origin("notebook-12"); got != tc.notebook {
				t.Errorf("notebook-12's origin %q, want %q", got, tc.notebook)
			}
		})
	}
}

func TestBadTasksURLTemplatesNameTheKey(t *testing.T) {
	tests := map[string]struct{ tasksURL, more, want string }{
		"twice":                         {tasksURL: "https://{task}.{task}.example.com", want: "tasks_url: may have {task} only once, in the host"},
		"in the path":                   {tasksURL: "https://tasks.example.com/{task}", want: "tasks_url: may have {task} only in the host"},
		"in the user":                   {tasksURL: "https://{task}@tasks.example.com", want: "tasks_url: must have no user, query or fragment"},
		"in the port":                   {tasksURL: "https://tasks.example.com:{task}", want: "tasks_url: must be a URL like"},
		"in the query":                  {tasksURL: "https://tasks.example.com?t={task}", want: "tasks_url: must have no user, query or fragment"},
		"inside a label":                {tasksURL: "https://a{task}b.example.com", want: "tasks_url: must have {task} as a whole label of the host, or at the start or end of one"},
		"the whole host":                {tasksURL: "http://{task}:8081", want: "tasks_url: must have {task} in a host name below a domain"},
		"the last label":                {tasksURL: "https://tasks.{task}", want: "tasks_url: must have {task} in a host name below a domain"},
		"a label with too little room":  {tasksURL: "https://" + strings.Repeat("x", 33) + "{task}.example.com", want: "tasks_url: leaves too little room for task IDs in the label of {task}"},
		"a path after the host":         {tasksURL: "https://{task}.tasks.example.com/notebooks", want: "tasks_url: must be an origin, without a path"},
		"another scheme":                {tasksURL: "ftp://{task}.tasks.example.com", want: "tasks_url: must start with http:// or https://"},
		"another character in the host": {tasksURL: "https://{task}.tas ks.example.com", want: "tasks_url: must be a URL like"},
		"http under TLS":                {tasksURL: "http://{task}.tasks.example.com", more: "tls: {cert: c.pem, key: k.pem}\n", want: "tasks_url: must start with https:// when tls is set"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, "tasks_url: \""+tc.tasksURL+"\"\n"+tc.more, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// A label of 32 characters besides {task} is just short enough.
	if _, err := load(t, "tasks_url: https://"+strings.Repeat("x", 32)+"{task}.example.com\n", nil); err != nil {
		t.Errorf("a label with room for the longest task ID: %v", err)
	}
}

func TestSecurityKeys(t *testing.T) {
	tests := map[string]struct {
		yaml    string
		env     map[string]string
		args    []string
		min     int
		proxies []string
		prefix  []string
	}{
		"by default passwords need 8 characters and no proxy is trusted": {min: 8},
		"the file lists proxies as CIDRs or single addresses": {
			yaml:    "security: {min_password_length: 12, trusted_proxies: [10.0.0.0/8, 192.0.2.1, '::ffff:198.51.100.0/120']}\n",
			min:     12,
			proxies: []string{"10.0.0.0/8", "192.0.2.1", "::ffff:198.51.100.0/120"},
			prefix:  []string{"10.0.0.0/8", "192.0.2.1/32", "198.51.100.0/24"},
		},
		"a variable gives them comma-separated": {
			env:     map[string]string{"RESOLUTE_SECURITY_TRUSTED_PROXIES": "10.1.0.0/16, fd00::/8", "RESOLUTE_SECURITY_MIN_PASSWORD_LENGTH": "10"},
			min:     10,
			proxies: []string{"10.1.0.0/16", "fd00::/8"},
			prefix:  []string{"10.1.0.0/16", "fd00::/8"},
		},
		"a flag overrides the file": {
			yaml:    "security: {trusted_proxies: [10.0.0.0/8]}\n",
			args:    []string{"--security-trusted-proxies", "127.0.0.1", "--security-min-password-length", "9"},
			min:     9,
			proxies: []string{"127.0.0.1"},
			prefix:  []string{"127.0.0.1/32"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg, err := load(t, tc.yaml, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			var prefixes []string
			for _, p := range cfg.Security.TrustedProxyPrefixes() {
				prefixes = append(prefixes, p.String())
			}
			if cfg.Security.MinPasswordLength != tc.min || !cmp.Equal(cfg.Security.TrustedProxies, tc.proxies) || !cmp.Equal(prefixes, tc.prefix) {
				t.Errorf("min %d, proxies %q (%q); want %d, %q (%q)", cfg.Security.MinPasswordLength,
					cfg.Security.TrustedProxies, prefixes, tc.min, tc.proxies, tc.prefix)
			}
		})
	}
}

func TestSecurityKeysAreValidated(t *testing.T) {
	tests := map[string]struct {
		yaml string
		env  map[string]string
		want string
	}{
		"a minimum of 0 would let a password be removed": {
			yaml: "security: {min_password_length: 0}\n",
			want: "security.min_password_length: must be between 1 and 72, the most bcrypt reads (got 0)"},
		"a minimum past what bcrypt reads": {
			env:  map[string]string{"RESOLUTE_SECURITY_MIN_PASSWORD_LENGTH": "73"},
			want: "security.min_password_length: must be between 1 and 72, the most bcrypt reads (got 73)"},
		"a proxy that is not an address": {
			yaml: "security: {trusted_proxies: [10.0.0.0/8, lb.internal]}\n",
			want: `security.trusted_proxies[1]: expected an address or a CIDR like 10.0.0.0/8, got "lb.internal"`},
		"a list of lists": {
			yaml: "security: {trusted_proxies: [[10.0.0.1]]}\n",
			want: "security.trusted_proxies[0]: expected a string (line 1)"},
		"a map": {
			yaml: "security: {trusted_proxies: {a: b}}\n",
			want: "security.trusted_proxies: expected a list of strings (line 1)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, tc.yaml, tc.env)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v\nwant %q", err, tc.want)
			}
		})
	}
}
