package masterconf

import (
	"strings"
	"testing"
)

func TestKeysOfTheOtherResourceManagerAreRefusedAtStartUp(t *testing.T) {
	tests := map[string]struct {
		yaml string
		want string // "" loads
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
