package k8stest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
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
