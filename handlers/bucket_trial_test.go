package handlers_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/storage/storagetest"
)

// trialProcess finds the pid of the python process of an allocation: the one
// whose environment names it.
func trialProcess(t *testing.T, allocationID string) int {
	t.Helper()
	want := []byte("DET_ALLOCATION_ID=" + allocationID + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		argv0 := filepath.Base(string(bytes.SplitN(cmd, []byte{0}, 2)[0]))
		if bytes.Contains(cmd, []byte("train.py")) && strings.HasPrefix(argv0, "python") {
			pid, _ := strconv.Atoi(filepath.Base(d))
			return pid
		}
	}
	return 0
}

// logsOf is every log line of a trial.
func logsOf(t *testing.T, m *handlerstest.Master, token string, trial resolute.Trial) string {
	return trialLogs(t, m, token, resolute.TrialsResponse{Trials: []resolute.Trial{trial}})
}

// TestATrialKilledMidwayResumesFromItsCheckpointInMinIO runs a trial whose
// checkpoint_storage is an S3 bucket on MinIO, kills its process once it has
// checkpointed a few steps, and checks that the restarted trial restored its
// latest checkpoint from the bucket (its only copy: restore_path of s3
// storage downloads it) and finished every step.
func TestATrialKilledMidwayResumesFromItsCheckpointInMinIO(t *testing.T) {
	b := storagetest.NewS3Bucket(t)
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	cfg := strings.Replace(slowConfig("bucket-resume", 42, 0, 40), "max_restarts: 0", "max_restarts: 1", 1) +
		fmt.Sprintf("checkpoint_storage: {type: s3, bucket: %s, access_key: %s, secret_key: %s, endpoint_url: %q, prefix: runs}\n",
			b.Bucket, b.AccessKey, b.SecretKey, b.Endpoint)
	cfg = strings.Replace(cfg, "step_seconds: 0.05", "step_seconds: 0.2", 1)
	exp := createSlow(t, m, token, cfg)
	ctx := context.Background()

	var trial resolute.Trial
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		trials, _ := m.DB.Trials(ctx, exp)
		if len(trials) == 1 && trials[0].StepsCompleted >= 5 {
			trial = trials[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the trial did not checkpoint 5 steps: %+v", trials)
		}
	}
	allocs, _ := m.DB.TrialAllocations(ctx, trial.ID)
	if len(allocs) != 1 {
		t.Fatalf("allocations before the kill: %+v", allocs)
	}
	pid := trialProcess(t, allocs[0].ID)
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
	if resumedAt < 5 {
		t.Fatalf("the second run started at step %d, not from its checkpoint; logs:\n%s", resumedAt, logs)
	}
	t.Logf("killed pid %d at step %d or later; the second run resumed at step %d", pid, trial.StepsCompleted, resumedAt)
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
