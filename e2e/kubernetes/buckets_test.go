package kubernetes_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/k8s"
	"github.com/resolute-ml/resolute/storage"
	"github.com/resolute-ml/resolute/storage/storagetest"
)

// TestATrialPodAndAGCPodUseABucketOnMinIO: on Kubernetes, a trial's pod
// checkpoints into an S3 bucket (MinIO) and a pod made from
// checkpoint_gc_pod_spec deletes from it the checkpoints the policy does not
// keep, with the keys the master handed it; the bucket is left with
// exactly the latest checkpoint.
func TestATrialPodAndAGCPodUseABucketOnMinIO(t *testing.T) {
	b := storagetest.NewS3Bucket(t)
	k := newCluster(t)
	var mu sync.Mutex
	gcPods := map[string]bool{}
	w, err := k.c.Client.CoreV1().Pods(k.ns).Watch(context.Background(),
		metav1.ListOptions{LabelSelector: k8s.LabelTaskType + "=" + resolute.TaskCheckpointGC})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	go func() {
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && p.Spec.NodeName != "" {
				mu.Lock()
				gcPods[p.Name] = p.Labels[gcLabel] == "true"
				mu.Unlock()
			}
		}
	}()
	conf := fmt.Sprintf(`
name: a bucket on kubernetes
entrypoint: python3 train.py
resources: {slots_per_trial: 1}
hyperparameters: {x: 1, max_steps: 6, validate_every: 2, step_seconds: 0.05}
searcher: {name: single, metric: loss, max_length: {batches: 6}}
max_restarts: 0
checkpoint_storage: {type: s3, bucket: %s, access_key: %s, secret_key: %s, endpoint_url: %q, prefix: k8s,
  save_experiment_best: 0, save_trial_best: 0, save_trial_latest: 1}
`, b.Bucket, b.AccessKey, b.SecretKey, b.Endpoint)
	id := k.create(conf)
	if e := k.waitDone(id, 2*time.Minute); e.State != resolute.StateCompleted {
		t.Fatalf("experiment ended %s\n%s", e.State, k.m.Output())
	}
	var cps resolute.CheckpointsResponse
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		k.m.Call("GET", fmt.Sprintf("/api/v1/experiments/%d/checkpoints", id), k.token, nil, &cps)
		if len(cps.Checkpoints) == 1 && cps.Checkpoints[0].StepsCompleted == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpoints %+v, want the one at step 6 alone\n%s", cps.Checkpoints, k.m.Output())
		}
	}
	cfg, err := expconf.ParseExperiment([]byte(strings.Replace(conf, "name: a bucket", "name: b", 1)))
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.New(t.Context(), cfg.CheckpointStorage)
	if err != nil {
		t.Fatal(err)
	}
	// What the GC pods deleted is gone from the bucket; the kept one is there.
	var gcTasks resolute.TasksResponse
	k.m.Call("GET", "/api/v1/tasks?all=true", k.token, nil, &gcTasks)
	var collected []string
	for _, task := range gcTasks.Tasks {
		if task.Type != resolute.TaskCheckpointGC {
			continue
		}
		if task.State != resolute.TaskTerminated || task.ExitCode == nil || *task.ExitCode != 0 {
			t.Errorf("GC task %s: %s, exit %v\n%s", task.ID, task.State, task.ExitCode, k.m.Get("/api/v1/tasks/"+task.ID+"/logs", k.token))
		}
		logs := k.m.Get("/api/v1/tasks/"+task.ID+"/logs", k.token)
		for _, line := range strings.Split(logs, "\n") {
			if i := strings.Index(line, "deleted checkpoint "); i >= 0 {
				collected = append(collected, strings.Fields(line[i+len("deleted checkpoint "):])[0])
			}
		}
		if strings.Contains(logs, b.SecretKey) {
			t.Errorf("GC task %s's log shows the secret", task.ID)
		}
	}
	if len(collected) != 2 {
		t.Errorf("GC pods deleted %v, want the 2 checkpoints before the last", collected)
	}
	for _, u := range collected {
		if objs, err := st.List(t.Context(), u); err != nil || len(objs) != 0 {
			t.Errorf("collected checkpoint %s is still in the bucket: %v %v", u, objs, err)
		}
	}
	if objs, err := st.List(t.Context(), cps.Checkpoints[0].UUID); err != nil || len(objs) == 0 {
		t.Errorf("the kept checkpoint is not in the bucket: %v %v", objs, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gcPods) == 0 {
		t.Fatal("no CHECKPOINT_GC pod was seen")
	}
	for name, fromSpec := range gcPods {
		if !fromSpec {
			t.Errorf("GC pod %s was not made from checkpoint_gc_pod_spec", name)
		}
	}
}
