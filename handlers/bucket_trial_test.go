package handlers_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/storage/storagetest"
)

// logsOf is every log line of a trial.
func logsOf(t *testing.T, m *handlerstest.Master, token string, trial resolute.Trial) string {
	return trialLogs(t, m, token, resolute.TrialsResponse{Trials: []resolute.Trial{trial}})
}

// TestATrialKilledMidwayResumesFromItsCheckpointInABucket runs, on each
// bucket server (MinIO, fake-gcs-server, Azurite), a trial whose
// checkpoint_storage is the bucket, kills its process once it has
// checkpointed a few steps, and checks that the restarted trial restored its
// latest checkpoint from the bucket (its only copy: restore_path of bucket
// storage downloads it) and finished every step.
func TestATrialKilledMidwayResumesFromItsCheckpointInABucket(t *testing.T) {
	backends := map[string]func(t *testing.T) (storage string, env []string){
		"s3 on MinIO": func(t *testing.T) (string, []string) {
			b := storagetest.NewS3Bucket(t)
			return fmt.Sprintf("{type: s3, bucket: %s, access_key: %s, secret_key: %s, endpoint_url: %q, prefix: runs}",
				b.Bucket, b.AccessKey, b.SecretKey, b.Endpoint), nil
		},
		"gcs on fake-gcs-server": func(t *testing.T) (string, []string) {
			b := storagetest.NewGCSBucket(t)
			return fmt.Sprintf("{type: gcs, bucket: %s, prefix: runs}", b.Bucket),
				[]string{"STORAGE_EMULATOR_HOST=" + b.Endpoint}
		},
		"azure on Azurite": func(t *testing.T) (string, []string) {
			c := storagetest.NewAzureContainer(t)
			return fmt.Sprintf("{type: azure, container: %s/runs, connection_string: %q}", c.Container, c.ConnectionString), nil
		},
	}
	for name, newStorage := range backends {
		t.Run(name, func(t *testing.T) {
			storage, env := newStorage(t)
			killAndResume(t, storage, env)
		})
	}
}

func killAndResume(t *testing.T, storage string, env []string) {
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	cfg := strings.Replace(slowConfig("bucket-resume", 42, 0, 40), "max_restarts: 0", "max_restarts: 1", 1) +
		"checkpoint_storage: " + storage + "\n"
	for _, kv := range env {
		cfg += fmt.Sprintf("environment: {environment_variables: [%q]}\n", kv)
	}
	cfg = strings.Replace(cfg, "step_seconds: 0.05", "step_seconds: 0.2", 1)
	exp := createSlow(t, m, token, cfg)
	ctx := context.Background()

	// Wait for a checkpoint of at least 5 steps in the bucket (reported, so stored).
	var saved int64
	for deadline := time.Now().Add(90 * time.Second); saved < 5; time.Sleep(100 * time.Millisecond) {
		cps, _ := m.DB.ExperimentCheckpoints(ctx, exp)
		for _, c := range cps {
			saved = max(saved, c.StepsCompleted)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the trial did not checkpoint 5 steps: %+v", cps)
		}
	}
	trials, _ := m.DB.Trials(ctx, exp)
	trial := trials[0]
	allocs, _ := m.DB.TrialAllocations(ctx, trial.ID)
	if len(allocs) != 1 {
		t.Fatalf("allocations before the kill: %+v", allocs)
	}
	pid := m.TrainProcess("DET_ALLOCATION_ID", allocs[0].ID)
	if pid == 0 {
		t.Fatalf("no process of allocation %s", allocs[0].ID)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	e := waitFor(t, m, token, exp, 180*time.Second)
	if e.State != resolute.StateCompleted || e.Restarts != 1 {
		t.Fatalf("experiment %s after %d restarts; logs:\n%s", e.State, e.Restarts, logsOf(t, m, token, trial))
	}
	allocs, _ = m.DB.TrialAllocations(ctx, trial.ID)
	if len(allocs) != 2 {
		t.Fatalf("allocations: %+v", allocs)
	}
	logs := logsOf(t, m, token, trial)
	var resumedAt int
	for _, line := range strings.Split(logs, "\n") {
		if i := strings.Index(line, "slow trial starting at step "); i >= 0 {
			resumedAt, _ = strconv.Atoi(strings.TrimSpace(line[i+len("slow trial starting at step "):]))
		}
	}
	if resumedAt < int(saved) {
		t.Fatalf("the second run started at step %d, not from its checkpoint; logs:\n%s", resumedAt, logs)
	}
	t.Logf("killed pid %d after a checkpoint of step %d; the second run resumed at step %d", pid, saved, resumedAt)
	// Every step was validated, none lost to the kill.
	reports, _ := m.DB.TrialMetrics(ctx, trial.ID, "validation")
	seen := map[int64]bool{}
	for _, r := range reports {
		seen[r.StepsCompleted] = true
	}
	for s := int64(1); s <= 40; s++ {
		if !seen[s] {
			t.Fatalf("step %d was never validated (resumed at %d)", s, resumedAt)
		}
	}
}

// TestAWrongSecretFailsTheTrialNamingTheBucketInItsLog runs a trial whose
// S3 secret key is wrong: it fails at start, and its log names the storage,
// the bucket and the cause, never the secret.
func TestAWrongSecretFailsTheTrialNamingTheBucketInItsLog(t *testing.T) {
	b := storagetest.NewS3Bucket(t)
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	wrong := b.SecretKey + "-not-it"
	cfg := slowConfig("bucket-wrong-secret", 42, 0, 3) +
		fmt.Sprintf("checkpoint_storage: {type: s3, bucket: %s, access_key: %s, secret_key: %s, endpoint_url: %q}\n",
			b.Bucket, b.AccessKey, wrong, b.Endpoint)
	exp := createSlow(t, m, token, cfg)
	if e := waitFor(t, m, token, exp, 90*time.Second); e.State != resolute.StateError {
		t.Fatalf("experiment %s", e.State)
	}
	trials, _ := m.DB.Trials(context.Background(), exp)
	logs := logsOf(t, m, token, trials[0])
	want := fmt.Sprintf("s3 checkpoint storage, bucket '%s': check access: the secret key does not match", b.Bucket)
	if !strings.Contains(logs, want) {
		t.Fatalf("the trial's log lacks %q:\n%s", want, logs)
	}
	if strings.Contains(logs, wrong) {
		t.Errorf("the trial's log shows the secret:\n%s", logs)
	}
}
