package k8stest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigEnv names the kubeconfig of a running control plane that tests
// use instead of starting their own (scripts/test.sh sets it).
const KubeconfigEnv = "RESOLUTE_TEST_KUBECONFIG"

// Cluster is a running Kubernetes control plane.
type Cluster struct {
	// Kubeconfig is the path of a kubeconfig file for the cluster.
	Kubeconfig string
	// Config is the client configuration from Kubeconfig.
	Config *rest.Config
	// Client is a clientset for Config.
	Client kubernetes.Interface

	dynamic dynamic.Interface
}

var (
	startOnce  sync.Once
	shared     *Cluster
	startErr   error
	privateDir string // the state directory of a control plane this process started
)

// Start returns the test control plane: the one RESOLUTE_TEST_KUBECONFIG
// names, or else one this process starts on first use with scripts/k8s.sh
// (about 5 seconds) and stops in Main. It fails the test when there is none.
//
// The first start on a machine builds the binaries, which takes about ten
// minutes on two cores, longer than go test's default timeout allows:
// `make setup-test` (or scripts/k8s.sh build) does it beforehand.
func Start(t testing.TB) *Cluster {
	t.Helper()
	startOnce.Do(func() { shared, startErr = start() })
	if startErr != nil {
		t.Fatalf("k8stest: no Kubernetes control plane: %v", startErr)
	}
	return shared
}

// Main runs the tests of a package and then stops the control plane that
// Start started, if it did. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the control plane that Start started for this process, if any.
// Main calls it.
func Stop() {
	if privateDir == "" {
		return
	}
	cmd := exec.Command("bash", scriptPath(), "down")
	cmd.Env = append(os.Environ(), "RESOLUTE_K8S_DIR="+filepath.Join(privateDir, "run"))
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "k8stest: stopping the control plane: %v\n%s", err, out)
	}
	os.RemoveAll(privateDir)
	privateDir = ""
}

func start() (*Cluster, error) {
	if kc := os.Getenv(KubeconfigEnv); kc != "" {
		return connect(kc)
	}
	script := scriptPath()
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("set %s or run from the repository (no %s): %w", KubeconfigEnv, script, err)
	}
	dir, err := os.MkdirTemp("", "resolute-k8stest-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("bash", script, "up")
	cmd.Env = append(os.Environ(),
		"RESOLUTE_K8S_DIR="+filepath.Join(dir, "run"),
		fmt.Sprintf("RESOLUTE_K8S_WATCH_PID=%d", os.Getpid()))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	privateDir = dir
	if _, err := cmd.Output(); err != nil {
		Stop() // up stops what it started when it fails, unless it was killed
		return nil, fmt.Errorf("scripts/k8s.sh up: %w\n%s", err, stderr.String())
	}
	c, err := connect(filepath.Join(dir, "run", "kubeconfig"))
	if err != nil {
		Stop()
		return nil, err
	}
	return c, nil
}

func connect(kubeconfig string) (*Cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	// Parallel tests share the client; client-go's default 5 QPS would make
	// them wait on each other.
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Kubeconfig: kubeconfig, Config: cfg, Client: client, dynamic: dyn}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", nil
	})
	if err != nil {
		return nil, fmt.Errorf("the apiserver of %s is not ready: %w", kubeconfig, err)
	}
	return c, nil
}

// scriptPath finds scripts/k8s.sh from this source file, or else from the
// working directory up.
func scriptPath() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		p := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "k8s.sh")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, "scripts", "k8s.sh")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "scripts/k8s.sh"
		}
		dir = parent
	}
}

// Namespace creates a namespace for the test and deletes it, and the pods
// left in it, when the test ends.
func (c *Cluster) Namespace(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: uniqueName(t, 50)}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("k8stest: creating namespace: %v", err)
	}
	t.Cleanup(func() {
		// Without a kube-controller-manager nothing empties a deleted
		// namespace: its pods and config maps go here, then the namespace
		// is finalized by hand (what else it held stays in etcd, unseen).
		zero := int64(0)
		core := c.Client.CoreV1()
		_ = core.Pods(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
		_ = core.ConfigMaps(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		if err := core.Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("k8stest: deleting namespace %s: %v", ns.Name, err)
			return
		}
		if got, err := core.Namespaces().Get(ctx, ns.Name, metav1.GetOptions{}); err == nil {
			got.Spec.Finalizers = nil
			if _, err := core.Namespaces().Finalize(ctx, got, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("k8stest: finalizing namespace %s: %v", ns.Name, err)
			}
		}
	})
	return ns.Name
}

// NodeOptions describes the nodes AddNodes adds.
type NodeOptions struct {
	// Count is the number of nodes (default 1).
	Count int
	// GPUs is each node's nvidia.com/gpu capacity (none when 0).
	GPUs int
	// CPU is each node's CPU capacity (default "8").
	CPU string
	// Memory is each node's memory capacity (default "32Gi").
	Memory string
	// Labels are added to each node's labels.
	Labels map[string]string
	// Taints are each node's taints.
	Taints []corev1.Taint
}

// AddNodes adds nodes that kwok manages, named after the test, waits until
// they are Ready and deletes them when the test ends.
func (c *Cluster) AddNodes(t testing.TB, opts NodeOptions) []string {
	t.Helper()
	ctx := context.Background()
	if opts.Count == 0 {
		opts.Count = 1
	}
	if opts.CPU == "" {
		opts.CPU = "8"
	}
	if opts.Memory == "" {
		opts.Memory = "32Gi"
	}
	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(opts.CPU),
		corev1.ResourceMemory: resource.MustParse(opts.Memory),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	if opts.GPUs > 0 {
		resources["nvidia.com/gpu"] = *resource.NewQuantity(int64(opts.GPUs), resource.DecimalSI)
	}
	port := c.kwokPort()
	prefix := uniqueName(t, 50)
	var names []string
	for i := range opts.Count {
		name := fmt.Sprintf("%s-%d", prefix, i)
		labels := map[string]string{
			"kubernetes.io/hostname": name,
			"kubernetes.io/os":       "linux",
			"kubernetes.io/arch":     "amd64",
			"type":                   "kwok",
		}
		for k, v := range opts.Labels {
			labels[k] = v
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Labels:      labels,
				Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			},
			Spec: corev1.NodeSpec{Taints: opts.Taints},
			Status: corev1.NodeStatus{
				Allocatable: resources.DeepCopy(),
				Capacity:    resources.DeepCopy(),
				Addresses: []corev1.NodeAddress{
					{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
					{Type: corev1.NodeHostName, Address: name},
				},
				DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: port}},
			},
		}
		if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatalf("k8stest: creating node: %v", err)
		}
		names = append(names, name)
		t.Cleanup(func() {
			// The node's pods go first, while kwok still knows the node:
			// only then does it return their IPs to its pool.
			zero := int64(0)
			pods, _ := c.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{
				FieldSelector: fields.OneTermEqualSelector("spec.nodeName", name).String()})
			if pods != nil {
				for _, p := range pods.Items {
					_ = c.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
				}
				if len(pods.Items) > 0 {
					time.Sleep(100 * time.Millisecond)
				}
			}
			if err := c.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("k8stest: deleting node %s: %v", name, err)
			}
		})
	}
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			node, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("k8stest: node %s did not become Ready (is kwok running?): %v", name, err)
		}
	}
	return names
}

// kwokPort is the port of kwok's kubelet API, from the env file that
// scripts/k8s.sh writes beside the kubeconfig; 10250 when there is none
// (kwok sets the node's port itself then).
func (c *Cluster) kwokPort() int32 {
	data, err := os.ReadFile(filepath.Join(filepath.Dir(c.Kubeconfig), "env"))
	if err == nil {
		for line := range strings.Lines(string(data)) {
			var port int32
			if _, err := fmt.Sscanf(line, "KWOK_PORT=%d", &port); err == nil {
				return port
			}
		}
	}
	return 10250
}

// uniqueName is a DNS label made of the test's name and a random suffix.
func uniqueName(t testing.TB, max int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if s := b.String(); s != "" && !strings.HasSuffix(s, "-") {
				b.WriteByte('-')
			}
		}
	}
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	name := strings.Trim(b.String(), "-")
	if len(name) > max-7 {
		name = strings.TrimRight(name[:max-7], "-")
	}
	if name == "" {
		name = "t"
	}
	return name + "-" + hex.EncodeToString(suffix)
}
