// Package k8s is Resolute's resource manager for Kubernetes: it runs each
// allocation as a ConfigMap and one or more pods, watches them with
// informers, streams their logs into task logs, opens terminals through the
// exec API, and adopts the pods that survived a master restart.
//
// Like local/, it does not decide what runs where: the scheduler admits a
// job only when its whole gang fits the free capacity this package reports
// (node allocatable minus the requests of every pod on the node, Resolute's
// or not), and picks the nodes. Pods are pinned to those nodes with a
// required node affinity on metadata.name, so a gang never half-starts
// because kube-scheduler placed its pods elsewhere.
//
// # Configuration (master.yaml)
//
//	resource_manager:
//	  type: kubernetes
//	  kubeconfig: /path/to/kubeconfig  # empty: in-cluster config
//	  namespace: default               # where pods go unless a pool says otherwise
//	  max_slots_per_pod: 8             # required for GPUs; 0 forbids multi-slot tasks
//	  slot_type: gpu                   # gpu (nvidia.com/gpu) or cpu
//	  slot_resource_requests: {cpu: 1} # CPUs per slot when slot_type is cpu
//	  default_scheduler: ""            # "", coscheduler or preemption
//	  determined_master_host: ""       # the master address tasks use
//	  determined_master_port: 0
//	  determined_master_scheme: http
//	  pending_timeout: 600             # seconds a gang may stay Pending before it is requeued
//	resource_pools:
//	  - pool_name: gpu
//	    kubernetes_namespace: team-a
//	    task_container_defaults: {gpu_pod_spec: {...}, cpu_pod_spec: {...}}
//	task_container_defaults:
//	  cpu_pod_spec: {...}
//	  gpu_pod_spec: {...}
//	  checkpoint_gc_pod_spec: {...}
//
// # Objects
//
// An allocation with id A of task T becomes:
//   - a ConfigMap named after the allocation holding binaryData
//     "context.tar.gz" (the task's context) and "files.tar.gz" (the files
//     the master writes into the work directory, with the harness, which is
//     first on PYTHONPATH, under .resolute/harness);
//   - N pods, N = slots / max_slots_per_pod (or 1), each asking for
//     slots/N nvidia.com/gpu (or slot_resource_requests.cpu × slots/N CPU);
//   - an init container "determined-init-container" that unpacks both
//     archives from the ConfigMap (mounted at /run/determined/configmap) into
//     the work directory /run/determined/workdir (an emptyDir);
//   - the task container "determined-container" running the task's command
//     in that work directory with the DET_* environment (DET_RESOURCES_TYPE
//     is k8s-pod); the pods of a multi-pod allocation first meet at the
//     master's rendezvous.
//
// Pods and ConfigMaps carry the labels "determined" (the allocation id),
// "determined.ai/task_id", "determined.ai/allocation_id",
// "determined.ai/task_type", "determined.ai/user" and
// "determined.ai/resource_pool", so `kubectl get pods -l=determined` lists
// them, and the annotation "resolute.ai/slots" records the slots the
// scheduler gave the pod, for adoption after a restart.
package k8s
