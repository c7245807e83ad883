package k8stest

import (
	"context"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// kwok's Logs and Exec tell its kubelet API where a pod's container logs are
// and how to run commands "in" the pod; the runner makes one of each per pod.
var (
	logsResource  = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "logs"}
	execsResource = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "execs"}
)

// createLogs points kwok's logs of the pod at the runner's log files.
func (pr *podRun) createLogs(ctx context.Context, containers []*corev1.Container) error {
	if err := os.MkdirAll(filepath.Join(pr.dir, "logs"), 0o755); err != nil {
		return err
	}
	var logs []any
	for _, ctr := range containers {
		path := pr.logPath(ctr.Name)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		f.Close()
		logs = append(logs, map[string]any{"containers": []any{ctr.Name}, "logsFile": path, "follow": true})
	}
	return pr.apply(ctx, logsResource, "Logs", map[string]any{"logs": logs})
}

// createExec lets `kubectl exec` into the pod run commands locally in dir
// with env.
func (pr *podRun) createExec(ctx context.Context, dir string, env []string) error {
	var envs []any
	for _, kv := range env {
		for i := range len(kv) {
			if kv[i] == '=' {
				envs = append(envs, map[string]any{"name": kv[:i], "value": kv[i+1:]})
				break
			}
		}
	}
	return pr.apply(ctx, execsResource, "Exec", map[string]any{
		"execs": []any{map[string]any{"local": map[string]any{"workDir": dir, "envs": envs}}},
	})
}

// apply creates or replaces the kwok object of the pod's name.
func (pr *podRun) apply(ctx context.Context, gvr schema.GroupVersionResource, kind string, spec map[string]any) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       kind,
		"metadata":   map[string]any{"name": pr.name, "namespace": pr.ns},
		"spec":       spec,
	}}
	res := pr.r.c.dynamic.Resource(gvr).Namespace(pr.ns)
	made, err := res.Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		// Left by an earlier pod of the name: a new object (a new UID) keeps
		// that pod's run from deleting this one.
		if err := res.Delete(ctx, pr.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		made, err = res.Create(ctx, obj, metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	pr.mu.Lock()
	if pr.kwokObjects == nil {
		pr.kwokObjects = map[schema.GroupVersionResource]types.UID{}
	}
	pr.kwokObjects[gvr] = made.GetUID()
	pr.mu.Unlock()
	return nil
}

// deleteKwokObjects deletes the pod's Logs and Exec, unless a later pod of
// the same name has replaced them.
func (pr *podRun) deleteKwokObjects(ctx context.Context) {
	pr.mu.Lock()
	objects := pr.kwokObjects
	pr.kwokObjects = nil
	pr.mu.Unlock()
	for gvr, uid := range objects {
		_ = pr.r.c.dynamic.Resource(gvr).Namespace(pr.ns).Delete(ctx, pr.name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	}
}

func (pr *podRun) logPath(container string) string {
	return filepath.Join(pr.dir, "logs", container+".log")
}
