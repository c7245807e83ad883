package storagetest

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkBoto3Transfer is the baseline that checkpoint transfers are
// measured against: it uploads a file of incompressible bytes to a bucket on
// MinIO and downloads it back with boto3's own managed transfer
// (testdata/boto3_transfer.py, under /usr/bin/python3 as tasks run), and
// reports each direction's MiB/s. The file is 1 GiB, or
// RESOLUTE_BENCH_TRANSFER_MIB mebibytes.
func BenchmarkBoto3Transfer(b *testing.B) {
	mib := 1024
	if s := os.Getenv("RESOLUTE_BENCH_TRANSFER_MIB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("RESOLUTE_BENCH_TRANSFER_MIB=%q: want a positive number", s)
		}
		mib = n
	}
	bucket := NewS3Bucket(b)
	path := filepath.Join(b.TempDir(), "checkpoint.bin")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.Reader, int64(mib)<<20); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	var up, down float64
	for i := 0; i < max(b.N, 1); i++ {
		cmd := exec.Command("/usr/bin/python3", "testdata/boto3_transfer.py", path, bucket.Bucket)
		cmd.Env = append(os.Environ(),
			S3EndpointEnv+"="+bucket.Endpoint, S3AccessKeyEnv+"="+bucket.AccessKey, S3SecretKeyEnv+"="+bucket.SecretKey)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("boto3_transfer.py: %v\n%s", err, stderr.String())
		}
		var r struct {
			Upload   float64 `json:"upload_mib_per_s"`
			Download float64 `json:"download_mib_per_s"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			b.Fatalf("boto3_transfer.py printed %q: %v", out, err)
		}
		up, down = up+r.Upload, down+r.Download
	}
	n := float64(max(b.N, 1))
	b.ReportMetric(up/n, "upload-MiB/s")
	b.ReportMetric(down/n, "download-MiB/s")
	b.ReportMetric(float64(mib), "MiB")
}
