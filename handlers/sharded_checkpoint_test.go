package handlers_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/resolute-ml/resolute"
	"github.com/resolute-ml/resolute/handlers/handlerstest"
)

// shardedTrial runs as two workers (torch_distributed on two CPU slots):
// each uploads its own shard into one checkpoint, with metadata of its own.
const shardedTrial = `import pathlib, tempfile
import determined as det

d = det.core.DistributedContext.from_torch_distributed()
with det.core.init(distributed=d) as core_context:
    src = pathlib.Path(tempfile.mkdtemp())
    (src / ("shard-%d.bin" % d.rank)).write_bytes(bytes([d.rank]) * (100 + d.rank))
    md = {"steps_completed": 4} if d.rank == 0 else {"shards": {"rank1": True}}
    storage_id = core_context.checkpoint.upload(src, md, shard=True)
    assert len(set(d.allgather(storage_id))) == 1, "the workers got different checkpoints"
    if d.rank == 0:
        core_context.train.report_validation_metrics(4, {"loss": 0.5})
`

func TestATwoWorkerTrialUploadsOneShardedCheckpoint(t *testing.T) {
	if _, err := os.Stat("/usr/lib/python3/dist-packages/torch"); err != nil {
		t.Skip("two workers need torch.distributed.run (Debian's python3-torch)")
	}
	m := handlerstest.Start(t, handlerstest.Options{})
	token := login(t, m, "admin", "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "train.py"), []byte(shardedTrial), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := "name: sharded\nentrypoint: python3 -m determined.launch.torch_distributed python3 train.py\n" +
		"resources: {slots_per_trial: 2}\nsearcher: {name: single, metric: loss}\nmax_restarts: 0\n"
	req := resolute.CreateExperimentRequest{ExperimentConfigRequest: resolute.ExperimentConfigRequest{Config: cfg},
		ContextTgz: tgz(t, dir)}
	var created resolute.ExperimentResponse
	if code := api(t, m, "POST", "/api/v1/experiments", token, jsonBody(req), &created); code != 200 {
		t.Fatalf("create: %d", code)
	}
	e := waitFor(t, m, token, created.Experiment.ID, 3*time.Minute)
	var trials resolute.TrialsResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(e.ID)+"/trials", token, "", &trials)
	if e.State != resolute.StateCompleted {
		t.Fatalf("experiment %s; logs:\n%s", e.State, trialLogs(t, m, token, trials))
	}
	var cps resolute.CheckpointsResponse
	api(t, m, "GET", "/api/v1/experiments/"+itoa(e.ID)+"/checkpoints", token, "", &cps)
	if len(cps.Checkpoints) != 1 {
		t.Fatalf("%d checkpoints, want the one both workers wrote: %+v", len(cps.Checkpoints), cps.Checkpoints)
	}
	c := cps.Checkpoints[0]
	if diff := cmp.Diff(map[string]int64{"shard-0.bin": 100, "shard-1.bin": 101}, c.Resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	sameJSON(t, "metadata", c.Metadata, `{"steps_completed": 4, "shards": {"rank1": true}}`)
	// On disk: both shards and the merged metadata.json, in one directory.
	found, _ := filepath.Glob(filepath.Join(m.CheckpointDir, "*", c.UUID))
	if more, _ := filepath.Glob(filepath.Join(m.CheckpointDir, c.UUID)); len(more) > 0 {
		found = append(found, more...)
	}
	if len(found) != 1 {
		t.Fatalf("checkpoint %s found at %v under %s", c.UUID, found, m.CheckpointDir)
	}
	for name, size := range map[string]int64{"shard-0.bin": 100, "shard-1.bin": 101} {
		st, err := os.Stat(filepath.Join(found[0], name))
		if err != nil || st.Size() != size {
			t.Errorf("%s: %v, size %v; want %d bytes", name, err, st, size)
		}
	}
	raw, err := os.ReadFile(filepath.Join(found[0], "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var md map[string]any
	if err := json.Unmarshal(raw, &md); err != nil || md["shards"] == nil || md["steps_completed"] != 4.0 {
		t.Errorf("metadata.json: %s (%v)", raw, err)
	}
}
