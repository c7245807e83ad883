package harness

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

	"github.com/resolute-ml/resolute/storage/storagetest"
)

// BenchmarkCheckpointTransfer uploads a checkpoint of one file of
// incompressible bytes to a bucket on MinIO through the harness's Core API
// (checkpoint.upload, checkpoint.download with s3 checkpoint storage) and
// through boto3's own upload_file/download_file, taking turns
// (bench/checkpoint_transfer.py under /usr/bin/python3, as tasks run), and
// reports each one's MiB/s and the harness's ratio to boto3 per direction.
// The file is 1 GiB, or RESOLUTE_BENCH_TRANSFER_MIB mebibytes.
func BenchmarkCheckpointTransfer(b *testing.B) {
	mib := 1024
	if s := os.Getenv("RESOLUTE_BENCH_TRANSFER_MIB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("RESOLUTE_BENCH_TRANSFER_MIB=%q: want a positive number", s)
		}
		mib = n
	}
	bucket := storagetest.NewS3Bucket(b)
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
	var r struct {
		HarnessUpload   float64 `json:"harness_upload_mib_per_s"`
		HarnessDownload float64 `json:"harness_download_mib_per_s"`
		Boto3Upload     float64 `json:"boto3_upload_mib_per_s"`
		Boto3Download   float64 `json:"boto3_download_mib_per_s"`
		UploadRatio     float64 `json:"upload_ratio"`
		DownloadRatio   float64 `json:"download_ratio"`
	}
	cmd := exec.Command("/usr/bin/python3", "-B", "bench/checkpoint_transfer.py", path, bucket.Bucket,
		"--rounds", strconv.Itoa(max(b.N, 1)))
	cmd.Env = append(withoutCloudEnv(os.Environ()), "PYTHONDONTWRITEBYTECODE=1",
		storagetest.S3EndpointEnv+"="+bucket.Endpoint, storagetest.S3AccessKeyEnv+"="+bucket.AccessKey,
		storagetest.S3SecretKeyEnv+"="+bucket.SecretKey)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("checkpoint_transfer.py: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(out, &r); err != nil {
		b.Fatalf("checkpoint_transfer.py printed %q: %v", out, err)
	}
	b.ReportMetric(r.HarnessUpload, "harness-upload-MiB/s")
	b.ReportMetric(r.HarnessDownload, "harness-download-MiB/s")
	b.ReportMetric(r.Boto3Upload, "boto3-upload-MiB/s")
	b.ReportMetric(r.Boto3Download, "boto3-download-MiB/s")
	b.ReportMetric(r.UploadRatio, "upload-ratio")
	b.ReportMetric(r.DownloadRatio, "download-ratio")
	b.ReportMetric(float64(mib), "MiB")
}
