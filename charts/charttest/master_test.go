package charttest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/e2e/mastertest"
	"github.com/resolute-ml/resolute/k8s"
	"github.com/resolute-ml/resolute/k8s/k8stest"
)

// TestTheChartsMasterYAMLRunsATrialPod starts the master outside the
// cluster with the master.yaml the chart renders (and a kubeconfig instead
// of the in-cluster configuration): a trial becomes a pod on the test
// control plane's nodes and finishes.
func TestTheChartsMasterYAMLRunsATrialPod(t *testing.T) {
	c := k8stest.Start(t)
	ns := c.Namespace(t)
	selector := map[string]string{"charttest.resolute.ai/run": ns}
	nodes := c.AddNodes(t, k8stest.NodeOptions{Count: 1, GPUs: 4, Labels: selector})
	c.RunPods(t, k8stest.RunOptions{Nodes: nodes})

	dbURL, _ := url.Parse(dbtest.NewURL(t))
	m := mastertest.New(t, mastertest.Build(t))
	spec := fmt.Sprintf("{spec: {nodeSelector: {charttest.resolute.ai/run: %s}}}", ns)
	values := fmt.Sprintf(`
maxSlotsPerPod: 4
checkpointStorage: {type: shared_fs, hostPath: %s}
db: {hostAddress: %s, name: %s, user: postgres, password: unused, port: 5432}
taskContainerDefaults: {cpuPodSpec: %s, gpuPodSpec: %s}
# Tasks run on this machine (the test's pod runner): they reach the master here.
determinedMasterHost: localhost
determinedMasterPort: %d
`, t.TempDir(), dbURL.Query().Get("host"), dbURL.Path[1:], spec, spec, m.Port)
	r := template(t, "resolute", ns, values)
	conf := filepath.Join(t.TempDir(), "master.yaml")
	if err := os.WriteFile(conf, []byte(r.MasterYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	// What differs outside the cluster: the kubeconfig, a data directory of
	// the test's own, and no TLS to the test's database.
	m.SetArgs("--config", conf, "--resource-manager-kubeconfig", c.Kubeconfig, "--data-dir", t.TempDir(), "--db-ssl-mode", "disable")
	m.Start()
	token := m.Login("admin")

	id := m.CreateExperiment(token, `
name: from the chart's config
entrypoint: python3 train.py
resources: {slots_per_trial: 2}
hyperparameters: {x: 1, max_steps: 4, validate_every: 2, step_seconds: 0.05}
searcher: {name: single, metric: loss, max_length: {batches: 4}}
max_restarts: 0
`, mastertest.SlowTrial())
	var pod string
	for deadline := time.Now().Add(time.Minute); pod == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		pods, err := c.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: k8s.LabelAllocation})
		if err == nil && len(pods.Items) > 0 && pods.Items[0].Spec.NodeName != "" {
			pod = pods.Items[0].Name + " on " + pods.Items[0].Spec.NodeName
		}
	}
	e := m.WaitDone(token, id, 2*time.Minute)
	if e.State != resolute.StateCompleted {
		t.Fatalf("experiment ended %s\n%s\n%s", e.State, m.Output(),
			m.Get(fmt.Sprintf("/api/v1/trials/%d/logs", m.Trials(token, id)[0].ID), token))
	}
	if !strings.HasSuffix(pod, " on "+nodes[0]) {
		t.Errorf("the trial's pod: %q, want one on %s", pod, nodes[0])
	}
}
