package harness

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/resolute-ml/resolute/storage/storagetest"
)

// TestPythonBuckets runs the harness's bucket suite (tests/bucket_suite.py)
// against a fresh bucket on each real object store storagetest gives: MinIO
// for s3, fake-gcs-server for gcs, Azurite for azure. The suite stores,
// restores, selects, deletes with globs, uploads a 100 MiB file in parts (and
// again through a proxy that cuts the connection midway), shards a
// checkpoint across two worker processes, uploads TensorBoard files, and
// checks the errors of a wrong secret and a missing bucket.
func TestPythonBuckets(t *testing.T) {
	py := python(t)
	backends := map[string]func(t *testing.T) (env map[string]string, storage, wrong, missing map[string]any){
		"s3 on MinIO": func(t *testing.T) (map[string]string, map[string]any, map[string]any, map[string]any) {
			b := storagetest.NewS3Bucket(t)
			storage := map[string]any{"type": "s3", "bucket": b.Bucket, "endpoint_url": b.Endpoint,
				"access_key": b.AccessKey, "secret_key": b.SecretKey, "prefix": "team/ckpts"}
			wrong := with(storage, "secret_key", b.SecretKey+"-wrong")
			missing := with(storage, "bucket", b.Bucket+"-missing")
			return map[string]string{"AWS_DEFAULT_REGION": b.Region}, storage, wrong, missing
		},
		"gcs on fake-gcs-server": func(t *testing.T) (map[string]string, map[string]any, map[string]any, map[string]any) {
			b := storagetest.NewGCSBucket(t)
			storage := map[string]any{"type": "gcs", "bucket": b.Bucket, "prefix": "ckpts"}
			missing := with(storage, "bucket", b.Bucket+"-missing")
			return map[string]string{"STORAGE_EMULATOR_HOST": b.Endpoint}, storage, nil, missing
		},
		"azure on Azurite": func(t *testing.T) (map[string]string, map[string]any, map[string]any, map[string]any) {
			c := storagetest.NewAzureContainer(t)
			storage := map[string]any{"type": "azure", "container": c.Container,
				"connection_string": c.ConnectionString}
			wrong := with(storage, "connection_string",
				strings.Replace(c.ConnectionString, c.AccountKey, "d3Jvbmcga2V5IG9mIHRoZSBhY2NvdW50", 1))
			// Made by the suite, as Determined makes a missing container (and removed by it).
			missing := map[string]any{"type": "azure", "container": c.Container + "-made",
				"account_url": c.AccountURL, "credential": c.AccountKey}
			return nil, storage, wrong, missing
		},
	}
	for name, setup := range backends {
		t.Run(name, func(t *testing.T) {
			env, storage, wrong, missing := setup(t)
			cmd := exec.Command(py, "-B", "-m", "unittest", "-v", "tests.bucket_suite")
			cmd.Env = append(withoutCloudEnv(os.Environ()), "PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH=.",
				"RESOLUTE_BUCKET_TEST_STORAGE="+mustJSON(t, storage),
				"RESOLUTE_BUCKET_TEST_MISSING="+mustJSON(t, missing))
			if wrong != nil {
				cmd.Env = append(cmd.Env, "RESOLUTE_BUCKET_TEST_WRONG_SECRET="+mustJSON(t, wrong))
			}
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("bucket suite failed: %v\n%s", err, out)
			}
			if testing.Verbose() {
				t.Logf("%s", out)
			}
		})
	}
}

// withoutCloudEnv drops credentials and endpoints of the developer's own
// clouds, so that the suite reaches only the test's servers.
func withoutCloudEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "AZURE_") ||
			strings.HasPrefix(k, "GOOGLE_") || k == "STORAGE_EMULATOR_HOST" ||
			strings.HasPrefix(k, "DET_") || strings.HasPrefix(k, "PYTHONPATH") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for kk, vv := range m {
		out[kk] = vv
	}
	out[k] = v
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
