package handlers_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/storage/storagetest"
)

// BenchmarkCheckpointDownloadFromMinIO is the figure of issue 17: `det
// checkpoint download` (client.DownloadCheckpoint, through the master's
// stream) of a checkpoint of one 1 GiB file (RESOLUTE_BENCH_TRANSFER_MIB
// to change it) in a MinIO bucket, beside boto3's own managed download of
// the same object (storagetest's testdata/boto3_transfer.py), on the same
// server; it reports both in MiB/s and their ratio (the target is 0.8 or
// more).
func BenchmarkCheckpointDownloadFromMinIO(b *testing.B) {
	mib := 1024
	if s := os.Getenv("RESOLUTE_BENCH_TRANSFER_MIB"); s != "" {
		mib, _ = strconv.Atoi(s)
	}
	bucket := storagetest.NewS3Bucket(b)
	src := filepath.Join(b.TempDir(), "checkpoint.bin")
	f, err := os.Create(src)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.CopyN(f, rand.Reader, int64(mib)<<20); err != nil {
		b.Fatal(err)
	}
	f.Close()

	// boto3 uploads the file (baseline/checkpoint.bin) and downloads it back.
	cmd := exec.Command("/usr/bin/python3", "../storage/storagetest/testdata/boto3_transfer.py", src, bucket.Bucket)
	cmd.Env = append(os.Environ(), storagetest.S3EndpointEnv+"="+bucket.Endpoint,
		storagetest.S3AccessKeyEnv+"="+bucket.AccessKey, storagetest.S3SecretKeyEnv+"="+bucket.SecretKey)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("boto3_transfer.py: %v\n%s", err, stderr.String())
	}
	var base struct {
		Download float64 `json:"download_mib_per_s"`
	}
	if err := json.Unmarshal(out, &base); err != nil {
		b.Fatalf("boto3_transfer.py printed %q", out)
	}

	// The same object becomes the one file of a checkpoint.
	const uuid = "eeeeeeee-0000-0000-0000-000000000001"
	ctx := b.Context()
	s3c := s3.New(s3.Options{Region: bucket.Region, BaseEndpoint: aws.String(bucket.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(bucket.AccessKey, bucket.SecretKey, "")})
	if _, err := s3c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &bucket.Bucket, Key: aws.String(uuid + "/checkpoint.bin"),
		CopySource: aws.String(bucket.Bucket + "/baseline/checkpoint.bin")}); err != nil {
		b.Fatal(err)
	}
	m := handlerstest.Start(b, handlerstest.Options{})
	admin, err := m.DB.UserByUsername(ctx, "admin")
	if err != nil {
		b.Fatal(err)
	}
	e, err := m.Experiments.Create(ctx, authz.User(admin.User), control.CreateRequest{Paused: true, ConfigYAML: fmt.Sprintf(
		"name: bench\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"+
			"checkpoint_storage: {type: s3, bucket: %s, access_key: %s, secret_key: %s, endpoint_url: %q}\n",
		bucket.Bucket, bucket.AccessKey, bucket.SecretKey, bucket.Endpoint)})
	if err != nil {
		b.Fatal(err)
	}
	trials, _ := m.DB.Trials(ctx, e.ID)
	size := int64(mib) << 20
	if err := m.DB.CreateCheckpoint(ctx, resolute.Checkpoint{UUID: uuid, TrialID: trials[0].ID, ExperimentID: e.ID,
		StepsCompleted: 1, Resources: map[string]int64{"checkpoint.bin": size}, Size: size}); err != nil {
		b.Fatal(err)
	}
	c := client.New(m.URL, client.WithToken(login(b, m, "admin", "")))
	var secs float64
	for i := 0; i < max(b.N, 1); i++ {
		dir := filepath.Join(b.TempDir(), "download")
		start := time.Now()
		if err := c.DownloadCheckpoint(ctx, uuid, dir); err != nil {
			b.Fatal(err)
		}
		secs += time.Since(start).Seconds()
		if fi, err := os.Stat(filepath.Join(dir, "checkpoint.bin")); err != nil || fi.Size() != size {
			b.Fatalf("downloaded %v %v", fi, err)
		}
		os.RemoveAll(dir)
	}
	ours := float64(mib) / (secs / float64(max(b.N, 1)))
	b.ReportMetric(ours, "det-download-MiB/s")
	b.ReportMetric(base.Download, "boto3-download-MiB/s")
	b.ReportMetric(ours/base.Download, "ratio")
}
