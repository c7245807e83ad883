package expconf

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Checkpoint storage types.
const (
	StorageSharedFS  = "shared_fs"
	StorageDirectory = "directory"
	StorageS3        = "s3"
	StorageGCS       = "gcs"
	StorageAzure     = "azure"
)

// DefaultSharedFSContainerPath is where a shared_fs host path is mounted.
const DefaultSharedFSContainerPath = "/determined_shared_fs"

// CheckpointStorageConfig is the `checkpoint_storage` section: the common
// garbage-collection counts and exactly one of the per-type sections,
// matching Type.
type CheckpointStorageConfig struct {
	Type               string
	SaveExperimentBest int // default 0
	SaveTrialBest      int // default 1
	SaveTrialLatest    int // default 1

	SharedFS  *SharedFSStorage
	Directory *DirectoryStorage
	S3        *S3Storage
	GCS       *GCSStorage
	Azure     *AzureStorage
}

// SharedFSStorage stores checkpoints on a file system mounted on every node.
type SharedFSStorage struct {
	HostPath        string
	StoragePath     string // relative to HostPath, or an absolute path inside it
	ContainerPath   string // default /determined_shared_fs
	CheckpointPath  string
	TensorboardPath string
	Propagation     string // default rprivate
}

// DirectoryStorage stores checkpoints in a directory already mounted in the
// container (e.g. a Kubernetes volume from the pod spec).
type DirectoryStorage struct {
	ContainerPath string
}

// S3Storage stores checkpoints in an S3-compatible bucket.
type S3Storage struct {
	Bucket, AccessKey, SecretKey, EndpointURL, Prefix string
}

// GCSStorage stores checkpoints in a Google Cloud Storage bucket.
type GCSStorage struct {
	Bucket, Prefix string
}

// AzureStorage stores checkpoints in an Azure Blob Storage container, with
// either a connection string or an account URL (and optional credential).
type AzureStorage struct {
	Container, ConnectionString, AccountURL, Credential string
}

var storageTypes = []string{StorageSharedFS, StorageDirectory, StorageS3, StorageGCS, StorageAzure}

func (d *decoder) checkpointStorage(n *yaml.Node, p string) *CheckpointStorageConfig {
	o := d.object(n, p)
	cs := &CheckpointStorageConfig{SaveTrialBest: 1, SaveTrialLatest: 1}
	for _, k := range []string{"save_experiment_best", "save_trial_best", "save_trial_latest"} {
		dst := map[string]*int{"save_experiment_best": &cs.SaveExperimentBest,
			"save_trial_best": &cs.SaveTrialBest, "save_trial_latest": &cs.SaveTrialLatest}[k]
		if o.integer(k, dst) && *dst < 0 {
			d.fail(o.take(k), join(p, k), "must be 0 or more, got %d", *dst)
		}
	}
	if !o.str("type", &cs.Type) {
		if !o.has("type") {
			d.fail(o.line(), join(p, "type"), "required (one of %s)", orList(storageTypes))
		}
		markAll(o)
		return cs
	}
	if !d.oneOf(o.take("type"), join(p, "type"), cs.Type, storageTypes...) {
		markAll(o)
		return cs
	}
	required := func(key string, dst *string) {
		if !o.str(key, dst) && !o.has(key) {
			d.fail(o.line(), join(p, key), "required when %s.type is %s", p, cs.Type)
		} else if *dst == "" && o.has(key) {
			d.fail(o.take(key), join(p, key), "must not be empty")
		}
	}
	switch cs.Type {
	case StorageSharedFS:
		s := &SharedFSStorage{ContainerPath: DefaultSharedFSContainerPath, Propagation: DefaultPropagation}
		required("host_path", &s.HostPath)
		if s.HostPath != "" && !path.IsAbs(s.HostPath) {
			d.fail(o.take("host_path"), join(p, "host_path"), "must be an absolute path, got %q", s.HostPath)
		}
		if o.str("storage_path", &s.StoragePath) {
			if path.IsAbs(s.StoragePath) {
				if s.HostPath != "" && !within(s.HostPath, s.StoragePath) {
					d.fail(o.take("storage_path"), join(p, "storage_path"), "must be relative or inside host_path %q, got %q", s.HostPath, s.StoragePath)
				}
			} else if rel := path.Clean(s.StoragePath); rel == ".." || strings.HasPrefix(rel, "../") {
				d.fail(o.take("storage_path"), join(p, "storage_path"), "must stay inside host_path, got %q", s.StoragePath)
			}
		}
		if o.str("container_path", &s.ContainerPath) && s.ContainerPath != DefaultSharedFSContainerPath {
			d.warn(join(p, "container_path"), "ignored: Resolute mounts host_path at the same path in every task")
		}
		if o.str("checkpoint_path", &s.CheckpointPath) {
			d.warn(join(p, "checkpoint_path"), "ignored: checkpoints go under host_path (and storage_path)")
		}
		if o.str("tensorboard_path", &s.TensorboardPath) {
			d.warn(join(p, "tensorboard_path"), "deprecated; TensorBoard files are stored with checkpoints")
		}
		if o.str("propagation", &s.Propagation) {
			d.propagation(o.take("propagation"), join(p, "propagation"), s.Propagation)
		}
		cs.SharedFS = s
	case StorageDirectory:
		s := &DirectoryStorage{}
		required("container_path", &s.ContainerPath)
		cs.Directory = s
	case StorageS3:
		s := &S3Storage{}
		required("bucket", &s.Bucket)
		o.str("access_key", &s.AccessKey)
		o.str("secret_key", &s.SecretKey)
		o.str("endpoint_url", &s.EndpointURL)
		d.prefix(o, &s.Prefix)
		cs.S3 = s
	case StorageGCS:
		s := &GCSStorage{}
		required("bucket", &s.Bucket)
		d.prefix(o, &s.Prefix)
		cs.GCS = s
	case StorageAzure:
		s := &AzureStorage{}
		required("container", &s.Container)
		hasCS := o.str("connection_string", &s.ConnectionString)
		hasURL := o.str("account_url", &s.AccountURL)
		hasCred := o.str("credential", &s.Credential)
		switch {
		case hasCS && hasURL:
			d.fail(o.take("account_url"), p, "give exactly one of connection_string or account_url, not both")
		case !hasCS && !hasURL && !o.has("connection_string") && !o.has("account_url"):
			d.fail(o.line(), p, "give exactly one of connection_string or account_url")
		case hasCS && hasCred:
			d.fail(o.take("credential"), join(p, "credential"), "only allowed with account_url")
		}
		cs.Azure = s
	}
	o.done()
	return cs
}

// prefix reads an object-store prefix, which must not climb out with "..".
func (d *decoder) prefix(o *object, dst *string) {
	if !o.str("prefix", dst) {
		return
	}
	for _, seg := range strings.Split(*dst, "/") {
		if seg == ".." {
			d.fail(o.take("prefix"), join(o.path, "prefix"), "must not contain \"..\", got %q", *dst)
			return
		}
	}
}

func within(base, p string) bool {
	base, p = path.Clean(base), path.Clean(p)
	return p == base || strings.HasPrefix(p, strings.TrimSuffix(base, "/")+"/")
}

func (cs *CheckpointStorageConfig) render() map[string]any {
	if cs == nil {
		return nil
	}
	m := map[string]any{"type": cs.Type, "save_experiment_best": cs.SaveExperimentBest,
		"save_trial_best": cs.SaveTrialBest, "save_trial_latest": cs.SaveTrialLatest}
	put := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	switch {
	case cs.SharedFS != nil:
		s := cs.SharedFS
		put("host_path", s.HostPath)
		put("storage_path", s.StoragePath)
		put("container_path", s.ContainerPath)
		put("checkpoint_path", s.CheckpointPath)
		put("tensorboard_path", s.TensorboardPath)
		put("propagation", s.Propagation)
	case cs.Directory != nil:
		put("container_path", cs.Directory.ContainerPath)
	case cs.S3 != nil:
		s := cs.S3
		put("bucket", s.Bucket)
		put("access_key", s.AccessKey)
		put("secret_key", s.SecretKey)
		put("endpoint_url", s.EndpointURL)
		put("prefix", s.Prefix)
	case cs.GCS != nil:
		put("bucket", cs.GCS.Bucket)
		put("prefix", cs.GCS.Prefix)
	case cs.Azure != nil:
		s := cs.Azure
		put("container", s.Container)
		put("connection_string", s.ConnectionString)
		put("account_url", s.AccountURL)
		put("credential", s.Credential)
	}
	return m
}

// LocalDir is the directory on this machine that holds the checkpoints of
// shared_fs storage (host_path, plus storage_path) or directory storage
// (container_path); cloud storage has none and gives an error.
func (cs *CheckpointStorageConfig) LocalDir() (string, error) {
	switch {
	case cs == nil:
		return "", fmt.Errorf("no checkpoint storage is configured")
	case cs.SharedFS != nil:
		base := cs.SharedFS.HostPath
		if p := cs.SharedFS.StoragePath; p != "" {
			if filepath.IsAbs(p) {
				return p, nil
			}
			return filepath.Join(base, p), nil
		}
		return base, nil
	case cs.Directory != nil:
		return cs.Directory.ContainerPath, nil
	}
	return "", fmt.Errorf("%s storage is not on this machine", cs.Type)
}

// Map renders the section as plain YAML-shaped values, secrets included.
func (cs *CheckpointStorageConfig) Map() map[string]any { return cs.render() }
