package storagetest

import (
	"bytes"
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
)

// The environment variables that name running servers. scripts/objectstores.sh
// prints them; when all are set, tests use those servers and start none.
const (
	S3EndpointEnv        = "RESOLUTE_TEST_S3_ENDPOINT"
	S3AccessKeyEnv       = "RESOLUTE_TEST_S3_ACCESS_KEY"
	S3SecretKeyEnv       = "RESOLUTE_TEST_S3_SECRET_KEY"
	GCSEndpointEnv       = "RESOLUTE_TEST_GCS_ENDPOINT"
	AzureBlobEndpointEnv = "RESOLUTE_TEST_AZURE_BLOB_ENDPOINT"
)

// Azurite's well-known development account (public, in Azure's docs).
const (
	azuriteAccount = "devstoreaccount1"
	azuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// S3 is a fresh bucket on a real MinIO. Region is "us-east-1".
type S3 struct{ Endpoint, AccessKey, SecretKey, Region, Bucket string }

// GCS is a fresh bucket on a real fake-gcs-server; Endpoint is what
// STORAGE_EMULATOR_HOST takes (http://127.0.0.1:PORT).
type GCS struct{ Endpoint, Bucket string }

// Azure is a fresh container on a real Azurite (its well-known dev account).
// AccountURL is the blob service's URL for the account
// (http://127.0.0.1:PORT/devstoreaccount1).
type Azure struct{ ConnectionString, AccountURL, AccountName, AccountKey, Container string }

// NewS3Bucket makes a bucket for the test on MinIO and removes it, and the
// objects in it, when the test ends.
func NewS3Bucket(t testing.TB) S3 {
	t.Helper()
	s := servers(t)
	b := S3{Endpoint: s.s3Endpoint, AccessKey: s.s3AccessKey, SecretKey: s.s3SecretKey,
		Region: "us-east-1", Bucket: uniqueName(t)}
	if err := b.create(); err != nil {
		t.Fatalf("storagetest: creating S3 bucket %s on %s: %v", b.Bucket, b.Endpoint, err)
	}
	t.Cleanup(func() {
		if err := b.remove(); err != nil {
			t.Errorf("storagetest: removing S3 bucket %s: %v", b.Bucket, err)
		}
	})
	return b
}

// NewGCSBucket makes a bucket for the test on fake-gcs-server and removes
// it, and the objects in it, when the test ends.
func NewGCSBucket(t testing.TB) GCS {
	t.Helper()
	s := servers(t)
	b := GCS{Endpoint: s.gcsEndpoint, Bucket: uniqueName(t)}
	if err := b.create(); err != nil {
		t.Fatalf("storagetest: creating GCS bucket %s on %s: %v", b.Bucket, b.Endpoint, err)
	}
	t.Cleanup(func() {
		if err := b.remove(); err != nil {
			t.Errorf("storagetest: removing GCS bucket %s: %v", b.Bucket, err)
		}
	})
	return b
}

// NewAzureContainer makes a blob container for the test on Azurite and
// removes it, and the blobs in it, when the test ends.
func NewAzureContainer(t testing.TB) Azure {
	t.Helper()
	s := servers(t)
	c := Azure{
		AccountURL:  s.azureAccountURL,
		AccountName: azuriteAccount,
		AccountKey:  azuriteKey,
		Container:   uniqueName(t),
	}
	c.ConnectionString = fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=%s;",
		c.AccountName, c.AccountKey, c.AccountURL)
	if err := c.create(); err != nil {
		t.Fatalf("storagetest: creating Azure container %s on %s: %v", c.Container, c.AccountURL, err)
	}
	t.Cleanup(func() {
		if err := c.remove(); err != nil {
			t.Errorf("storagetest: removing Azure container %s: %v", c.Container, err)
		}
	})
	return c
}

// endpoints are the servers' addresses, from the environment or from the
// servers this process started.
type endpoints struct {
	s3Endpoint, s3AccessKey, s3SecretKey string
	gcsEndpoint                          string
	azureAccountURL                      string
}

var (
	startOnce sync.Once
	shared    endpoints
	startErr  error
)

func servers(t testing.TB) endpoints {
	t.Helper()
	startOnce.Do(func() { shared, startErr = start() })
	if startErr != nil {
		t.Fatalf("storagetest: no object stores: %v", startErr)
	}
	return shared
}

// fromEnv reads the servers' addresses from the environment, reporting
// whether all of them are set.
func fromEnv(getenv func(string) string) (endpoints, bool) {
	e := endpoints{
		s3Endpoint:      strings.TrimRight(getenv(S3EndpointEnv), "/"),
		s3AccessKey:     getenv(S3AccessKeyEnv),
		s3SecretKey:     getenv(S3SecretKeyEnv),
		gcsEndpoint:     strings.TrimRight(getenv(GCSEndpointEnv), "/"),
		azureAccountURL: strings.TrimRight(getenv(AzureBlobEndpointEnv), "/"),
	}
	if e.azureAccountURL != "" && !strings.HasSuffix(e.azureAccountURL, "/"+azuriteAccount) {
		// A bare http://host:port is Azurite's blob service: the account
		// is the first segment of every path.
		e.azureAccountURL += "/" + azuriteAccount
	}
	all := e.s3Endpoint != "" && e.s3AccessKey != "" && e.s3SecretKey != "" &&
		e.gcsEndpoint != "" && e.azureAccountURL != ""
	return e, all
}

// start returns the servers that the environment names, or else starts
// them with scripts/objectstores.sh in a directory of this process's own,
// which a watcher the script starts stops and removes when the process ends.
func start() (endpoints, error) {
	if e, ok := fromEnv(os.Getenv); ok {
		return e, nil
	}
	script := scriptPath()
	if _, err := os.Stat(script); err != nil {
		return endpoints{}, fmt.Errorf("set %s, %s, %s, %s and %s (eval \"$(scripts/objectstores.sh up)\"), or run from the repository (no %s): %w",
			S3EndpointEnv, S3AccessKeyEnv, S3SecretKeyEnv, GCSEndpointEnv, AzureBlobEndpointEnv, script, err)
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("resolute-storagetest-%d", os.Getpid()))
	cmd := exec.Command("bash", script, "up", dir)
	cmd.Env = append(os.Environ(), fmt.Sprintf("RESOLUTE_OBJECTSTORES_WATCH_PID=%d", os.Getpid()))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return endpoints{}, fmt.Errorf("scripts/objectstores.sh up %s: %w\n%s", dir, err, stderr.String())
	}
	vars := parseExports(string(out))
	e, ok := fromEnv(func(k string) string {
		if v := os.Getenv(k); v != "" {
			return v // a server the environment names wins over ours
		}
		return vars[k]
	})
	if !ok {
		return endpoints{}, fmt.Errorf("scripts/objectstores.sh up printed no address for every server:\n%s", out)
	}
	return e, nil
}

// parseExports reads `export NAME=VALUE` lines (VALUE possibly in single
// quotes), as scripts/objectstores.sh prints them.
func parseExports(s string) map[string]string {
	vars := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		name, value, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "export "), "=")
		if !ok {
			continue
		}
		vars[name] = strings.Trim(value, `'"`)
	}
	return vars
}

// scriptPath finds scripts/objectstores.sh from this source file, or else
// from the working directory up.
func scriptPath() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		p := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "objectstores.sh")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, "scripts", "objectstores.sh")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "scripts/objectstores.sh"
		}
		dir = parent
	}
}

// uniqueName is a bucket name that S3, GCS and Azure all accept (3 to 63
// lowercase letters, digits and single hyphens, starting with a letter),
// made of the test's name and random hex so that parallel tests and runs
// never share one.
func uniqueName(t testing.TB) string {
	var b strings.Builder
	b.WriteString("rt-")
	hyphen := true
	for _, r := range strings.ToLower(t.Name()) {
		if b.Len() >= 44 {
			break
		}
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			b.WriteRune(r)
			hyphen = false
		} else if !hyphen {
			b.WriteByte('-')
			hyphen = true
		}
	}
	if !hyphen {
		b.WriteByte('-')
	}
	var random [6]byte
	_, _ = rand.Read(random[:])
	b.WriteString(hex.EncodeToString(random[:]))
	return b.String()
}
