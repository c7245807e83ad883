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


MNIST = pathlib.Path(os.environ.get("DETERMINED_MNIST_PYTORCH", "/nonexistent"))


def _mnist_ready() -> bool:
    if not (MNIST / "train.py").exists():
        return False
    probe = "import torch, torchvision, filelock, yaml; from ruamel import yaml as y"
    return subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0


@unittest.skipUnless(_mnist_ready(),
                     "set DETERMINED_MNIST_PYTORCH to a copy of Determined's "
                     "examples/tutorials/mnist_pytorch (needs torch, torchvision, filelock, "
                     "ruamel.yaml and PyYAML)")
class MnistPyTorchTutorialTest(unittest.TestCase):
    """Determined's PyTorch Trial API tutorial (train.py, model.py, data.py, const.yaml,
    unchanged) on a small MNIST written in its own file format where torchvision looks, so
    nothing is downloaded: on a cluster (the fake master), paused and resumed, as a module:Class
    entrypoint, with two ranks under determined.launch.torch_distributed, and locally."""

    def setUp(self) -> None:
        import yaml

        from tests import tiny_mnist

        self.master = FakeMaster()
        self.addCleanup(self.master.close)
        self.tmp = tempfile.mkdtemp(prefix="harness-mnist-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.model = os.path.join(self.tmp, "model")
        shutil.copytree(MNIST, self.model, ignore=shutil.ignore_patterns("__pycache__", "data"))
        tiny_mnist.write(os.path.join(self.model, "data"))
        self.const = yaml.safe_load((MNIST / "const.yaml").read_text())

    def config(self, **over: Any) -> Dict[str, Any]:
        c = dict(self.const)
        c["checkpoint_storage"] = {"type": "shared_fs", "host_path": self.tmp,
                                   "storage_path": "checkpoints"}
        c["searcher"] = {"name": "single", "metric": "validation_loss",
                         "smaller_is_better": True, "max_length": {"batches": 16}}
        c.update(over)
        return c

    def run_task(self, argv: List[str], env: Optional[Dict[str, str]]) -> str:
        full_env = clean_environ()
        full_env.update(env or {})
        # As in a task, python3 on the PATH is the task Python (harness.Install links it).
        bin_dir = os.path.join(self.tmp, "bin")
        if not os.path.exists(bin_dir):
            os.makedirs(bin_dir)
            os.symlink(sys.executable, os.path.join(bin_dir, "python3"))
        full_env.update({"PYTHONPATH": str(HARNESS), "PYTHONDONTWRITEBYTECODE": "1",
                         "HOME": self.tmp, "OMP_NUM_THREADS": "1",
                         "PATH": bin_dir + os.pathsep + full_env.get("PATH", "")})
        proc = subprocess.run([sys.executable, "-B"] + argv, env=full_env, cwd=self.model,
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            self.fail(f"{argv} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        return proc.stderr

    def trial(self, **over: Any) -> Dict[str, str]:
        conf = self.config(**over.pop("config", {}))
        return trial_env(self.master.url, self.tmp, DET_HPARAMS=conf["hyperparameters"],
                         DET_EXPERIMENT_CONFIG=conf, **over)

    def validations(self, master: Optional[FakeMaster] = None) -> List[Dict[str, Any]]:
        return [{"steps": r.body["metrics"]["steps_completed"],
                 **r.body["metrics"]["metrics"]["avg_metrics"]}
                for r in (master or self.master).calls("POST", "/api/v1/trials/11/metrics")
                if r.body["group"] == "validation"]

    def checkpoints(self, master: Optional[FakeMaster] = None) -> List[Dict[str, Any]]:
        return [r.body for r in (master or self.master).calls("POST", "/api/v1/checkpoints")]

    def test_on_a_cluster_then_loaded_from_its_checkpoint(self) -> None:
        self.run_task(["train.py", "--batches", "16"], self.trial())
        (v,) = self.validations()
        self.assertEqual((v["steps"], v["batches"]), (16, 16))
        self.assertGreater(v["accuracy"], 0.2)
        (ckpt,) = self.checkpoints()
        d = pathlib.Path(self.tmp, "checkpoints", ckpt["uuid"])
        for name in ("code/train.py", "state_dict.pth", "trial_state.pkl", "load_data.json",
                     "metadata.json"):
            self.assertTrue((d / name).exists(), name)
        # load_trial_from_checkpoint_path rebuilds MNistTrial from the checkpoint's code/.
        script = ("import sys; from determined import pytorch; "
                  "t = pytorch.load_trial_from_checkpoint_path(sys.argv[1]); "
                  "print(type(t).__name__, sum(p.numel() for p in t.model.parameters()))")
        out = subprocess.run([sys.executable, "-B", "-c", script, str(d)], cwd=self.tmp,
                             env={**clean_environ(), "PYTHONPATH": str(HARNESS),
                                  "HOME": self.tmp}, capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.startswith("MNistTrial "), out.stdout)

    def test_paused_and_resumed_matches_an_uninterrupted_run(self) -> None:
        conf = {"scheduling_unit": 8}
        self.run_task(["train.py", "--batches", "16"], self.trial(config=conf))
        (want,) = self.validations()

        self.master.close()
        self.master = FakeMaster()
        self.addCleanup(self.master.close)
        self.master.set_preempt(True)
        self.run_task(["train.py", "--batches", "16"], self.trial(config=conf))
        self.assertEqual(self.validations(), [])
        (ckpt,) = self.checkpoints()
        self.assertEqual(ckpt["metadata"]["steps_completed"], 8)

        resumed = FakeMaster()
        self.addCleanup(resumed.close)
        self.master = resumed
        self.run_task(["train.py", "--batches", "16"],
                      self.trial(config=conf, DET_LATEST_CHECKPOINT=ckpt["uuid"],
                                 DET_STEPS_COMPLETED="8"))
        (got,) = self.validations()
        self.assertEqual(got["steps"], 16)
        self.assertAlmostEqual(got["validation_loss"], want["validation_loss"], places=5)
        self.assertAlmostEqual(got["accuracy"], want["accuracy"], places=5)

    def test_module_class_entrypoint(self) -> None:
        self.run_task(["-m", "determined.exec.harness", "train:MNistTrial"], self.trial())
        self.assertEqual([v["steps"] for v in self.validations()], [16])
        if (MNIST / "model_def.py").exists() and (MNIST / "layers.py").exists():
            self.master.requests.clear()
            self.run_task(["-m", "determined.exec.harness", "model_def:MNistTrial"],
                          self.trial())
            self.assertEqual([v["steps"] for v in self.validations()], [16])

    def test_two_slots_with_torch_distributed(self) -> None:
        self.run_task(["-m", "determined.launch.torch_distributed", "python3", "train.py",
                       "--batches", "8"], self.trial(DET_SLOT_IDS="[0,1]"))
        (v,) = self.validations()
        self.assertEqual(v["steps"], 8)
        self.assertEqual(len(self.checkpoints()), 1)

    def test_locally(self) -> None:
        (pathlib.Path(self.model) / "const.yaml").write_text((MNIST / "const.yaml").read_text())
        err = self.run_task(["train.py", "--batches", "4"], None)
        self.assertIn("report_validation_metrics(steps_completed=4", err)
        self.assertEqual(self.master.requests, [])
