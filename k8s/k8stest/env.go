package k8stest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
	if _, ok := vals["PATH"]; !ok { // the image's PATH, unless the pod sets its own
		set("PATH", pr.r.opts.Path)
	}
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
