package masterconf

import (
	"strings"
	"testing"
)

func TestKeysOfTheOtherResourceManagerAreRefusedAtStartUp(t *testing.T) {
	tests := map[string]struct {
		yaml, want string // want "" loads
	}{
		"a kubeconfig on the local resource manager": {
			yaml: "resource_manager: {type: local, kubeconfig: /etc/kube.yaml}\n",
			want: "resource_manager.kubeconfig: not supported on the local resource manager (a Kubernetes key",
		},
		"max_slots_per_pod on the local resource manager": {
			yaml: "resource_manager: {max_slots_per_pod: 8}\n",
			want: "resource_manager.max_slots_per_pod: not supported on the local resource manager",
		},
		"a pool's namespace on the local resource manager": {
			yaml: "resource_pools: [{pool_name: a, kubernetes_namespace: ml}]\n",
			want: "resource_pools[0].kubernetes_namespace: not supported on the local resource manager",
		},
		"a pod spec default on the local resource manager": {
			yaml: "task_container_defaults: {cpu_pod_spec: {kind: Pod}}\n",
			want: "task_container_defaults.cpu_pod_spec: not supported on the local resource manager (tasks run as processes",
		},
		"a pool's registry credentials on the local resource manager": {
			yaml: "resource_pools: [{pool_name: a, task_container_defaults: {registry_auth: {username: u}}}]\n",
			want: "resource_pools[0].task_container_defaults.registry_auth: not supported on the local resource manager",
		},
		"a slot count on Kubernetes": {
			yaml: "resource_manager: {type: kubernetes, max_slots_per_pod: 1, slots: 4}\n",
			want: "resource_manager.slots: not supported on the Kubernetes resource manager (a key of the local resource manager",
		},
		"kept work directories on Kubernetes": {
			yaml: "resource_manager: {type: kubernetes, max_slots_per_pod: 1, keep_work_dirs: true}\n",
			want: "resource_manager.keep_work_dirs: not supported on the Kubernetes resource manager",
		},
		"a pool's slot ids on Kubernetes": {
			yaml: "resource_manager: {type: kubernetes, max_slots_per_pod: 1}\nresource_pools: [{pool_name: a, slot_ids: [0]}]\n",
			want: "resource_pools[0].slot_ids: not supported on the Kubernetes resource manager",
		},
		"Kubernetes keys on Kubernetes load": {
			yaml: "resource_manager: {type: kubernetes, max_slots_per_pod: 1, namespace: ml, pending_timeout: 60}\n" +
				"resource_pools: [{pool_name: a, kubernetes_namespace: ml2, task_container_defaults: {gpu_pod_spec: {kind: Pod}}}]\n",
		},
		"local keys on the local resource manager load": {
			yaml: "resource_manager: {slots: 2, keep_work_dirs: true}\nresource_pools: [{pool_name: a, slots: 1}, {pool_name: b}]\n",
		},
	}
	// Every key of the other resource manager, each alone.
	for _, key := range []string{"kubeconfig: /k", "namespace: ml", "default_namespace: ml", "max_slots_per_pod: 8", "slot_type: cpu",
		"slot_resource_requests: {cpu: 2}", "default_scheduler: coscheduler", "pending_timeout: 60"} {
		name, _, _ := strings.Cut(key, ":")
		tests["resource_manager."+name+" on the local resource manager"] = struct{ yaml, want string }{
			"resource_manager: {" + key + "}\n", "resource_manager." + name}
	}
	for _, key := range []string{"cpu_pod_spec", "gpu_pod_spec", "checkpoint_gc_pod_spec", "registry_auth", "force_pull_image",
		"add_capabilities", "drop_capabilities", "devices", "shm_size_bytes"} {
		tests["task_container_defaults."+key+" on the local resource manager"] = struct{ yaml, want string }{
			"task_container_defaults: {" + key + ": {}}\n", "task_container_defaults." + key + ": not supported on the local resource manager"}
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, tc.yaml, nil)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestTheDefaultPoolsAndTheMastersAddressForTasksAreTheConfigured:
// resource_manager.default_compute_resource_pool and
// default_aux_resource_pool choose where work without a pool goes, and
// determined_master_host, determined_master_port and
// determined_master_scheme the address tasks reach the master at.
func TestTheDefaultPoolsAndTheMastersAddressForTasksAreTheConfigured(t *testing.T) {
	cfg, err := load(t, "port: 8080\nresource_manager: {default_compute_resource_pool: gpus, default_aux_resource_pool: cpus,\n"+
		"  determined_master_host: master.svc, determined_master_port: 9443, determined_master_scheme: https}\n"+
		"resource_pools: [{pool_name: gpus}, {pool_name: cpus}]\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ComputePool() != "gpus" || cfg.AuxPool() != "cpus" {
		t.Errorf("compute pool %q, aux pool %q", cfg.ComputePool(), cfg.AuxPool())
	}
	if got := cfg.TaskMasterURL(); got != "https://master.svc:9443" {
		t.Errorf("tasks reach the master at %s", got)
	}
	cfg, _ = load(t, "port: 8080\nresource_manager: {determined_master_host: master.svc}\n", nil)
	if got := cfg.TaskMasterURL(); got != "http://master.svc:8080" {
		t.Errorf("with only the host, tasks reach the master at %s", got)
	}
}
