package storage_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/storage"
	"github.com/resolute-ml/resolute/storage/storagetest"
)

// backend is one kind of storage the suite runs against: a fresh place on
// a real server, its config, and a way to put a file where a trial would.
type backend struct {
	config func(t *testing.T) *expconf.CheckpointStorageConfig
}

// backends are the storages of the suite, each on its real server.
func backends() map[string]backend {
	return map[string]backend{
		"a directory on this machine": {config: func(t *testing.T) *expconf.CheckpointStorageConfig {
			return &expconf.CheckpointStorageConfig{Type: "shared_fs", SharedFS: &expconf.SharedFSStorage{HostPath: t.TempDir()}}
		}},
		"an s3 bucket on MinIO": {config: func(t *testing.T) *expconf.CheckpointStorageConfig {
			b := storagetest.NewS3Bucket(t)
			return &expconf.CheckpointStorageConfig{Type: "s3", S3: &expconf.S3Storage{Bucket: b.Bucket,
				AccessKey: b.AccessKey, SecretKey: b.SecretKey, EndpointURL: b.Endpoint, Prefix: "team/run"}}
		}},
		"a gcs bucket on fake-gcs-server": {config: func(t *testing.T) *expconf.CheckpointStorageConfig {
			b := storagetest.NewGCSBucket(t)
			t.Setenv("STORAGE_EMULATOR_HOST", b.Endpoint)
			return &expconf.CheckpointStorageConfig{Type: "gcs", GCS: &expconf.GCSStorage{Bucket: b.Bucket, Prefix: "team/run"}}
		}},
		"an azure container on Azurite": {config: func(t *testing.T) *expconf.CheckpointStorageConfig {
			b := storagetest.NewAzureContainer(t)
			return &expconf.CheckpointStorageConfig{Type: "azure", Azure: &expconf.AzureStorage{Container: b.Container + "/team/run",
				ConnectionString: b.ConnectionString}}
		}},
	}
}

// put writes a checkpoint's file where a trial would have.
func put(t *testing.T, st storage.Store, cs *expconf.CheckpointStorageConfig, key, body string) {
	t.Helper()
	if cs.SharedFS != nil {
		p := filepath.Join(cs.SharedFS.HostPath, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := storage.PutBytes(t.Context(), st, key, []byte(body)); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// TestEveryStorageListsStreamsAndDeletesACheckpoint runs the same suite on
// each backend: a checkpoint is the files under its UUID, another
// checkpoint whose UUID starts the same is not part of it, files stream
// whole in path order, and deleting one checkpoint leaves the other.
func TestEveryStorageListsStreamsAndDeletesACheckpoint(t *testing.T) {
	for name, b := range backends() {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			cs := b.config(t)
			st, err := storage.New(ctx, cs)
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{"ck-1/model.pt": "weights", "ck-1/sub/dir/state.json": `{"step": 3}`,
				"ck-1/metadata.json": "{}", "ck-10/model.pt": "another checkpoint", "ck-2/x": "x"}
			for k, v := range files {
				put(t, st, cs, k, v)
			}
			objs, err := st.List(ctx, "ck-1")
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, o := range objs {
				paths = append(paths, o.Path)
			}
			if diff := cmp.Diff([]string{"metadata.json", "model.pt", "sub/dir/state.json"}, paths); diff != "" {
				t.Errorf("List ck-1 (-want +got):\n%s", diff)
			}
			got := map[string]string{}
			err = st.Walk(ctx, "ck-1", func(o storage.Object, r io.Reader) error {
				if o.Dir || o.Skipped {
					return nil
				}
				data, err := io.ReadAll(r)
				got[o.Path] = string(data)
				if int64(len(data)) != o.Size {
					t.Errorf("%s: read %d bytes, listed %d", o.Path, len(data), o.Size)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"model.pt": "weights", "sub/dir/state.json": `{"step": 3}`, "metadata.json": "{}"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Walk ck-1 (-want +got):\n%s", diff)
			}
			r, err := st.Open(ctx, "ck-1/sub/dir/state.json")
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(r)
			r.Close()
			if string(data) != `{"step": 3}` {
				t.Errorf("Open: %q", data)
			}
			if err := st.Delete(ctx, "ck-1"); err != nil {
				t.Fatal(err)
			}
			if objs, err := st.List(ctx, "ck-1"); err != nil || len(objs) != 0 {
				t.Errorf("after Delete, ck-1 holds %v (%v)", objs, err)
			}
			if objs, err := st.List(ctx, "ck-10"); err != nil || len(objs) != 1 {
				t.Errorf("deleting ck-1 touched ck-10: %v (%v)", objs, err)
			}
			if err := st.Walk(ctx, "ck-1", func(storage.Object, io.Reader) error { return nil }); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("Walk of a deleted checkpoint: %v, want ErrNotFound", err)
			}
			if err := st.Delete(ctx, "ck-1"); err != nil {
				t.Errorf("deleting it again: %v", err)
			}
			for _, bad := range []string{"", "/", "..", "ck-1/../ck-2"} {
				if err := st.Delete(ctx, bad); err == nil {
					t.Errorf("Delete(%q) was not refused", bad)
				}
			}
			if objs, _ := st.List(ctx, "ck-2"); len(objs) != 1 {
				t.Errorf("ck-2 after refused deletes: %v", objs)
			}
		})
	}
}

// TestS3TakesItsCredentialsAndRegionFromTheEnvironment: with no keys in
// the config, the SDK's default chain finds them (here AWS_ACCESS_KEY_ID
// and AWS_SECRET_ACCESS_KEY; on a cloud, the instance's or pod's role).
func TestS3TakesItsCredentialsAndRegionFromTheEnvironment(t *testing.T) {
	b := storagetest.NewS3Bucket(t)
	t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	st, err := storage.New(t.Context(), &expconf.CheckpointStorageConfig{Type: "s3",
		S3: &expconf.S3Storage{Bucket: b.Bucket, EndpointURL: b.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	if err := storage.PutBytes(t.Context(), st, "ck/a", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if objs, err := st.List(t.Context(), "ck"); err != nil || len(objs) != 1 {
		t.Fatalf("List with the environment's keys: %v %v", objs, err)
	}
}

// TestAWrongSecretOrAMissingBucketIsNamed: the errors say which bucket and
// why, and never quote the secret.
func TestAWrongSecretOrAMissingBucketIsNamed(t *testing.T) {
	ctx := t.Context()
	s3b := storagetest.NewS3Bucket(t)
	gcsb := storagetest.NewGCSBucket(t)
	t.Setenv("STORAGE_EMULATOR_HOST", gcsb.Endpoint)
	az := storagetest.NewAzureContainer(t)
	const wrong = "not-the-secret-5e1f"
	cases := map[string]struct {
		cs          *expconf.CheckpointStorageConfig
		name, cause string
	}{
		"an s3 secret key that is wrong": {
			cs: &expconf.CheckpointStorageConfig{Type: "s3", S3: &expconf.S3Storage{Bucket: s3b.Bucket,
				AccessKey: s3b.AccessKey, SecretKey: wrong, EndpointURL: s3b.Endpoint}},
			name: s3b.Bucket, cause: "access denied"},
		"an s3 bucket that does not exist": {
			cs: &expconf.CheckpointStorageConfig{Type: "s3", S3: &expconf.S3Storage{Bucket: s3b.Bucket + "-missing",
				AccessKey: s3b.AccessKey, SecretKey: s3b.SecretKey, EndpointURL: s3b.Endpoint}},
			name: s3b.Bucket + "-missing", cause: "does not exist"},
		"a gcs bucket that does not exist": {
			cs:   &expconf.CheckpointStorageConfig{Type: "gcs", GCS: &expconf.GCSStorage{Bucket: gcsb.Bucket + "-missing"}},
			name: gcsb.Bucket + "-missing", cause: "does not exist"},
		"an azure account key that is wrong": {
			cs: &expconf.CheckpointStorageConfig{Type: "azure", Azure: &expconf.AzureStorage{Container: az.Container,
				AccountURL: az.AccountURL, Credential: az.AccountName + ":" + "d3Jvbmcta2V5LW5vdC10aGUtc2VjcmV0LTVlMWY="}},
			name: az.Container, cause: "access denied"},
		"an azure container that does not exist": {
			cs: &expconf.CheckpointStorageConfig{Type: "azure", Azure: &expconf.AzureStorage{Container: az.Container + "-missing",
				ConnectionString: az.ConnectionString}},
			name: az.Container + "-missing", cause: "does not exist"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			st, err := storage.New(ctx, c.cs)
			if err == nil {
				_, err = st.List(ctx, "some-checkpoint")
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, `"`+c.name+`"`) || !strings.Contains(msg, c.cause) {
				t.Errorf("error %q does not name %q and %q", msg, c.name, c.cause)
			}
			if strings.Contains(msg, wrong) || strings.Contains(msg, "d3Jvbmcta2V5") {
				t.Errorf("error %q quotes the secret", msg)
			}
		})
	}
}
