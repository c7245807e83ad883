"""Runs an example's train.py the way a trial runs on a cluster, against the harness's fake master
(harness/tests/fake_master.py), and checks what the master would see:

1. the trial is paused: it reports its first validation and checkpoint, then exits 0;
2. it resumes from that checkpoint (DET_LATEST_CHECKPOINT) and trains to the end, and its final
   validation_loss equals that of an uninterrupted run (3.), so a pause changes nothing;
4. optionally, hyperparameters the script must reject end in an INVALID_HP early exit.

usage: on_cluster.py EXAMPLE_DIR MAX_STEPS HPARAMS_JSON [INVALID_HPARAMS_JSON]
Needs PYTHONPATH to hold the harness directory (for `determined` and `tests`).
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from tests.fake_master import FakeMaster
from tests.helpers import clean_environ, trial_env

example, max_steps, hparams = pathlib.Path(sys.argv[1]).resolve(), sys.argv[2], sys.argv[3]
invalid = sys.argv[4] if len(sys.argv) > 4 else None
tmp = tempfile.mkdtemp(prefix="example-on-cluster-")
storage = pathlib.Path(tmp, "checkpoints")


def fail(msg, proc=None):
    if proc is not None:
        msg += f"\n--- output of train.py ---\n{proc.stdout}{proc.stderr}"
    sys.exit(f"{example.name}: {msg}")


def run_trial(master, hp, **env_overrides):
    config = {
        "name": example.name,
        "checkpoint_storage": {"type": "shared_fs", "host_path": tmp, "storage_path": "checkpoints"},
        "searcher": {"name": "single", "metric": "validation_loss"},
    }
    env = clean_environ()
    env.update(trial_env(master.url, tmp, DET_HPARAMS=hp, DET_EXPERIMENT_CONFIG=json.dumps(config),
                         **env_overrides))
    env.update(EXAMPLE_MAX_STEPS=max_steps, PYTHONDONTWRITEBYTECODE="1", HOME=tmp)
    proc = subprocess.run([sys.executable, "train.py"], cwd=example, env=env,
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        fail(f"train.py exited {proc.returncode}", proc)
    return proc


def metrics(master, group):
    out = []
    for r in master.calls("POST", r"/api/v1/trials/\d+/metrics"):
        if r.body["group"] == group:
            m = r.body["metrics"]
            out.append({"steps": m["steps_completed"], **m["metrics"]["avg_metrics"]})
    return out


def checkpoints(master):
    return [r.body for r in master.calls("POST", "/api/v1/checkpoints")]


def final_validation(master, proc):
    vals = metrics(master, "validation")
    if not vals or vals[-1]["steps"] != int(max_steps):
        fail(f"no validation at step {max_steps}: {vals}", proc)
    for v in vals:
        if v.get("batches") != v["steps"] or "validation_loss" not in v:
            fail(f"validation lacks validation_loss or batches == steps: {v}", proc)
    return vals[-1]["validation_loss"]


try:
    # 1. Paused from the start: stop right after the first checkpoint.
    master = FakeMaster()
    master.set_preempt(True)
    proc = run_trial(master, hparams)
    ckpts = checkpoints(master)
    if len(ckpts) != 1:
        fail(f"paused trial reported {len(ckpts)} checkpoints, want 1", proc)
    first = ckpts[0]
    steps = first["metadata"]["steps_completed"]
    if not (storage / first["uuid"] / "metadata.json").is_file():
        fail(f"checkpoint {first['uuid']} has no metadata.json in {storage}", proc)
    if not master.calls("POST", r"/api/v1/allocations/[^/]+/signals/ack_preemption"):
        fail("the paused trial never acknowledged the preemption", proc)
    master.close()

    # 2. Resumed from that checkpoint.
    master = FakeMaster()
    proc = run_trial(master, hparams, DET_LATEST_CHECKPOINT=first["uuid"],
                     DET_STEPS_COMPLETED=str(steps))
    trained = [m["steps"] for m in metrics(master, "training")]
    if not trained or min(trained) <= steps:
        fail(f"resumed trial reported training at steps {trained}, want all > {steps}", proc)
    resumed_loss = final_validation(master, proc)
    master.close()

    # 3. Uninterrupted, for comparison.
    master = FakeMaster()
    proc = run_trial(master, hparams)
    full_loss = final_validation(master, proc)
    if len(checkpoints(master)) < 2:
        fail("an uninterrupted trial should checkpoint at every validation", proc)
    master.close()
    if resumed_loss != full_loss:
        fail(f"resumed run ended at validation_loss {resumed_loss}, uninterrupted {full_loss}")

    # 4. Hyperparameters the script must refuse.
    if invalid:
        master = FakeMaster()
        proc = run_trial(master, invalid)
        exits = [r.body for r in master.calls("POST", r"/api/v1/trials/\d+/early_exit")]
        if exits != [{"reason": "EXITED_REASON_INVALID_HP"}] or checkpoints(master):
            fail(f"invalid hparams: early exits {exits}, want one INVALID_HP", proc)
        master.close()

    print(f"{example.name}: paused at step {steps}, resumed to {max_steps}; final "
          f"validation_loss {full_loss:.4f} equals the uninterrupted run's")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
