package handlers_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/client"
	"github.com/resolute-ml/resolute/db"
	"github.com/resolute-ml/resolute/expconf"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
	"github.com/resolute-ml/resolute/storage"
	"github.com/resolute-ml/resolute/storage/storagetest"
)

// bucketStorage is a checkpoint_storage section on a fresh bucket of a real
// server, and what a trial's environment needs to reach it.
type bucketStorage struct {
	yaml string   // the checkpoint_storage section, flow style
	env  []string // environment_variables of the trial (and so of its GC task)
}

func bucketStorages(t *testing.T) map[string]func(t *testing.T) bucketStorage {
	return map[string]func(t *testing.T) bucketStorage{
		"s3 on MinIO": func(t *testing.T) bucketStorage {
			b := storagetest.NewS3Bucket(t)
			return bucketStorage{yaml: fmt.Sprintf("{type: s3, bucket: %s, access_key: %s, secret_key: %s, endpoint_url: %q, prefix: runs}",
				b.Bucket, b.AccessKey, b.SecretKey, b.Endpoint)}
		},
		"gcs on fake-gcs-server": func(t *testing.T) bucketStorage {
			b := storagetest.NewGCSBucket(t)
			t.Setenv("STORAGE_EMULATOR_HOST", b.Endpoint) // the master's
			return bucketStorage{yaml: fmt.Sprintf("{type: gcs, bucket: %s, prefix: runs}", b.Bucket),
				env: []string{"STORAGE_EMULATOR_HOST=" + b.Endpoint}}
		},
		"azure on Azurite": func(t *testing.T) bucketStorage {
			b := storagetest.NewAzureContainer(t)
			return bucketStorage{yaml: fmt.Sprintf("{type: azure, container: %s, connection_string: %q}", b.Container, b.ConnectionString)}
		},
	}
}

// waitGCTasks waits until n CHECKPOINT_GC tasks have ended and returns them.
func waitGCTasks(t *testing.T, m *handlerstest.Master, n int) []resolute.Task {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		gc, _ := m.DB.Tasks(context.Background(), db.TaskFilter{Type: resolute.TaskCheckpointGC})
		ended := 0
		for _, g := range gc {
			if g.State == resolute.TaskTerminated {
				ended++
			}
		}
		if ended >= n {
			return gc
		}
		if time.Now().After(deadline) {
			t.Fatalf("checkpoint GC tasks %+v", gc)
		}
	}
}

// TestCheckpointsInABucketAreCollectedDownloadedAndDeleted runs, on each
// bucket server, a trial that checkpoints four times into the bucket; the
// policy's GC task deletes the three it does not keep from the bucket (in
// the harness, as a GC pod would), the kept one downloads through the
// master with the very files the bucket holds, and det checkpoint delete
// removes it from the bucket.
func TestCheckpointsInABucketAreCollectedDownloadedAndDeleted(t *testing.T) {
	for name, newStorage := range bucketStorages(t) {
		t.Run(name, func(t *testing.T) {
			bs := newStorage(t)
			m := handlerstest.Start(t, handlerstest.Options{})
			token := login(t, m, "admin", "")
			cfg := slowConfig("bucket", 42, 0, 4) + "checkpoint_storage: " + bs.yaml + "\n"
			if len(bs.env) > 0 {
				cfg += fmt.Sprintf("environment: {environment_variables: [%q]}\n", strings.Join(bs.env, ""))
			}
			exp := createSlow(t, m, token, cfg)
			if e := waitFor(t, m, token, exp, 90*time.Second); e.State != resolute.StateCompleted {
				t.Fatalf("experiment %s", e.State)
			}
			gc := waitGCTasks(t, m, 1)
			if gc[0].ExitCode == nil || *gc[0].ExitCode != 0 {
				t.Fatalf("checkpoint GC task %+v", gc[0])
			}
			ctx := t.Context()
			e, err := m.DB.Experiment(ctx, exp)
			if err != nil {
				t.Fatal(err)
			}
			ec, err := expconf.ParseExperiment(e.Config)
			if err != nil {
				t.Fatal(err)
			}
			st, err := storage.New(ctx, ec.CheckpointStorage)
			if err != nil {
				t.Fatal(err)
			}
			doomed, _ := m.DB.TaskCheckpointGC(ctx, gc[0].ID)
			if len(doomed) != 3 {
				t.Fatalf("GC took %v, want 3 checkpoints", doomed)
			}
			for _, u := range doomed {
				if objs, err := st.List(ctx, u); err != nil || len(objs) != 0 {
					t.Errorf("collected checkpoint %s still in the bucket: %v %v", u, objs, err)
				}
			}
			kept, _ := m.DB.ExperimentCheckpoints(ctx, exp)
			if len(kept) != 1 || kept[0].StepsCompleted != 4 {
				t.Fatalf("kept %+v", kept)
			}
			uuid := kept[0].UUID
			objs, err := st.List(ctx, uuid)
			if err != nil || len(objs) == 0 {
				t.Fatalf("the kept checkpoint in the bucket: %v %v", objs, err)
			}

			// det checkpoint download: the very files of the bucket.
			c := client.New(m.URL, client.WithToken(token))
			dir := t.TempDir()
			if err := c.DownloadCheckpoint(ctx, uuid, dir); err != nil {
				t.Fatal(err)
			}
			want, got := map[string]string{}, map[string]string{}
			for _, o := range objs {
				r, err := st.Open(ctx, uuid+"/"+o.Path)
				if err != nil {
					t.Fatal(err)
				}
				data, _ := io.ReadAll(r)
				r.Close()
				want[o.Path] = string(data)
			}
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					data, _ := os.ReadFile(p)
					rel, _ := filepath.Rel(dir, p)
					got[filepath.ToSlash(rel)] = string(data)
				}
				return err
			})
			if diff := cmp.Diff(want, got); diff != "" || !strings.Contains(got["state.json"], `"step": 4`) {
				t.Errorf("downloaded files (-bucket +download):\n%s", diff)
			}

			// det checkpoint delete: gone from the bucket, marked deleted.
			if err := c.DeleteCheckpoints(ctx, []string{uuid}); err != nil {
				t.Fatal(err)
			}
			waitGCTasks(t, m, 2)
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				cp, err := m.DB.Checkpoint(ctx, uuid)
				if err == nil && cp.State == "DELETED" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("checkpoint %s after det checkpoint delete: %+v %v", uuid, cp, err)
				}
			}
			if objs, err := st.List(ctx, uuid); err != nil || len(objs) != 0 {
				t.Errorf("deleted checkpoint still in the bucket: %v %v", objs, err)
			}
			if err := c.DownloadCheckpoint(ctx, uuid, t.TempDir()); resolute.ErrorCode(err) != resolute.EGone {
				t.Errorf("download of a deleted checkpoint: %v", err)
			}
		})
	}
}

// TestATensorBoardOverABucketSyncsAndServesItsTrialsFiles: on each bucket
// server, a trial's TensorBoard file goes into the bucket (the harness
// uploads it), and a TensorBoard over the experiment syncs it into its own
// directory and serves it.
func TestATensorBoardOverABucketSyncsAndServesItsTrialsFiles(t *testing.T) {
	for name, newStorage := range bucketStorages(t) {
		t.Run(name, func(t *testing.T) {
			bs := newStorage(t)
			m := handlerstest.Start(t, handlerstest.Options{})
			token := login(t, m, "admin", "")
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "train.py"), []byte(tbTrial), 0o644); err != nil {
				t.Fatal(err)
			}
			env := ""
			if len(bs.env) > 0 {
				env = fmt.Sprintf("environment: {environment_variables: [%q]}\n", bs.env[0])
			}
			req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{
				Config: "name: tb\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\nmax_restarts: 0\n" +
					"checkpoint_storage: " + bs.yaml + "\n" + env},
				ContextTgz: tgz(t, dir)}
			var e resolute.ExperimentResponse
			if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &e); code != 200 {
				t.Fatalf("create: %d", code)
			}
			exp := e.Experiment.ID
			if e := waitFor(t, m, token, exp, 90*time.Second); e.State != resolute.StateCompleted {
				t.Fatalf("experiment %d: %s\n%s", exp, e.State, fetchLogs(t, m, token, "/api/v1/trials/1/logs"))
			}
			var trials resolute.TrialsResponse
			api(t, m, "GET", "/api/v1/experiments/"+itoa(exp)+"/trials", token, "", &trials)
			trial := trials.Trials[0].ID

			bin := handlerstest.TempDir(t)
			if err := os.WriteFile(filepath.Join(bin, "tensorboard"), []byte(standInTensorBoard), 0o755); err != nil {
				t.Fatal(err)
			}
			vars := []string{"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin"}
			vars = append(vars, bs.env...)
			tbConfig := fmt.Sprintf("environment: {environment_variables: [%q]}\n", strings.Join(vars, `", "`))
			tbConfig = strings.ReplaceAll(tbConfig, `\"`, `"`)
			task := readyTensorBoard(t, m, token, resolute.CreateTaskRequest{Config: tbConfig, ExperimentIDs: []int64{exp}})
			want := "tensorboard/experiment-" + itoa(exp) + "/trial/" + itoa(trial) + "/events.out.tfevents.stand-in"
			code, body := proxyGet(t, m, "/proxy/"+task.ID+"/", token)
			if code != 200 || !strings.Contains(body, want) {
				t.Fatalf("the TensorBoard through the proxy: %d\n%s\nwant %s\n%s", code, body, want,
					fetchLogs(t, m, token, "/api/v1/tasks/"+task.ID+"/logs"))
			}
		})
	}
}

// TestDeletingAnExperimentDeletesItsCheckpointsFromTheBucket: its GC task
// outlives it, with the storage in its own config.
func TestDeletingAnExperimentDeletesItsCheckpointsFromTheBucket(t *testing.T) {
	b := storagetest.NewS3Bucket(t)
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	cfg := slowConfig("doomed", 42, 0, 2) + fmt.Sprintf(
		"checkpoint_storage: {type: s3, bucket: %s, access_key: %s, secret_key: %s, endpoint_url: %q, save_trial_latest: 2}\n",
		b.Bucket, b.AccessKey, b.SecretKey, b.Endpoint)
	exp := createSlow(t, m, token, cfg)
	if e := waitFor(t, m, token, exp, 90*time.Second); e.State != resolute.StateCompleted {
		t.Fatalf("experiment %s", e.State)
	}
	ctx := t.Context()
	e, _ := m.DB.Experiment(ctx, exp)
	ec, _ := expconf.ParseExperiment(e.Config)
	st, err := storage.New(ctx, ec.CheckpointStorage)
	if err != nil {
		t.Fatal(err)
	}
	cps, _ := m.DB.ExperimentCheckpoints(ctx, exp)
	if len(cps) != 2 {
		t.Fatalf("checkpoints %+v", cps)
	}
	for _, c := range cps {
		if objs, _ := st.List(ctx, c.UUID); len(objs) == 0 {
			t.Fatalf("checkpoint %s is not in the bucket", c.UUID)
		}
	}
	if code := api(t, m, "DELETE", "/api/v1/experiments/"+itoa(exp), token, "", nil); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	gc := waitGCTasks(t, m, 1)
	if gc[len(gc)-1].ExitCode == nil || *gc[len(gc)-1].ExitCode != 0 {
		t.Fatalf("GC tasks %+v", gc)
	}
	for _, c := range cps {
		if objs, err := st.List(ctx, c.UUID); err != nil || len(objs) != 0 {
			t.Errorf("checkpoint %s of the deleted experiment is still in the bucket: %v %v", c.UUID, objs, err)
		}
	}
}

// crashOnce checkpoints at each of four steps into the experiment's
// storage, crashes once after the second, and resumes from its latest
// checkpoint, read back from storage.
const crashOnce = `import json, os
import determined as det

with det.core.init() as ctx:
    info = det.get_cluster_info()
    step = 0
    if info.latest_checkpoint is not None:
        with ctx.checkpoint.restore_path(info.latest_checkpoint) as p:
            with open(os.path.join(p, "state.json")) as f:
                step = json.load(f)["step"]
        print("resumed at step", step, flush=True)
    while step < 4:
        step += 1
        ctx.train.report_validation_metrics(step, {"loss": 1.0 / step})
        with ctx.checkpoint.store_path({"steps_completed": step}) as (p, _):
            with open(os.path.join(p, "state.json"), "w") as f:
                json.dump({"step": step}, f)
        if step == 2 and info.latest_checkpoint is None:
            print("crashing", flush=True)
            os._exit(3)
`

// TestATrialCrashesAndResumesFromItsCheckpointInABucket: on each bucket
// server, the same config Determined ran: the trial crashes after its
// second checkpoint, restarts, and resumes at step 2 from the bucket.
func TestATrialCrashesAndResumesFromItsCheckpointInABucket(t *testing.T) {
	for name, newStorage := range bucketStorages(t) {
		t.Run(name, func(t *testing.T) {
			bs := newStorage(t)
			m := handlerstest.Start(t, handlerstest.Options{})
			token := login(t, m, "admin", "")
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "train.py"), []byte(crashOnce), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := "name: crash\nentrypoint: python3 train.py\nsearcher: {name: single, metric: loss}\nmax_restarts: 1\n" +
				"checkpoint_storage: " + bs.yaml + "\n"
			if len(bs.env) > 0 {
				cfg += fmt.Sprintf("environment: {environment_variables: [%q]}\n", bs.env[0])
			}
			var e resolute.ExperimentResponse
			req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg}, ContextTgz: tgz(t, dir)}
			if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &e); code != 200 {
				t.Fatalf("create: %d", code)
			}
			exp := e.Experiment.ID
			done := waitFor(t, m, token, exp, 90*time.Second)
			var trials resolute.TrialsResponse
			api(t, m, "GET", "/api/v1/experiments/"+itoa(exp)+"/trials", token, "", &trials)
			logs := fetchLogs(t, m, token, "/api/v1/trials/"+itoa(trials.Trials[0].ID)+"/logs")
			if done.State != resolute.StateCompleted || !strings.Contains(logs, "crashing") || !strings.Contains(logs, "resumed at step 2") {
				t.Fatalf("experiment %s; the trial's log:\n%s", done.State, logs)
			}
			if trials.Trials[0].Restarts != 1 {
				t.Errorf("restarts %d, want 1", trials.Trials[0].Restarts)
			}
		})
	}
}
