"""Runs Determined's Core API tutorial scripts (0_start.py ... 3_hpsearch.py from its
examples/tutorials/core_api, unchanged) in subprocesses against the fake master, as a task would
run them. Their code is not part of this repository: point DETERMINED_TUTORIALS at a directory
holding them to run these tests; without it they are skipped."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List, Optional

from tests.fake_master import FakeMaster
from tests.helpers import ALLOC, TOKEN, clean_environ, trial_env

HARNESS = pathlib.Path(__file__).resolve().parent.parent
TUTORIALS = pathlib.Path(os.environ.get("DETERMINED_TUTORIALS", "/nonexistent"))

# The scripts sleep 0.1 s per batch to look busy; skip that. Also keep a real
# /run/determined/info on the test machine from leaking in.
RUNNER = """
import runpy, sys, time
time.sleep = lambda s: None
import determined._info
determined._info.INFO_DIR = sys.argv[2]
script = sys.argv[1]
sys.argv = [script]
runpy.run_path(script, run_name="__main__")
"""


@unittest.skipUnless((TUTORIALS / "0_start.py").exists(),
                     "set DETERMINED_TUTORIALS to a copy of Determined's examples/tutorials/core_api")
class TutorialTest(unittest.TestCase):
    def setUp(self) -> None:
        self.master = FakeMaster()
        self.addCleanup(self.master.close)
        self.tmp = tempfile.mkdtemp(prefix="harness-tutorial-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.ckpt_dir = pathlib.Path(self.tmp, "checkpoints")

    def run_script(self, name: str, env: Optional[Dict[str, str]]) -> subprocess.CompletedProcess:
        full_env = clean_environ()
        if env:
            full_env.update(env)
        full_env["PYTHONPATH"] = str(HARNESS)
        full_env["PYTHONDONTWRITEBYTECODE"] = "1"
        full_env["HOME"] = self.tmp
        proc = subprocess.run(
            [sys.executable, "-B", "-c", RUNNER, str(TUTORIALS / name),
             os.path.join(self.tmp, "no-info")],
            env=full_env, cwd=self.tmp, capture_output=True, text=True, timeout=120,
        )
        if proc.returncode != 0:
            self.fail(f"{name} exited {proc.returncode}\nstdout:\n{proc.stdout}\n"
                      f"stderr:\n{proc.stderr}")
        return proc

    def metrics(self, group: str) -> List[Dict[str, Any]]:
        out = []
        for r in self.master.calls("POST", "/api/v1/trials/11/metrics"):
            self.assertEqual(r.headers.get("grpc-metadata-x-allocation-token"), f"Bearer {TOKEN}")
            if r.body["group"] == group:
                m = r.body["metrics"]
                self.assertEqual((m["trial_id"], m["trial_run_id"]), (11, 2))
                out.append({"steps": m["steps_completed"], **m["metrics"]["avg_metrics"]})
        return out

    def reported_checkpoints(self) -> List[Dict[str, Any]]:
        return [r.body for r in self.master.calls("POST", "/api/v1/checkpoints")]

    def test_0_start(self) -> None:
        proc = self.run_script("0_start.py", trial_env(self.master.url, self.tmp))
        self.assertIn("x is now 0", proc.stdout)
        self.assertEqual(self.master.requests, [])

    def test_1_metrics(self) -> None:
        proc = self.run_script("1_metrics.py", trial_env(self.master.url, self.tmp))
        self.assertEqual(self.metrics("training"),
                         [{"steps": s, "x": s} for s in range(10, 101, 10)])
        self.assertEqual(self.metrics("validation"), [{"steps": 100, "x": 100}])
        progress = [r.body for r in self.master.calls("POST", "/api/v1/trials/11/progress")]
        self.assertEqual(progress, [{"progress": b / 100.0, "is_raw": True}
                                    for b in range(9, 100, 10)])
        # det.LOG_FORMAT is in use.
        self.assertRegex(proc.stderr, r"INFO: \[\d+\] determined.core: report_training_metrics")

    def test_1_metrics_off_cluster(self) -> None:
        proc = self.run_script("1_metrics.py", None)
        self.assertIn("report_validation_metrics(steps_completed=100", proc.stderr)
        self.assertEqual(self.master.requests, [])

    def check_checkpoint(self, body: Dict[str, Any], x: int, steps: int) -> None:
        self.assertEqual(body["metadata"], {"steps_completed": steps})
        self.assertEqual(body["state"], "STATE_COMPLETED")
        self.assertEqual(body["allocationId"], ALLOC)
        self.assertEqual(body["taskId"], "7.1")
        d = self.ckpt_dir / body["uuid"]
        state = (d / "state").read_text()
        self.assertEqual(state, f"{x},{steps},11")
        self.assertEqual(body["resources"], {"state": len(state)})
        self.assertEqual(json.loads((d / "metadata.json").read_text()), {"steps_completed": steps})

    def test_2_checkpoints(self) -> None:
        self.run_script("2_checkpoints.py", trial_env(self.master.url, self.tmp))
        ckpts = self.reported_checkpoints()
        self.assertEqual(len(ckpts), 10)
        for i, body in enumerate(ckpts):
            self.check_checkpoint(body, x=(i + 1) * 10, steps=(i + 1) * 10)
        self.assertEqual(self.metrics("validation"), [{"steps": 100, "x": 100}])
        self.assertEqual(
            self.master.calls("POST", f"/api/v1/allocations/{ALLOC}/signals/ack_preemption"), [])

    def test_2_checkpoints_preempt_and_resume(self) -> None:
        # Paused: the script checkpoints at step 10, sees the preemption, acks and exits 0.
        self.master.set_preempt(True)
        self.run_script("2_checkpoints.py", trial_env(self.master.url, self.tmp))
        (ckpt,) = self.reported_checkpoints()
        self.check_checkpoint(ckpt, x=10, steps=10)
        self.assertEqual(len(self.master.calls(
            "POST", f"/api/v1/allocations/{ALLOC}/signals/ack_preemption")), 1)
        self.assertEqual(self.metrics("validation"), [])

        # Reactivated: a new run resumes from DET_LATEST_CHECKPOINT.
        self.master.close()
        self.master = FakeMaster()
        self.addCleanup(self.master.close)
        env = trial_env(self.master.url, self.tmp, DET_LATEST_CHECKPOINT=ckpt["uuid"],
                        DET_STEPS_COMPLETED="10")
        self.run_script("2_checkpoints.py", env)
        self.assertEqual([m["steps"] for m in self.metrics("training")], list(range(20, 101, 10)))
        self.assertEqual(self.metrics("validation"), [{"steps": 100, "x": 100}])
        self.assertEqual(len(self.reported_checkpoints()), 9)

    def test_3_hpsearch(self) -> None:
        env = trial_env(self.master.url, self.tmp, DET_HPARAMS={"increment_by": 2})
        self.run_script("3_hpsearch.py", env)
        self.assertEqual(self.metrics("validation"),
                         [{"steps": s, "x": 2 * s, "batches": s} for s in range(10, 101, 10)])
        ckpts = self.reported_checkpoints()
        self.assertEqual(len(ckpts), 10)
        for i, body in enumerate(ckpts):
            self.check_checkpoint(body, x=(i + 1) * 20, steps=(i + 1) * 10)
        runs = self.master.calls("POST", "/api/v1/runs/start")
        self.assertEqual(len(runs), 1)
        self.assertEqual({c["storageId"] for c in ckpts}, {7})


if __name__ == "__main__":
    unittest.main()
