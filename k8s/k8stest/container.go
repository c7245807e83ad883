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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var errNoCommand = errors.New("container has neither command nor args (image defaults are unknown here)")

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
	podPath, _ := lookup("PATH")
	path, err := lookPath(argv[0], podPath, dir)
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
