package k8stest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/resolute-ml/resolute/k8s/k8stest"
)

func TestMain(m *testing.M) { k8stest.Main(m) }

func TestControlPlaneIsHealthy(t *testing.T) {
	t.Parallel()
	c := k8stest.Start(t)
	ctx := context.Background()
	body, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil || string(body) != "ok" {
		t.Fatalf("/readyz: %q, %v", body, err)
	}
	v, err := c.Client.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.GitVersion, "v1.") {
		t.Errorf("server version %q", v.GitVersion)
	}
	t.Logf("kube-apiserver %s", v.GitVersion)
}

// isolated gives a test a namespace and nodes of its own, labelled so that
// only its pods go there.
func isolated(t *testing.T, c *k8stest.Cluster, count int) (ns string, nodes []string, selector map[string]string) {
	ns = c.Namespace(t)
	selector = map[string]string{"k8stest.resolute.ai/test": ns}
	nodes = c.AddNodes(t, k8stest.NodeOptions{Count: count, GPUs: 2, Labels: selector})
	return ns, nodes, selector
}

func waitPod(t *testing.T, c *k8stest.Cluster, ns, name string, what string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		pod, err = c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return ok(pod), nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s did not become %s: %v (status %+v)", ns, name, what, err, statusOf(pod))
	}
	return pod
}

func statusOf(pod *corev1.Pod) any {
	if pod == nil {
		return nil
	}
	return pod.Status
}

func createPod(t *testing.T, c *k8stest.Cluster, ns string, pod *corev1.Pod) {
	t.Helper()
	if _, err := c.Client.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod: %v", err)
	}
}

func shPod(name string, selector map[string]string, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeSelector:  selector,
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:    "determined-container",
				Image:   "busybox",
				Command: []string{"sh", "-c", script},
			}},
		},
	}
}

func TestSchedulerBindsPodToTheTestsNode(t *testing.T) {
	t.Parallel()
	c := k8stest.Start(t)
	ns, nodes, selector := isolated(t, c, 2)
	createPod(t, c, ns, shPod("p", selector, "true"))
	pod := waitPod(t, c, ns, "p", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if pod.Spec.NodeName != nodes[0] && pod.Spec.NodeName != nodes[1] {
		t.Errorf("pod on node %q, want one of %v", pod.Spec.NodeName, nodes)
	}
	if pod.Status.PodIP == "" {
		t.Error("pod has no IP")
	}
	node, err := c.Client.CoreV1().Nodes().Get(context.Background(), nodes[0], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if gpus := node.Status.Allocatable["nvidia.com/gpu"]; gpus.Value() != 2 {
		t.Errorf("node allocatable nvidia.com/gpu = %s, want 2", gpus.String())
	}
}

func TestRunnerRunsInitContainerThenMainAndReportsExitCodeAndLogs(t *testing.T) {
	t.Parallel()
	c := k8stest.Start(t)
	ctx := context.Background()
	ns, nodes, selector := isolated(t, c, 1)
	c.RunPods(t, k8stest.RunOptions{Nodes: nodes})

	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "files"},
		Data:       map[string]string{"greeting": "hello from a configmap\n"},
		BinaryData: map[string][]byte{"blob.bin": {0, 1, 2}},
	}
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := shPod("task", selector, `cat greeting; sleep 1; echo "on $NODE as $POD in $NS" >&2; test -f /run/determined/workdir/blob.bin || exit 9; exit 3`)
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "files"}}}},
		{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	pod.Spec.InitContainers = []corev1.Container{{
		Name:    "determined-init-container",
		Image:   "busybox",
		Command: []string{"sh", "-c", "cp /run/determined/configmap/greeting /run/determined/configmap/blob.bin /run/determined/workdir/"},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "cm", MountPath: "/run/determined/configmap"},
			{Name: "work", MountPath: "/run/determined/workdir"},
		},
	}}
	main := &pod.Spec.Containers[0]
	main.WorkingDir = "/run/determined/workdir"
	main.VolumeMounts = []corev1.VolumeMount{{Name: "work", MountPath: "/run/determined/workdir"}}
	main.Env = []corev1.EnvVar{
		{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
	}
	createPod(t, c, ns, pod)

	// A follow started once the pod runs ends when the task exits. (Before
	// the pod is bound the apiserver answers with no logs at all; until the
	// runner has started the container kwok answers with an error.)
	logs := make(chan string, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		for ctx.Err() == nil {
			if p, err := c.Client.CoreV1().Pods(ns).Get(ctx, "task", metav1.GetOptions{}); err != nil || p.Status.Phase == corev1.PodPending {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			rc, err := c.Client.CoreV1().Pods(ns).GetLogs("task", &corev1.PodLogOptions{Container: "determined-container", Follow: true}).Stream(ctx)
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				logs <- "error: " + err.Error()
			} else {
				logs <- string(b)
			}
			return
		}
		logs <- "timed out"
	}()

	got := waitPod(t, c, ns, "task", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	var code int32 = -1
	for _, st := range got.Status.ContainerStatuses {
		if st.Name == "determined-container" && st.State.Terminated != nil {
			code = st.State.Terminated.ExitCode
		}
	}
	if code != 3 {
		t.Errorf("exit code %d, want 3; status %+v", code, got.Status)
	}
	want := "hello from a configmap\non " + got.Spec.NodeName + " as task in " + ns + "\n"
	select {
	case s := <-logs:
		if s != want {
			t.Errorf("followed logs %q, want %q", s, want)
		}
	case <-time.After(60 * time.Second):
		t.Error("following the logs did not end")
	}
	b, err := c.Client.CoreV1().Pods(ns).GetLogs("task", &corev1.PodLogOptions{Container: "determined-container"}).DoRaw(ctx)
	if err != nil || string(b) != want {
		t.Errorf("logs %q, %v; want %q", b, err, want)
	}
}

func TestRunnerExecRunsInThePodsWorkingDirectory(t *testing.T) {
	t.Parallel()
	c := k8stest.Start(t)
	ns, nodes, selector := isolated(t, c, 1)
	c.RunPods(t, k8stest.RunOptions{Nodes: nodes})
	pod := shPod("shell", selector, "echo ready > marker; exec sleep 300")
	pod.Spec.Containers[0].WorkingDir = "/run/determined/workdir"
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "GREETING", Value: "hi"}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "work", MountPath: "/run/determined/workdir"}}
	pod.Spec.Volumes = []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	createPod(t, c, ns, pod)
	waitPod(t, c, ns, "shell", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })

	for name, newExecutor := range map[string]func(*testing.T, *http.Request) remotecommand.Executor{
		"websocket": func(t *testing.T, req *http.Request) remotecommand.Executor {
			e, err := remotecommand.NewWebSocketExecutor(c.Config, "GET", req.URL.String())
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
		"spdy": func(t *testing.T, req *http.Request) remotecommand.Executor {
			e, err := remotecommand.NewSPDYExecutor(c.Config, "POST", req.URL)
			if err != nil {
				t.Fatal(err)
			}
			return e
		},
	} {
		t.Run(name, func(t *testing.T) {
			req := c.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name("shell").SubResource("exec").
				VersionedParams(&corev1.PodExecOptions{
					Container: "determined-container",
					Command:   []string{"sh", "-c", `cat marker; echo "$GREETING"; exit 4`},
					Stdout:    true,
					Stderr:    true,
				}, scheme.ParameterCodec)
			var stdout, stderr bytes.Buffer
			var err error
			// The runner sets the exec up when it starts the process, just
			// after kwok reports the pod Running.
			for range 100 {
				stdout.Reset()
				stderr.Reset()
				err = newExecutor(t, &http.Request{URL: req.URL()}).StreamWithContext(context.Background(),
					remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
				if stdout.Len() > 0 {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if stdout.String() != "ready\nhi\n" {
				t.Errorf("exec stdout %q, stderr %q, err %v", stdout.String(), stderr.String(), err)
			}
			if err == nil || !strings.Contains(err.Error(), "exit code 4") {
				t.Errorf("exec error %v, want exit code 4", err)
			}
		})
	}

	t.Run("terminal", func(t *testing.T) {
		req := c.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name("shell").SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{
				Container: "determined-container",
				// kwok closes the terminal as soon as the command ends,
				// sometimes before it has passed the output on.
				Command: []string{"sh", "-c", `tty >/dev/null && echo "a terminal in $(basename "$PWD")"; sleep 0.5`},
				Stdin:   true,
				Stdout:  true,
				TTY:     true,
			}, scheme.ParameterCodec)
		e, err := remotecommand.NewWebSocketExecutor(c.Config, "GET", req.URL().String())
		if err != nil {
			t.Fatal(err)
		}
		var stdout bytes.Buffer
		err = e.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdin: strings.NewReader(""), Stdout: &stdout, Tty: true})
		if got := strings.TrimSpace(stdout.String()); got != "a terminal in workdir" || err != nil {
			t.Errorf("exec with a terminal: %q, %v", got, err)
		}
	})
}

func TestRunnerTerminatesTheProcessOfADeletedPod(t *testing.T) {
	t.Parallel()
	c := k8stest.Start(t)
	ctx := context.Background()
	ns, nodes, selector := isolated(t, c, 1)
	c.RunPods(t, k8stest.RunOptions{Nodes: nodes})
	shared := t.TempDir()
	// Kubernetes reduces $$ in a command to $, so $$$$ is the shell's $$.
	pod := shPod("victim", selector, `echo $$$$ > /shared/pid; trap 'echo TERM > /shared/signal; exit 0' TERM; while true; do sleep 0.05; done`)
	pod.Spec.Volumes = []corev1.Volume{{Name: "shared", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: shared}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "shared", MountPath: "/shared"}}
	createPod(t, c, ns, pod)

	var pid int
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		b, err := os.ReadFile(filepath.Join(shared, "pid"))
		if err != nil {
			return false, nil
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the pod's process did not start: %v", err)
	}
	grace := int64(10)
	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, "victim", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().Pods(ns).Get(ctx, "victim", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("the deleted pod did not go: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(shared, "signal")); err != nil || string(b) != "TERM\n" {
		t.Errorf("the process did not get SIGTERM: %q, %v", b, err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("process %d still runs", pid)
	}
}

func TestRunnerProcessIsReachableAtThePodIP(t *testing.T) {
	t.Parallel()
	c := k8stest.Start(t)
	ns, nodes, selector := isolated(t, c, 1)
	harness := t.TempDir()
	if err := os.WriteFile(filepath.Join(harness, "hello.txt"), []byte("hello over the pod network"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.RunPods(t, k8stest.RunOptions{Nodes: nodes, PathMap: map[string]string{"/opt/resolute/harness": harness}})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	pod := shPod("server", selector, fmt.Sprintf(`cd /opt/resolute/harness && exec python3 -m http.server --bind "$DET_KUBERNETES_POD_IP" %d`, port))
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "DET_KUBERNETES_POD_IP",
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
	createPod(t, c, ns, pod)
	got := waitPod(t, c, ns, "server", "Running", func(p *corev1.Pod) bool { return p.Status.PodIP != "" })

	url := fmt.Sprintf("http://%s/hello.txt", net.JoinHostPort(got.Status.PodIP, strconv.Itoa(port)))
	var body []byte
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		resp, err := http.Get(url)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		body, err = io.ReadAll(resp.Body)
		return err == nil && resp.StatusCode == 200, nil
	})
	if err != nil || string(body) != "hello over the pod network" {
		t.Fatalf("GET %s: %q, %v", url, body, err)
	}
}

func TestRunnerFailsThePodWhenAnInitContainerFails(t *testing.T) {
	t.Parallel()
	c := k8stest.Start(t)
	ns, nodes, selector := isolated(t, c, 1)
	c.RunPods(t, k8stest.RunOptions{Nodes: nodes})
	pod := shPod("broken", selector, "echo never")
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", Command: []string{"sh", "-c", "echo $(WHAT) failed; exit 5"},
		Env: []corev1.EnvVar{{Name: "WHAT", Value: "unpacking"}}}}
	createPod(t, c, ns, pod)
	got := waitPod(t, c, ns, "broken", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if st := got.Status.InitContainerStatuses; len(st) != 1 || st[0].State.Terminated == nil || st[0].State.Terminated.ExitCode != 5 {
		t.Errorf("init container statuses %+v, want one terminated with exit code 5", st)
	}
	if st := got.Status.ContainerStatuses; len(st) != 1 || st[0].State.Waiting == nil {
		t.Errorf("container statuses %+v, want one waiting", st)
	}
	b, err := c.Client.CoreV1().Pods(ns).GetLogs("broken", &corev1.PodLogOptions{Container: "init"}).DoRaw(context.Background())
	if err != nil || string(b) != "unpacking failed\n" {
		t.Errorf("init container logs %q, %v", b, err)
	}
}
