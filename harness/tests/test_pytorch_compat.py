"""Checkpoints of the PyTorch Trial API in Determined 0.38's layout, both ways, against the fake
master with real torch on CPU:

- a checkpoint directory built here exactly as Determined 0.38's trial controller writes one
  (``state_dict.pth`` with ``models_state_dict``, ``optimizers_state_dict``,
  ``lr_schedulers_state_dict``, ``callbacks`` and ``rng_state``; ``trial_state.pkl`` holding the
  pickled dict of its _TrialState; ``load_data.json``; ``metadata.json``; ``code/``) loads with
  ``load_trial_from_checkpoint_path`` and resumes ``Trainer.fit`` where it stopped;
- a checkpoint written here holds every file and key Determined's loader reads, with the types it
  expects, so that Determined's own code path can load it.

The layout is what Determined's harness/determined/pytorch/_pytorch_trial.py (``_save``,
``_load``, ``_load_state``) and _load.py (``load_trial_from_checkpoint_path``) read and write;
this file reproduces it with its own code. Skipped where torch cannot be imported."""

import json
import os
import pathlib
import pickle
import random
import subprocess
import sys
import textwrap
import unittest
import uuid
from typing import Any, Dict, List, Optional

try:
    import numpy as np
    import torch
    from torch import nn

    from determined import pytorch
except ImportError:  # pragma: no cover
    torch = None  # type: ignore

from tests.helpers import MasterTestCase

HARNESS = pathlib.Path(__file__).resolve().parent.parent

# The user's training script, as a Trainer-API script is written: the trial class is defined in
# the script that runs (so Determined names it ``__main__:CompatTrial``) and takes hparams.
TRAIN_PY = textwrap.dedent('''
    import torch
    from torch import nn

    from determined import pytorch
    from tests.pytorch_trial import dataset


    class CompatTrial(pytorch.PyTorchTrial):
        def __init__(self, context, hparams):
            self.context = context
            torch.manual_seed(0)
            self.model = context.wrap_model(
                nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)))
            self.opt = context.wrap_optimizer(
                torch.optim.SGD(self.model.parameters(), lr=hparams["lr"], momentum=0.9))
            self.sched = context.wrap_lr_scheduler(
                torch.optim.lr_scheduler.StepLR(self.opt, step_size=4, gamma=0.5),
                step_mode=pytorch.LRScheduler.StepMode.STEP_EVERY_BATCH)
            self.loss = nn.CrossEntropyLoss()

        def build_training_data_loader(self):
            return pytorch.DataLoader(dataset(64, 0), batch_size=16)

        def build_validation_data_loader(self):
            return pytorch.DataLoader(dataset(32, 1), batch_size=16)

        def train_batch(self, batch, epoch_idx, batch_idx):
            x, y = batch
            loss = self.loss(self.model(x), y)
            self.context.backward(loss)
            self.context.step_optimizer(self.opt)
            return {"loss": loss}

        def evaluate_batch(self, batch, batch_idx):
            x, y = batch
            return {"validation_loss": self.loss(self.model(x), y).item()}


    if __name__ == "__main__":
        raise SystemExit("only imported in these tests")
''')

HP = {"global_batch_size": 16, "lr": 0.1}

# What Determined 0.38's _TrialState holds, and so what its _load_state passes back to
# _TrialState(**state): every field an int.
TRIAL_STATE_FIELDS = ["trial_id", "last_ckpt", "step_id", "last_val", "batches_trained",
                      "epochs_trained"]


def config(storage: str) -> Dict[str, Any]:
    return {
        "name": "compat",
        "checkpoint_storage": {"type": "shared_fs", "host_path": storage,
                               "storage_path": "checkpoints"},
        "searcher": {"name": "single", "metric": "validation_loss", "smaller_is_better": True,
                     "max_length": {"batches": 16}},
        "hyperparameters": HP,
    }


class Counter(pytorch.PyTorchCallback if torch is not None else object):  # type: ignore[misc]
    """A callback with state, and a window on the trial when training starts."""

    def __init__(self, trial: Any = None) -> None:
        self.n = 0
        self.trial = trial
        self.at_start: Dict[str, Any] = {}

    def on_training_start(self) -> None:
        t = self.trial
        self.at_start = {
            "model": {k: v.clone() for k, v in t.model.state_dict().items()},
            "momentum": [t.opt.state[p]["momentum_buffer"].clone()
                         for p in t.model.parameters() if "momentum_buffer" in t.opt.state[p]],
            "sched_last_epoch": t.sched._scheduler.last_epoch,
            "lr": t.opt.param_groups[0]["lr"],
            "random": random.getstate(),
            "np": np.random.get_state()[1].copy(),
            "torch": torch.random.get_rng_state().clone(),
        }

    def on_training_workload_end(self, avg_metrics: Any, batch_metrics: Any) -> None:
        self.n += 1

    def state_dict(self) -> Dict[str, Any]:
        return {"n": self.n}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self.n = state_dict["n"]


@unittest.skipIf(torch is None, "torch is not installed")
class DeterminedCheckpointTest(MasterTestCase):
    def setUp(self) -> None:
        super().setUp()
        torch.set_num_threads(1)
        self.model_dir = pathlib.Path(self.tmp, "model")
        self.model_dir.mkdir()
        (self.model_dir / "train.py").write_text(TRAIN_PY)
        cwd = os.getcwd()
        os.chdir(self.model_dir)
        self.addCleanup(os.chdir, cwd)
        sys.path.insert(0, str(self.model_dir))
        self.addCleanup(sys.path.remove, str(self.model_dir))
        self.addCleanup(sys.modules.pop, "train", None)
        import train  # the user's script, as a module

        self.trial_cls = train.CompatTrial

    def trial_env(self, **env: Any) -> None:
        self.set_env(DET_HPARAMS=HP, DET_EXPERIMENT_CONFIG=config(self.tmp), **env)

    def fit(self, counter: Counter, **kwargs: Any) -> Any:
        with pytorch.init() as ctx:
            trial = self.trial_cls(ctx, ctx.get_hparams())
            counter.trial = trial
            trial.build_callbacks = lambda: {"counter": counter}  # type: ignore[assignment]
            kwargs.setdefault("reporting_period", pytorch.Batch(4))
            pytorch.Trainer(trial, ctx).fit(**kwargs)
        return trial

    def metrics(self, group: str) -> List[int]:
        return [r.body["metrics"]["steps_completed"]
                for r in self.master.calls("POST", "/api/v1/trials/11/metrics")
                if r.body["group"] == group]

    def checkpoints(self) -> List[Dict[str, Any]]:
        return [r.body for r in self.master.calls("POST", "/api/v1/checkpoints")]

    # ---- Determined's layout, built here ----

    def write_determined_checkpoint(self, ddp_prefix: bool = False) -> Dict[str, Any]:
        """A checkpoint as Determined 0.38 writes one after 8 batches of trial 11, in the
        shared_fs storage; returns what went into it."""
        torch.manual_seed(123)
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
        opt = torch.optim.SGD(model.parameters(), lr=HP["lr"], momentum=0.9)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
        for _ in range(8):
            opt.zero_grad()
            model(torch.randn(16, 8)).sum().backward()
            opt.step()
            sched.step()
        sd = model.state_dict()
        if ddp_prefix:  # written by a DistributedDataParallel model (slots_per_trial > 1)
            sd = type(sd)(("module." + k, v) for k, v in sd.items())
        random.seed(9)
        np.random.seed(9)
        torch.manual_seed(9)
        rng = {"cpu_rng_state": torch.random.get_rng_state(),
               "np_rng_state": np.random.get_state(),
               "random_rng_state": random.getstate()}
        storage_id = str(uuid.uuid4())
        d = pathlib.Path(self.storage, storage_id)
        (d / "code").mkdir(parents=True)
        (d / "code" / "train.py").write_text(TRAIN_PY)
        torch.save({
            "models_state_dict": [sd],
            "optimizers_state_dict": [opt.state_dict()],
            "lr_schedulers_state_dict": [sched.state_dict()],
            "callbacks": {"counter": {"n": 2}},
            "rng_state": rng,
        }, str(d / "state_dict.pth"))
        with (d / "trial_state.pkl").open("wb") as f:
            pickle.dump({"trial_id": 11, "last_ckpt": 8, "step_id": 0, "last_val": 8,
                         "batches_trained": 8, "epochs_trained": 2}, f)
        (d / "load_data.json").write_text(json.dumps({
            "trial_type": "PyTorchTrial",
            "experiment_config": config(self.tmp),
            "hparams": HP,
            "trial_cls_spec": "__main__:CompatTrial",
            "is_trainer": True,
        }))
        (d / "metadata.json").write_text(json.dumps({
            "determined_version": "0.38.0", "steps_completed": 8,
            "framework": "torch-2.4.1+cu121", "format": "pickle"}, indent=2))
        return {"dir": d, "uuid": storage_id, "model": model.state_dict(), "opt": opt,
                "sched": sched, "rng": rng}

    def assert_same_weights(self, got: Dict[str, Any], want: Dict[str, Any]) -> None:
        self.assertEqual(sorted(got), sorted(want))
        for k in want:
            self.assertTrue(torch.equal(got[k], want[k]), k)

    def test_a_determined_checkpoint_loads_with_load_trial_from_checkpoint_path(self) -> None:
        for ddp in (False, True):
            with self.subTest(ddp_prefix=ddp):
                ck = self.write_determined_checkpoint(ddp_prefix=ddp)
                # The class named __main__:CompatTrial is found in the checkpoint's code/.
                sys.modules.pop("train", None)
                trial = pytorch.load_trial_from_checkpoint_path(str(ck["dir"]))
                self.assertEqual(type(trial).__name__, "CompatTrial")
                self.assert_same_weights(trial.model.state_dict(), ck["model"])
                # As in Determined 0.38, the class may be given.
                trial = pytorch.load_trial_from_checkpoint_path(
                    str(ck["dir"]), trial_class=self.trial_cls, trial_kwargs={"hparams": HP})
                self.assert_same_weights(trial.model.state_dict(), ck["model"])

    def test_a_determined_checkpoint_resumes_training_where_it_stopped(self) -> None:
        ck = self.write_determined_checkpoint()
        self.trial_env(DET_LATEST_CHECKPOINT=ck["uuid"], DET_STEPS_COMPLETED="8")
        counter = Counter()
        self.fit(counter, max_length=pytorch.Batch(16), validation_period=pytorch.Batch(8),
                 latest_checkpoint=ck["uuid"])
        start = counter.at_start
        # Models, optimizer (momentum), LR scheduler, RNGs and callback state as written.
        self.assert_same_weights(start["model"], ck["model"])
        want_momentum = [ck["opt"].state[p]["momentum_buffer"]
                         for g in ck["opt"].param_groups for p in g["params"]]
        self.assertEqual(len(start["momentum"]), len(want_momentum))
        for g, w in zip(start["momentum"], want_momentum):
            self.assertTrue(torch.equal(g, w))
        self.assertEqual(start["sched_last_epoch"], 8)
        self.assertAlmostEqual(start["lr"], HP["lr"] * 0.25)
        self.assertEqual(start["random"], ck["rng"]["random_rng_state"])
        self.assertTrue((start["np"] == ck["rng"]["np_rng_state"][1]).all())
        self.assertTrue(torch.equal(start["torch"], ck["rng"]["cpu_rng_state"]))
        # trial_state.pkl: training went on from batch 8 of the same trial.
        self.assertEqual(self.metrics("training"), [12, 16])
        self.assertEqual(self.metrics("validation"), [16])
        self.assertEqual(counter.n, 2 + 2)
        last = pathlib.Path(self.storage, self.checkpoints()[-1]["uuid"])
        with (last / "trial_state.pkl").open("rb") as f:
            state = pickle.load(f)
        self.assertEqual((state["trial_id"], state["batches_trained"], state["last_ckpt"]),
                         (11, 16, 16))

    # ---- a checkpoint written here, read as Determined reads it ----

    def test_a_checkpoint_written_here_has_what_determineds_loader_reads(self) -> None:
        self.trial_env()
        counter = Counter()
        self.fit(counter, max_length=pytorch.Batch(8), validation_period=pytorch.Batch(8))
        d = pathlib.Path(self.storage, self.checkpoints()[-1]["uuid"])

        # state_dict.pth, as _PyTorchTrialController._load reads it.
        ckpt = torch.load(str(d / "state_dict.pth"), map_location="cpu")
        self.assertIsInstance(ckpt, dict)
        self.assertNotIn("model_state_dict", ckpt)  # the old single-model keys
        self.assertNotIn("optimizer_state_dict", ckpt)
        self.assertNotIn("lr_scheduler", ckpt)
        for key in ("models_state_dict", "optimizers_state_dict", "lr_schedulers_state_dict"):
            self.assertIsInstance(ckpt[key], list, key)
            self.assertEqual(len(ckpt[key]), 1, key)
        self.assertTrue(all(isinstance(k, str) and isinstance(v, torch.Tensor)
                            for k, v in ckpt["models_state_dict"][0].items()))
        self.assertEqual(sorted(ckpt["optimizers_state_dict"][0]), ["param_groups", "state"])
        self.assertEqual(ckpt["callbacks"], {"counter": {"n": 2}})
        rng = ckpt["rng_state"]
        self.assertEqual(sorted(rng), ["cpu_rng_state", "np_rng_state", "random_rng_state"])
        # The calls Determined's _load makes with them.
        np.random.set_state(rng["np_rng_state"])
        random.setstate(rng["random_rng_state"])
        torch.random.set_rng_state(rng["cpu_rng_state"])
        fresh = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
        fresh.load_state_dict(ckpt["models_state_dict"][0])
        opt = torch.optim.SGD(fresh.parameters(), lr=1.0, momentum=0.9)
        opt.load_state_dict(ckpt["optimizers_state_dict"][0])
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
        sched.load_state_dict(ckpt["lr_schedulers_state_dict"][0])
        self.assertEqual(sched.last_epoch, 8)

        # trial_state.pkl: a plain dict that Determined's _TrialState(**state) takes.
        with (d / "trial_state.pkl").open("rb") as f:
            state = pickle.load(f)
        self.assertIs(type(state), dict)
        self.assertEqual(sorted(state), sorted(TRIAL_STATE_FIELDS))
        self.assertTrue(all(type(v) is int for v in state.values()), state)
        self.assertEqual(state["trial_id"], 11)

        # load_data.json, as load_trial_from_checkpoint_path reads it.
        load_data = json.loads((d / "load_data.json").read_text())
        self.assertEqual(load_data["trial_type"], "PyTorchTrial")
        self.assertIsInstance(load_data["experiment_config"], dict)
        self.assertEqual(load_data["hparams"], HP)
        self.assertIs(load_data["is_trainer"], True)
        spec = load_data["trial_cls_spec"]
        self.assertEqual(spec, "train:CompatTrial")

        # metadata.json, as Determined's checkpoint storage writes it.
        self.assertEqual(json.loads((d / "metadata.json").read_text()), {
            "determined_version": __import__("determined").__version__, "steps_completed": 8,
            "framework": f"torch-{torch.__version__}", "format": "pickle"})

        # Determined's loader imports trial_cls_spec with code/ first on sys.path: the class is
        # found from code/ alone, in a process that has never seen the script.
        probe = textwrap.dedent('''
            import importlib, json, sys
            code, spec = sys.argv[1], sys.argv[2]
            sys.path.insert(0, code)
            module, _, qualname = spec.partition(":")
            cls = importlib.import_module(module)
            for part in qualname.split("."):
                cls = getattr(cls, part)
            print(cls.__name__, cls.__module__)
        ''')
        env = dict(os.environ, PYTHONPATH=str(HARNESS), PYTHONDONTWRITEBYTECODE="1")
        out = subprocess.run([sys.executable, "-c", probe, str(d / "code"), spec], env=env,
                             cwd=self.tmp, capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.split(), ["CompatTrial", "train"])


if __name__ == "__main__":  # pragma: no cover
    unittest.main()
