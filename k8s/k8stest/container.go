package k8stest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// prepareVolumes makes each volume a directory (or, for a hostPath, finds
// its path) and links it at R+mountPath for every container's mounts.
func (pr *podRun) prepareVolumes(ctx context.Context, pod *corev1.Pod) error {
	rootfs := filepath.Join(pr.dir, "rootfs")
	if err := os.MkdirAll(rootfs, 0o755); err != nil {
		return err
	}
	targets := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		dir := filepath.Join(pr.dir, "volumes", v.Name)
		targets[v.Name] = dir
		var err error
		switch {
		case v.HostPath != nil:
			targets[v.Name] = v.HostPath.Path
			if t := v.HostPath.Type; t != nil && *t == corev1.HostPathDirectoryOrCreate {
				err = os.MkdirAll(v.HostPath.Path, 0o755)
			}
		case v.ConfigMap != nil:
			err = pr.writeConfigMap(ctx, dir, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional)
		case v.Secret != nil:
			err = pr.writeSecret(ctx, dir, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional)
		case v.Projected != nil:
			err = os.MkdirAll(dir, 0o755)
			for _, src := range v.Projected.Sources {
				switch {
				case err != nil:
				case src.ConfigMap != nil:
					err = pr.writeConfigMap(ctx, dir, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional)
				case src.Secret != nil:
					err = pr.writeSecret(ctx, dir, src.Secret.Name, src.Secret.Items, src.Secret.Optional)
				}
			}
		default: // emptyDir and everything else: an empty directory
			err = os.MkdirAll(dir, 0o755)
		}
		if err != nil {
			return fmt.Errorf("volume %s: %w", v.Name, err)
		}
	}
	for _, ctr := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
		for _, m := range ctr.VolumeMounts {
			target, ok := targets[m.Name]
			if !ok {
				return fmt.Errorf("container %s mounts unknown volume %s", ctr.Name, m.Name)
			}
			if m.SubPath != "" {
				target = filepath.Join(target, m.SubPath)
				if err := os.MkdirAll(target, 0o755); err != nil {
					return err
				}
			}
			link := filepath.Join(rootfs, m.MountPath)
			if _, err := os.Lstat(link); err == nil {
				continue // an earlier container mounts it there already
			}
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(target, link); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitObject gets an object a pod needs, waiting a while for it to appear
// as a kubelet would.
func waitObject[T any](ctx context.Context, get func(context.Context) (T, error)) (T, error) {
	var obj T
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		obj, last = get(ctx)
		return last == nil, nil
	})
	if err != nil && last != nil {
		err = last
	}
	return obj, err
}

func (pr *podRun) writeConfigMap(ctx context.Context, dir, name string, items []corev1.KeyToPath, optional *bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	cms := pr.r.c.Client.CoreV1().ConfigMaps(pr.ns)
	cm, err := waitObject(ctx, func(ctx context.Context) (*corev1.ConfigMap, error) {
		return cms.Get(ctx, name, metav1.GetOptions{})
	})
	if err != nil {
		if optional != nil && *optional {
			return nil
		}
		return fmt.Errorf("configMap %s: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return writeKeys(dir, data, items)
}

func (pr *podRun) writeSecret(ctx context.Context, dir, name string, items []corev1.KeyToPath, optional *bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	secrets := pr.r.c.Client.CoreV1().Secrets(pr.ns)
	s, err := waitObject(ctx, func(ctx context.Context) (*corev1.Secret, error) {
		return secrets.Get(ctx, name, metav1.GetOptions{})
	})
	if err != nil {
		if optional != nil && *optional {
			return nil
		}
		return fmt.Errorf("secret %s: %w", name, err)
	}
	return writeKeys(dir, s.Data, items)
}

// writeKeys writes data's keys as files under dir: all of them, or the
// items named, at the items' paths.
func writeKeys(dir string, data map[string][]byte, items []corev1.KeyToPath) error {
	if len(items) == 0 {
		for k := range data {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("no key %s", it.Key)
		}
		path := filepath.Join(dir, it.Path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if it.Mode != nil {
			mode = os.FileMode(*it.Mode)
		}
		if err := os.WriteFile(path, v, mode); err != nil {
			return err
		}
	}
	return nil
}

// runContainer runs one container to its end and returns its terminated
// status. For the main container it also sets up kwok's exec.
func (pr *podRun) runContainer(ctx context.Context, pod *corev1.Pod, ctr *corev1.Container, main bool) corev1.ContainerStatus {
	started := metav1.Now()
	status := func(code int32, reason, message string) corev1.ContainerStatus {
		return corev1.ContainerStatus{
			Name:  ctr.Name,
			Image: ctr.Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: reason, Message: message, StartedAt: started, FinishedAt: metav1.Now(),
			}},
			Started: new(false),
		}
	}
	log, err := openCRILog(pr.logPath(ctr.Name))
	if err != nil {
		return status(128, "StartError", err.Error())
	}
	stdout, stderr := log.stream("stdout"), log.stream("stderr")
	defer func() {
		stdout.Flush()
		stderr.Flush()
		log.Close()
		// kwok's (patched) log reader ends a follow once this file exists;
		// the chmod wakes a reader waiting on the log file.
		path := pr.logPath(ctr.Name)
		_ = os.WriteFile(path+".exited", nil, 0o644)
		_ = os.Chmod(path, 0o644)
	}()
	fail := func(err error) corev1.ContainerStatus {
		fmt.Fprintf(stderr, "k8stest: %v\n", err)
		return status(128, "StartError", err.Error())
	}

	rw := pr.rewriter(ctr)
	env, err := pr.environment(ctx, pod, ctr, rw)
	if err != nil {
		return fail(err)
	}
	lookup := envLookup(env)
	var argv []string
	for _, a := range slices.Concat(ctr.Command, ctr.Args) {
		argv = append(argv, rw(expandVars(a, lookup)))
	}
	if len(argv) == 0 {
		return fail(errNoCommand)
	}
	dir := filepath.Join(pr.dir, "rootfs")
	if ctr.WorkingDir != "" {
		dir = rw(ctr.WorkingDir)
		if dir == ctr.WorkingDir { // not under a mount: inside the pod's root
			dir = filepath.Join(pr.dir, "rootfs", ctr.WorkingDir)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(err)
	}
	// The directory is a link into the pod's volumes; PWD keeps shells
	// showing the path the pod asked for.
	env = append(env, "PWD="+dir)
	path, err := lookPath(argv[0], pr.r.opts.Path, dir)
	if err != nil {
		return fail(err)
	}
	if main {
		if err := pr.createExec(ctx, dir, env); err != nil {
			pr.r.logf("pod %s/%s: kwok exec: %v", pr.ns, pr.name, err)
		}
	}

	cmd := exec.Command(path)
	cmd.Args = argv
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A daemon the process leaves behind may hold its output open.
	cmd.WaitDelay = 2 * time.Second
	started = metav1.Now()
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	pr.setProc(cmd.Process)
	err = cmd.Wait()
	pr.clearProc()
	// What the process group left behind goes with it, as with a container.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	code, reason := int32(0), "Completed"
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		code, reason = int32(exitErr.ExitCode()), "Error"
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int32(ws.Signal())
		}
	case errors.Is(err, exec.ErrWaitDelay):
	default:
		code, reason = 128, "Error"
	}
	return status(code, reason, "")
}

// rewriter maps absolute paths in a container's strings to local ones: the
// container's mount paths to their links under the pod's root, and the
// runner's PathMap. Longer prefixes win, and a prefix matches only whole
// path components.
func (pr *podRun) rewriter(ctr *corev1.Container) func(string) string {
	rootfs := filepath.Join(pr.dir, "rootfs")
	m := map[string]string{}
	for _, vm := range ctr.VolumeMounts {
		p := filepath.Clean(vm.MountPath)
		m[p] = filepath.Join(rootfs, p)
	}
	for from, to := range pr.r.opts.PathMap {
		m[filepath.Clean(from)] = to
	}
	return newPathRewriter(m)
}

func newPathRewriter(m map[string]string) func(string) string {
	var prefixes []string
	for p := range m {
		if p != "/" && strings.HasPrefix(p, "/") {
			prefixes = append(prefixes, p)
		}
	}
	slices.SortFunc(prefixes, func(a, b string) int { return len(b) - len(a) })
	pathByte := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '-' || c == '~' || c == '/'
	}
	return func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); {
			if s[i] == '/' && (i == 0 || !pathByte(s[i-1])) {
				matched := false
				for _, p := range prefixes {
					end := i + len(p)
					if strings.HasPrefix(s[i:], p) && (end == len(s) || s[end] == '/' || !pathByte(s[end])) {
						b.WriteString(m[p])
						i = end
						matched = true
						break
					}
				}
				if matched {
					continue
				}
			}
			b.WriteByte(s[i])
			i++
		}
		return b.String()
	}
}

// environment is a container's environment as NAME=value pairs: PATH, HOME
// and HOSTNAME, the runner's Env, then envFrom and env as Kubernetes
// resolves them, every value's paths rewritten. PATH is always the
// runner's.
func (pr *podRun) environment(ctx context.Context, pod *corev1.Pod, ctr *corev1.Container, rw func(string) string) ([]string, error) {
	var names []string
	vals := map[string]string{}
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			names = append(names, k)
		}
		vals[k] = v
	}
	home, _ := os.UserHomeDir()
	set("HOME", home)
	set("HOSTNAME", pod.Name)
	for k, v := range pr.r.opts.Env {
		set(k, v)
	}
	client := pr.r.c.Client.CoreV1()
	for _, from := range ctr.EnvFrom {
		var data map[string]string
		switch {
		case from.ConfigMapRef != nil:
			cm, err := client.ConfigMaps(pr.ns).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
			if err != nil {
				if from.ConfigMapRef.Optional != nil && *from.ConfigMapRef.Optional {
					continue
				}
				return nil, fmt.Errorf("envFrom configMap %s: %w", from.ConfigMapRef.Name, err)
			}
			data = cm.Data
		case from.SecretRef != nil:
			s, err := client.Secrets(pr.ns).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
			if err != nil {
				if from.SecretRef.Optional != nil && *from.SecretRef.Optional {
					continue
				}
				return nil, fmt.Errorf("envFrom secret %s: %w", from.SecretRef.Name, err)
			}
			data = map[string]string{}
			for k, v := range s.Data {
				data[k] = string(v)
			}
		}
		for k, v := range data {
			set(from.Prefix+k, rw(v))
		}
	}
	for _, e := range ctr.Env {
		v, err := pr.envValue(ctx, pod, ctr, e, func(k string) (string, bool) { v, ok := vals[k]; return v, ok })
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		set(e.Name, rw(v))
	}
	set("PATH", pr.r.opts.Path)
	env := make([]string, 0, len(names))
	for _, k := range names {
		env = append(env, k+"="+vals[k])
	}
	return env, nil
}

func (pr *podRun) envValue(ctx context.Context, pod *corev1.Pod, ctr *corev1.Container, e corev1.EnvVar, lookup func(string) (string, bool)) (string, error) {
	from := e.ValueFrom
	if from == nil {
		return expandVars(e.Value, lookup), nil
	}
	client := pr.r.c.Client.CoreV1()
	switch {
	case from.FieldRef != nil:
		return fieldValue(pod, from.FieldRef.FieldPath)
	case from.ResourceFieldRef != nil:
		return resourceValue(ctr, from.ResourceFieldRef)
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := client.ConfigMaps(pr.ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err == nil {
			if v, ok := cm.Data[ref.Key]; ok {
				return v, nil
			}
			err = fmt.Errorf("configMap %s has no key %s", ref.Name, ref.Key)
		}
		if ref.Optional != nil && *ref.Optional {
			return "", nil
		}
		return "", err
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := client.Secrets(pr.ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err == nil {
			if v, ok := s.Data[ref.Key]; ok {
				return string(v), nil
			}
			err = fmt.Errorf("secret %s has no key %s", ref.Name, ref.Key)
		}
		if ref.Optional != nil && *ref.Optional {
			return "", nil
		}
		return "", err
	}
	return "", errors.New("unsupported valueFrom")
}

// fieldValue resolves a downward-API field path.
func fieldValue(pod *corev1.Pod, path string) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return pod.Status.PodIP, nil
	case "status.hostIP":
		return pod.Status.HostIP, nil
	case "status.podIPs":
		var ips []string
		for _, ip := range pod.Status.PodIPs {
			ips = append(ips, ip.IP)
		}
		return strings.Join(ips, ","), nil
	case "status.hostIPs":
		var ips []string
		for _, ip := range pod.Status.HostIPs {
			ips = append(ips, ip.IP)
		}
		return strings.Join(ips, ","), nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
		if key, ok := strings.CutPrefix(path, prefix+"['"); ok && strings.HasSuffix(key, "']") {
			return m[strings.TrimSuffix(key, "']")], nil
		}
	}
	return "", fmt.Errorf("unsupported fieldRef %s", path)
}

// resourceValue resolves a resourceFieldRef as the kubelet does: the
// quantity divided by the divisor, rounded up.
func resourceValue(ctr *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("unsupported resource %s", ref.Resource)
	}
	list := ctr.Resources.Requests
	if kind == "limits" {
		list = ctr.Resources.Limits
	}
	q := list[corev1.ResourceName(name)]
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	n := (q.MilliValue() + divisor.MilliValue() - 1) / divisor.MilliValue()
	return fmt.Sprint(n), nil
}

// expandVars replaces $(NAME) with NAME's value where NAME is defined, and
// $$ with $, like Kubernetes in env values, command and args.
func expandVars(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			if end := strings.IndexByte(s[i+2:], ')'); end >= 0 {
				name := s[i+2 : i+2+end]
				if v, ok := lookup(name); ok {
					b.WriteString(v)
					i += 2 + end
					continue
				}
			}
			b.WriteByte('$')
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func envLookup(env []string) func(string) (string, bool) {
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// lookPath finds a command in the given PATH (not the test process's).
func lookPath(name, path, dir string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		if _, err := os.Stat(name); err != nil {
			return "", fmt.Errorf("command %s: %w", name, err)
		}
		return name, nil
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			continue
		}
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %s not found in PATH %s", name, path)
}
