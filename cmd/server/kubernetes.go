package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/harness"
	"github.com/resolute-ml/resolute/k8s"
	"github.com/resolute-ml/resolute/masterconf"
)

// startKubernetes starts the Kubernetes resource manager: every allocation
// becomes pods in the pool's namespace, with the harness among its files;
// pods that survived a restart are adopted by label.
func startKubernetes(ctx context.Context, cfg masterconf.Config, database *db.DB, logger *slog.Logger) (control.ResourceManager, []masterconf.Pool, error) {
	rc := cfg.ResourceManager
	var restCfg *rest.Config
	var err error
	if rc.Kubeconfig != "" {
		restCfg, err = clientcmd.BuildConfigFromFlags("", rc.Kubeconfig)
	} else {
		restCfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("resource_manager.kubeconfig: %w", err)
	}
	// client-go's default of 5 requests a second would admit 2 pods a second.
	restCfg.QPS, restCfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	confPools, err := cfg.Pools(0)
	if err != nil {
		return nil, nil, err
	}
	top, err := podSpecs(cfg.TaskContainerDefaults, "task_container_defaults")
	if err != nil {
		return nil, nil, err
	}
	var pools []k8s.Pool
	for i, p := range confPools {
		kp := top
		kp.Name = p.Name
		if i < len(cfg.ResourcePools) {
			rp := cfg.ResourcePools[i]
			kp.Namespace = rp.KubernetesNamespace
			if rp.TaskContainerDefaults != nil {
				own, err := podSpecs(rp.TaskContainerDefaults, fmt.Sprintf("resource_pools[%d].task_container_defaults", i))
				if err != nil {
					return nil, nil, err
				}
				// A pool's task_container_defaults replace the master's.
				kp.CPUPodSpec, kp.GPUPodSpec, kp.GCPodSpec = own.CPUPodSpec, own.GPUPodSpec, own.GCPodSpec
			}
		}
		pools = append(pools, kp)
	}
	slotType := rc.SlotType
	if slotType == "" || slotType == "cuda" {
		slotType = "gpu"
	}
	cpu := resource.MustParse(strconv.FormatFloat(rc.SlotResourceRequests.CPU, 'f', -1, 64))
	// Workspaces' namespaces are watched from the start, so that their
	// pods' events after a restart are read too.
	wsNamespaces, err := database.WorkspaceNamespaces(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("workspace namespaces: %w", err)
	}
	rm, err := k8s.New(ctx, k8s.Options{Client: client, Config: restCfg, Namespace: rc.KubernetesNamespace(), Pools: pools,
		WorkspaceNamespaces: wsNamespaces,
		MaxSlotsPerPod:      rc.MaxSlotsPerPod, SlotType: slotType, CPUPerSlot: cpu, DefaultScheduler: rc.DefaultScheduler,
		PendingTimeout: time.Duration(rc.PendingTimeout) * time.Second, Harness: harness.Files,
		Logger: logger.With("component", "k8s")})
	if err != nil {
		return nil, nil, fmt.Errorf("kubernetes resource manager: %w", err)
	}
	logger.Info("kubernetes resource manager ready", "namespace", rc.KubernetesNamespace(), "slots", rm.TotalSlots(),
		"slot_type", slotType, "max_slots_per_pod", rc.MaxSlotsPerPod)
	return rm, confPools, nil
}

// podSpecs reads the cpu_pod_spec, gpu_pod_spec and checkpoint_gc_pod_spec
// of a task_container_defaults block.
func podSpecs(tcd map[string]any, path string) (k8s.Pool, error) {
	var p k8s.Pool
	for key, dst := range map[string]**corev1.Pod{"cpu_pod_spec": &p.CPUPodSpec, "gpu_pod_spec": &p.GPUPodSpec,
		"checkpoint_gc_pod_spec": &p.GCPodSpec} {
		m, ok := tcd[key].(map[string]any)
		if !ok {
			continue
		}
		pod, err := k8s.PodFromMap(m)
		if err != nil {
			return p, fmt.Errorf("%s.%s: %w", path, key, err)
		}
		*dst = pod
	}
	return p, nil
}
