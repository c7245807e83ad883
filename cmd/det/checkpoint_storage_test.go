package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/authz"
	"github.com/resolute-ml/resolute/control"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/storage/storagetest"
)

// TestACheckpointInMinIOThroughTheCLI: det experiment config shows the
// storage's keys masked; det checkpoint download writes the bucket's files;
// det checkpoint delete asks first (refusing without a terminal unless
// --yes), then its GC task removes the files from the bucket.
func TestACheckpointInMinIOThroughTheCLI(t *testing.T) {
	b := storagetest.NewS3Bucket(t)
	c := newCLI(t, handlerstest.Options{})
	c.loginAdmin()
	ctx := context.Background()
	admin, err := c.m.DB.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	e, err := c.m.Experiments.Create(ctx, authz.User(admin.User), control.CreateRequest{Paused: true, ConfigYAML: fmt.Sprintf(
		"name: cli\nentrypoint: sleep 30\nsearcher: {name: single, metric: loss}\n"+
			"checkpoint_storage: {type: s3, bucket: %s, access_key: %s, secret_key: %s, endpoint_url: %q, prefix: p}\n",
		b.Bucket, b.AccessKey, b.SecretKey, b.Endpoint)})
	if err != nil {
		t.Fatal(err)
	}
	trials, _ := c.m.DB.Trials(ctx, e.ID)
	const uuid = "dddddddd-0000-0000-0000-00000000c11a"
	s3c := s3.New(s3.Options{Region: b.Region, BaseEndpoint: aws.String(b.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(b.AccessKey, b.SecretKey, "")})
	files := map[string]string{"model.pt": "weights", "sub/opt.pt": "state"}
	for name, body := range files {
		if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &b.Bucket, Key: aws.String("p/" + uuid + "/" + name),
			Body: strings.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.m.DB.CreateCheckpoint(ctx, resolute.Checkpoint{UUID: uuid, TrialID: trials[0].ID, ExperimentID: e.ID,
		StepsCompleted: 1, Resources: map[string]int64{"model.pt": 7, "sub/opt.pt": 5}, Size: 12}); err != nil {
		t.Fatal(err)
	}

	cfg := c.ok("", "experiment", "config", fmt.Sprint(e.ID))
	if strings.Contains(cfg, b.SecretKey) || !strings.Contains(cfg, "secret_key: '********'") && !strings.Contains(cfg, `secret_key: "********"`) {
		t.Errorf("det experiment config:\n%s", cfg)
	}

	dir := t.TempDir()
	c.ok("", "checkpoint", "download", uuid, "-o", dir)
	for name, body := range files {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != body {
			t.Errorf("%s: %q %v, want %q", name, got, err, body)
		}
	}

	if r := c.run("", "checkpoint", "delete", uuid); r.code == 0 || !strings.Contains(r.stderr, "--yes") {
		t.Fatalf("delete without a terminal or --yes: %+v", r)
	}
	c.ok("", "checkpoint", "delete", "--yes", uuid)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		cp, err := c.m.DB.Checkpoint(ctx, uuid)
		if err == nil && cp.State == "DELETED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpoint after det checkpoint delete: %+v %v", cp, err)
		}
	}
	out, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &b.Bucket, Prefix: aws.String("p/" + uuid + "/")})
	if err != nil || len(out.Contents) != 0 {
		t.Errorf("the bucket still holds %d objects of the checkpoint (%v)", len(out.Contents), err)
	}
}
