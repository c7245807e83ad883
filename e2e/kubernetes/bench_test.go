package kubernetes_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/db/dbtest"
	"github.com/resolute-ml/resolute/e2e/mastertest"
	"github.com/resolute-ml/resolute/k8s/k8stest"
)

// BenchmarkKubernetesAdmission is the Kubernetes issue's figures: a master
// on 64 simulated 8-GPU nodes gets an experiment of 1,000 single-slot
// trials and admits them as pods until the 512 GPUs are taken (pods/s, from
// submission to the 512th pod created); then 5,000 more pods that Resolute
// did not start are created on those nodes and the master's RSS is read
// while it watches them all.
func BenchmarkKubernetesAdmission(b *testing.B) {
	c := k8stest.Start(b)
	ns := c.Namespace(b)
	selector := map[string]string{"bench.resolute.ai/run": ns}
	nodes := c.AddNodes(b, k8stest.NodeOptions{Count: 64, GPUs: 8, CPU: "64", Memory: "512Gi", Labels: selector})

	dir := b.TempDir()
	dbURL, _ := url.Parse(dbtest.NewURL(b))
	spec := fmt.Sprintf(`{spec: {nodeSelector: {bench.resolute.ai/run: %s}}}`, ns)
	conf := fmt.Sprintf(`
data_dir: %s
db: {host: %s, name: %s, ssl_mode: disable}
log: {level: warn}
resource_manager: {type: kubernetes, kubeconfig: %s, namespace: %s, max_slots_per_pod: 8}
task_container_defaults: {cpu_pod_spec: %s, gpu_pod_spec: %s}
`, filepath.Join(dir, "data"), dbURL.Query().Get("host"), dbURL.Path[1:], c.Kubeconfig, ns, spec, spec)
	confPath := filepath.Join(dir, "master.yaml")
	os.WriteFile(confPath, []byte(conf), 0o600)
	m := mastertest.New(b, mastertest.Build(b), "--config", confPath)
	m.Start()
	if out := os.Getenv("RESOLUTE_BENCH_MASTER_LOG"); out != "" { // where the master's log goes, to look into a slow run
		defer func() { os.WriteFile(out, []byte(m.Output()), 0o644) }()
	}
	token := m.Login("admin")

	config := `
name: admission
entrypoint: sleep 3600
resources: {slots_per_trial: 1}
hyperparameters: {x: {type: double, minval: 0, maxval: 1}}
searcher: {name: random, metric: loss, max_trials: 1000, max_concurrent_trials: 1000, max_length: {batches: 1}}
max_restarts: 0
`
	start := time.Now()
	var created resolute.ExperimentResponse
	if code := m.Call("POST", "/api/v1/experiments", token, resolute.CreateExperimentRequest{
		ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: config}}, &created); code != 200 {
		b.Fatalf("create: %d\n%s", code, m.Output())
	}
	const capacity = 64 * 8
	var admitted int
	for deadline := time.Now().Add(5 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		list, err := c.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "determined"})
		if err != nil {
			b.Fatal(err)
		}
		admitted = len(list.Items)
		if admitted >= capacity {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d pods after 5 minutes\n%s", admitted, m.Output())
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(capacity)/elapsed.Seconds(), "pods/s")
	b.Logf("admitted %d single-slot trials as pods on 64 nodes × 8 GPUs in %s: %.0f pods/s (the other %d trials wait for GPUs)",
		capacity, elapsed.Round(time.Millisecond), float64(capacity)/elapsed.Seconds(), 1000-capacity)
	rssAdmitted := rssMiB(b, m.PID())
	b.Logf("the master used %.1f s of CPU so far", cpuSeconds(b, m.PID()))

	// 5,000 more pods, not Resolute's, bound to the nodes.
	cfg := *c.Config
	cfg.QPS, cfg.Burst = 500, 1000
	client := kubernetes.NewForConfigOrDie(&cfg)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other-" + strconv.Itoa(i)}, Spec: corev1.PodSpec{
					NodeName:   nodes[i%len(nodes)],
					Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
				if _, err := client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for i := range 5000 {
		work <- i
	}
	close(work)
	wg.Wait()
	time.Sleep(5 * time.Second) // the master's informers catch up
	rss := rssMiB(b, m.PID())
	b.ReportMetric(rss, "RSS-MiB")
	b.Logf("master RSS: %.0f MiB with %d of its pods, %.0f MiB watching %d pods in all", rssAdmitted, capacity, rss, capacity+5000)
}

// rssMiB reads a process's resident set size.
func rssMiB(tb testing.TB, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.Fields(rest)[0])
			return float64(kb) / 1024
		}
	}
	tb.Fatal("no VmRSS")
	return 0
}

// cpuSeconds is the user and system CPU time a process has used.
func cpuSeconds(tb testing.TB, pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	f := strings.Fields(string(data)[strings.LastIndexByte(string(data), ')')+2:])
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return float64(utime+stime) / 100 // clock ticks of 1/100 s
}
