"""determined.pytorch (the PyTorch Trial API) with real torch on CPU, against the fake master:
reducers, LR scheduler step modes, gradient aggregation, the DataLoader's sharding and mid-epoch
resume, the checkpoint layout and loading it back, local mode, pause then resume and crash then
resume giving the metrics of an uninterrupted run, module:Class entrypoints, and two ranks through
determined.launch.torch_distributed. Skipped where torch cannot be imported."""

import json
import os
import pathlib
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from typing import Any, Dict, List, Optional
from unittest import mock

try:
    import torch

    from determined import pytorch
    from tests import pytorch_trial
except ImportError:  # pragma: no cover
    torch = None  # type: ignore

from determined import _info
from tests.fake_master import FakeMaster
from tests.helpers import MasterTestCase, clean_environ, trial_env

HARNESS = pathlib.Path(__file__).resolve().parent.parent


def config(storage: str, **over: Any) -> Dict[str, Any]:
    c: Dict[str, Any] = {
        "name": "pt",
        "checkpoint_storage": {"type": "shared_fs", "host_path": storage,
                               "storage_path": "checkpoints"},
        "searcher": {"name": "single", "metric": "validation_loss", "smaller_is_better": True,
                     "max_length": {"batches": 16}},
        "hyperparameters": {},
    }
    c.update(over)
    return c


HP = {"global_batch_size": 16, "lr": 0.1}


@unittest.skipIf(torch is None, "torch is not installed")
class PyTorchTrialTest(MasterTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.model_dir = os.path.join(self.tmp, "model")
        os.makedirs(self.model_dir)
        pathlib.Path(self.model_dir, "model_def.py").write_text("# the user's code\n")
        cwd = os.getcwd()
        os.chdir(self.model_dir)
        self.addCleanup(os.chdir, cwd)
        torch.set_num_threads(1)

    def trial(self, hparams: Dict[str, Any], **env: Any) -> None:
        self.set_env(DET_HPARAMS=hparams,
                     DET_EXPERIMENT_CONFIG=config(self.tmp, **env.pop("config", {})), **env)

    def fit(self, trial_cls: Any = None, callbacks: Optional[Dict[str, Any]] = None,
            **kwargs: Any) -> Any:
        trial_cls = trial_cls or pytorch_trial.LinearTrial
        with pytorch.init() as ctx:
            self.ctx = ctx
            t = trial_cls(ctx)
            if callbacks:
                t.build_callbacks = lambda: callbacks  # type: ignore[assignment]
            kwargs.setdefault("reporting_period", pytorch.Batch(4))
            pytorch.Trainer(t, ctx).fit(**kwargs)
        return t

    def metrics(self, group: str, master: Optional[FakeMaster] = None) -> List[Dict[str, Any]]:
        out = []
        for r in (master or self.master).calls("POST", r"/api/v1/trials/11/metrics"):
            if r.body["group"] == group:
                m = r.body["metrics"]
                out.append({"steps": m["steps_completed"], **m["metrics"]["avg_metrics"]})
        return out

    def checkpoints(self, master: Optional[FakeMaster] = None) -> List[Dict[str, Any]]:
        return [r.body for r in (master or self.master).calls("POST", "/api/v1/checkpoints")]

    def test_training_reports_metrics_validates_and_checkpoints(self) -> None:
        self.trial(HP)
        self.fit(validation_period=pytorch.Batch(8))
        train = self.metrics("training")
        self.assertEqual([m["steps"] for m in train], [4, 8, 12, 16])
        # The custom training reducers: records seen in each period of 4 batches of 16.
        self.assertEqual({m["records_seen"] for m in train}, {64})
        self.assertTrue(all(m["max_batch_loss"] >= m["loss"] for m in train))
        vals = self.metrics("validation")
        self.assertEqual([v["steps"] for v in vals], [8, 16])
        for v in vals:
            self.assertEqual(v["n"], 64)  # Reducer.SUM over the 4 batches of 16
            self.assertGreaterEqual(v["worst"], v["validation_loss"])  # Reducer.MAX
            self.assertEqual(v["records_seen"], 64)
            self.assertEqual((v["batches"], v["epochs"]), (v["steps"], v["steps"] // 16))
        self.assertLess(vals[-1]["validation_loss"], vals[0]["validation_loss"] * 1.5)
        progress = [r.body["progress"] for r in self.master.calls(
            "POST", "/api/v1/trials/11/progress")]
        self.assertEqual(progress, [0.25, 0.5, 0.75, 1.0])
        # checkpoint_policy "best": no best yet in the experiment, so each validation checkpoints.
        self.assertEqual([c["metadata"]["steps_completed"] for c in self.checkpoints()], [8, 16])

    def test_checkpoint_layout_and_load_trial_from_checkpoint_path(self) -> None:
        self.trial(HP)
        trained = self.fit(validation_period=pytorch.Batch(8))
        last = self.checkpoints()[-1]
        self.assertEqual(last["state"], "STATE_COMPLETED")
        d = pathlib.Path(self.storage, last["uuid"])
        self.assertEqual(sorted(p.name for p in d.iterdir()),
                         ["code", "load_data.json", "metadata.json", "state_dict.pth",
                          "trial_state.pkl"])
        self.assertEqual((d / "code" / "model_def.py").read_text(), "# the user's code\n")
        meta = json.loads((d / "metadata.json").read_text())
        self.assertEqual(meta["steps_completed"], 16)
        self.assertEqual(meta["format"], "pickle")
        self.assertTrue(meta["framework"].startswith("torch-"))
        sd = torch.load(d / "state_dict.pth")
        self.assertEqual(sorted(sd), ["callbacks", "lr_schedulers_state_dict",
                                      "models_state_dict", "optimizers_state_dict", "rng_state"])
        self.assertEqual(sorted(sd["rng_state"]),
                         ["cpu_rng_state", "np_rng_state", "random_rng_state"])
        with (d / "trial_state.pkl").open("rb") as f:
            self.assertEqual(pickle.load(f), {"trial_id": 11, "last_ckpt": 16, "step_id": 0,
                                              "last_val": 16, "batches_trained": 16,
                                              "epochs_trained": 1})
        load_data = json.loads((d / "load_data.json").read_text())
        self.assertEqual(load_data["trial_type"], "PyTorchTrial")
        self.assertEqual(load_data["trial_cls_spec"], "tests.pytorch_trial:LinearTrial")
        self.assertEqual(load_data["hparams"], HP)
        self.assertEqual(load_data["experiment_config"]["searcher"]["metric"], "validation_loss")
        self.assertIn("load_data.json", last["resources"])

        loaded = pytorch.load_trial_from_checkpoint_path(str(d))
        self.assertIsInstance(loaded, pytorch_trial.LinearTrial)
        for a, b in zip(trained.model.state_dict().values(), loaded.model.state_dict().values()):
            self.assertTrue(torch.equal(a, b))
        # A checkpoint written from a DistributedDataParallel model ("module." keys) loads too.
        sd["models_state_dict"][0] = {"module." + k: v
                                      for k, v in sd["models_state_dict"][0].items()}
        torch.save(sd, d / "state_dict.pth")
        loaded = pytorch.load_trial_from_checkpoint_path(
            str(d), trial_class=pytorch_trial.LinearTrial)
        self.assertTrue(torch.equal(next(iter(loaded.model.state_dict().values())),
                                    next(iter(trained.model.state_dict().values()))))

    def wait_for_preemption(self) -> None:
        watcher = self.ctx._core.preempt._watcher
        deadline = time.monotonic() + 30
        while not watcher._should_preempt:
            self.assertLess(time.monotonic(), deadline, "the watcher never saw the preemption")
            time.sleep(0.01)

    def uninterrupted(self) -> List[Dict[str, Any]]:
        self.trial(HP)
        self.fit(max_length=pytorch.Batch(24), validation_period=pytorch.Batch(8))
        vals = self.metrics("validation")
        self.assertEqual([v["steps"] for v in vals], [8, 16, 24])
        return vals

    def resume(self, uuid: str, steps: int) -> FakeMaster:
        master = FakeMaster()
        self.addCleanup(master.close)
        self.master = master
        self.set_env(DET_HPARAMS=HP, DET_EXPERIMENT_CONFIG=config(self.tmp),
                     DET_LATEST_CHECKPOINT=uuid, DET_STEPS_COMPLETED=str(steps),
                     DET_TRIAL_RUN_ID="3")
        self.master = master
        self.fit(max_length=pytorch.Batch(24), validation_period=pytorch.Batch(8),
                 latest_checkpoint=_info.get_cluster_info().latest_checkpoint)
        return master

    def assert_same(self, got: List[Dict[str, Any]], want: List[Dict[str, Any]]) -> None:
        self.assertEqual([g["steps"] for g in got], [w["steps"] for w in want])
        for g, w in zip(got, want):
            for k in ("validation_loss", "accuracy", "worst"):
                self.assertAlmostEqual(g[k], w[k], places=6, msg=f"{k} at {g['steps']}")

    def test_pause_then_resume_gives_the_metrics_of_an_uninterrupted_run(self) -> None:
        want = self.uninterrupted()
        self.master.close()
        self.master = FakeMaster()
        self.addCleanup(self.master.close)
        test = self

        class PauseAfterFirstCheckpoint(pytorch.PyTorchCallback):
            def on_checkpoint_upload_end(self, uuid: str) -> None:
                test.master.set_preempt(True)
                test.wait_for_preemption()

        self.trial(HP)
        self.fit(max_length=pytorch.Batch(24), validation_period=pytorch.Batch(8),
                 callbacks={"pause": PauseAfterFirstCheckpoint()})
        (ckpt,) = self.checkpoints()
        self.assertEqual(ckpt["metadata"]["steps_completed"], 8)
        self.assertEqual(len(self.master.calls(
            "POST", r"/api/v1/allocations/[^/]+/signals/ack_preemption")), 1)
        first = self.metrics("validation")
        self.assertEqual([v["steps"] for v in first], [8])
        # Training stopped at the checkpoint: nothing reported past batch 8.
        self.assertEqual(self.metrics("training")[-1]["steps"], 8)

        second = self.resume(ckpt["uuid"], 8)
        self.assertEqual([m["steps"] for m in self.metrics("training", second)], [12, 16, 20, 24])
        self.assert_same(first + self.metrics("validation", second), want)

    def test_crash_then_resume_from_the_latest_checkpoint(self) -> None:
        want = self.uninterrupted()
        self.master.close()
        self.master = FakeMaster()
        self.addCleanup(self.master.close)

        class Crash(pytorch.PyTorchCallback):
            def on_training_workload_end(self, avg_metrics: Any, batch_metrics: Any) -> None:
                if avg_metrics["batches"] == 12:
                    raise RuntimeError("the node went away")

        self.trial(HP)
        with self.assertRaisesRegex(RuntimeError, "the node went away"):
            self.fit(max_length=pytorch.Batch(24), validation_period=pytorch.Batch(8),
                     callbacks={"crash": Crash()})
        first = self.metrics("validation")
        latest = self.checkpoints()[-1]
        self.assertEqual(latest["metadata"]["steps_completed"], 8)
        second = self.resume(latest["uuid"], 8)
        self.assert_same(first[:1] + self.metrics("validation", second), want)

    def test_local_mode_trains_without_a_cluster(self) -> None:
        env = clean_environ()
        env["HOME"] = self.tmp
        with mock.patch.dict(os.environ, env, clear=True):
            _info._reset_cluster_info()
            self.assertIsNone(_info.get_cluster_info())
            with pytorch.init(hparams=HP, exp_conf={"reproducibility": {"experiment_seed": 3}}) \
                    as ctx:
                trial = pytorch_trial.LinearTrial(ctx)
                self.assertEqual(ctx.get_per_slot_batch_size(), 16)
                pytorch.Trainer(trial, ctx).fit(max_length=pytorch.Epoch(1),
                                                validation_period=pytorch.Batch(8))
        metas = list(pathlib.Path(self.tmp, ".local/share/determined").glob("*/metadata.json"))
        self.assertEqual(len(metas), 1)
        d = metas[0].parent
        self.assertEqual(json.loads(metas[0].read_text())["steps_completed"], 16)
        self.assertFalse((d / "code").exists())  # only on a cluster
        with (d / "trial_state.pkl").open("rb") as f:
            self.assertEqual(pickle.load(f)["trial_id"], 0)
        self.assertEqual(self.master.requests, [])
        with self.assertRaisesRegex(ValueError, "max_length"):
            with mock.patch.dict(os.environ, env, clear=True):
                _info._reset_cluster_info()
                with pytorch.init(hparams=HP) as ctx:
                    pytorch.Trainer(pytorch_trial.LinearTrial(ctx), ctx).fit()

    def test_max_length_from_the_config_and_test_mode(self) -> None:
        self.trial(HP, config={"min_validation_period": {"batches": 4},
                               "searcher": {"name": "single", "metric": "validation_loss",
                                            "max_length": {"batches": 8}}})
        self.fit()
        self.assertEqual([v["steps"] for v in self.metrics("validation")], [4, 8])
        self.master.requests.clear()
        self.fit(test_mode=True)
        self.assertEqual([v["steps"] for v in self.metrics("validation")], [1])
        self.assertEqual(len(self.checkpoints()), 1)

    def test_checkpoint_period_and_initial_validation_from_the_config(self) -> None:
        self.trial(HP, config={"min_checkpoint_period": {"batches": 4},
                               "perform_initial_validation": True,
                               "searcher": {"name": "single", "metric": "validation_loss",
                                            "max_length": {"batches": 8}}})
        self.fit()
        self.assertEqual([v["steps"] for v in self.metrics("validation")][0], 0)
        self.assertEqual([c["metadata"]["steps_completed"] for c in self.checkpoints()], [4, 8])

    def test_searcher_metric_must_be_reported(self) -> None:
        self.trial(HP, config={"searcher": {"name": "single", "metric": "nope",
                                            "max_length": {"batches": 4}}})
        with self.assertRaisesRegex(RuntimeError, "metric 'nope'"):
            self.fit()

    def test_lr_scheduler_step_modes(self) -> None:
        # 16 batches of one epoch; aggregation 2 means 8 optimizer steps.
        cases = {"STEP_EVERY_BATCH": (16, 16), "STEP_EVERY_EPOCH": (1, 1),
                 "MANUAL_STEP": (0, 0), "STEP_EVERY_OPTIMIZER_STEP": (16, 8)}
        for mode, (plain, aggregated) in cases.items():
            for agg, want in ((1, plain), (2, aggregated)):
                with self.subTest(mode=mode, aggregation=agg):
                    conf = {"optimizations": {"aggregation_frequency": agg}}
                    self.trial({**HP, "step_mode": mode}, config=conf)
                    t = self.fit(max_length=pytorch.Batch(16))
                    self.assertEqual(t.sched.last_epoch, want)

    def test_gradient_aggregation_equals_a_batch_twice_as_large(self) -> None:
        hp = {**HP, "dropout": 0.0, "shuffle": False}
        self.trial({**hp, "global_batch_size": 8},
                   config={"optimizations": {"aggregation_frequency": 2}})
        t_agg = self.fit(max_length=pytorch.Batch(8))
        self.trial({**hp, "global_batch_size": 16})
        t_big = self.fit(max_length=pytorch.Batch(4))
        for a, b in zip(t_agg.model.parameters(), t_big.model.parameters()):
            self.assertTrue(torch.allclose(a, b, atol=1e-6), (a, b))

    def test_clip_grads(self) -> None:
        self.trial({**HP, "clip": 1e-9, "dropout": 0.0})
        before = None
        with pytorch.init() as ctx:
            t = pytorch_trial.LinearTrial(ctx)
            before = [p.detach().clone() for p in t.model.parameters()]
            pytorch.Trainer(t, ctx).fit(max_length=pytorch.Batch(4))
        for a, b in zip(before, t.model.parameters()):
            self.assertTrue(torch.allclose(a, b, atol=1e-6))

    def test_evaluate_full_dataset_runs_on_the_chief(self) -> None:
        self.trial(HP)
        self.fit(trial_cls=pytorch_trial.FullDatasetTrial, max_length=pytorch.Batch(4))
        (v,) = self.metrics("validation")
        self.assertEqual(v["n"], 64)

    def test_callbacks_are_called_and_keep_state(self) -> None:
        calls: List[str] = []

        class Recorder(pytorch.PyTorchCallback):
            def __init__(self) -> None:
                self.n = 0

            def on_trial_startup(self, first_batch_idx: int, checkpoint_uuid: Any) -> None:
                calls.append(f"startup {first_batch_idx} {checkpoint_uuid}")

            def on_training_start(self) -> None:
                calls.append("start")

            def on_training_epoch_start(self, epoch_idx: int) -> None:
                calls.append(f"epoch_start {epoch_idx}")

            def on_training_epoch_end(self, epoch_idx: int) -> None:
                calls.append(f"epoch_end {epoch_idx}")

            def on_validation_start(self) -> None:
                calls.append("validation_start")

            def on_validation_end(self, metrics: Dict[str, Any]) -> None:
                calls.append(f"validation_end {metrics['batches']}")

            def on_checkpoint_save_start(self, checkpoint: Dict[str, Any]) -> None:
                calls.append("save_start")

            def on_checkpoint_upload_end(self, uuid: str) -> None:
                calls.append("upload_end")

            def on_checkpoint_load_start(self, checkpoint: Dict[str, Any]) -> None:
                calls.append("load_start")

            def on_trial_shutdown(self) -> None:
                calls.append("shutdown")

            def state_dict(self) -> Dict[str, Any]:
                self.n += 1
                return {"n": self.n}

            def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
                self.n = state_dict["n"] * 100

        self.trial({**HP, "train_size": 64})  # 4 batches an epoch
        self.fit(max_length=pytorch.Epoch(2), validation_period=pytorch.Epoch(2),
                 callbacks={"rec": Recorder()})
        self.assertEqual(calls, [
            "startup 0 None", "start", "epoch_start 0", "epoch_end 0", "epoch_start 1",
            "epoch_end 1", "validation_start", "validation_end 8", "save_start", "upload_end",
            "shutdown"])
        uuid = self.checkpoints()[-1]["uuid"]
        calls.clear()
        rec = Recorder()
        self.set_env(DET_HPARAMS={**HP, "train_size": 64}, DET_EXPERIMENT_CONFIG=config(self.tmp),
                     DET_LATEST_CHECKPOINT=uuid, DET_STEPS_COMPLETED="8")
        self.fit(max_length=pytorch.Epoch(2), latest_checkpoint=uuid, callbacks={"rec": rec})
        self.assertEqual(calls, [f"startup 8 {uuid}", "load_start", "start", "shutdown"])
        self.assertEqual(rec.n, 100)


@unittest.skipIf(torch is None, "torch is not installed")
class DataLoaderTest(unittest.TestCase):
    def setUp(self) -> None:
        self.data = torch.utils.data.TensorDataset(torch.arange(50))

    def batches(self, loader: Any, n: int) -> List[List[int]]:
        out = []
        for i, (b,) in enumerate(loader):
            if i == n:
                break
            out.append(b.tolist())
        return out

    def test_resuming_mid_epoch_continues_where_it_stopped(self) -> None:
        dl = pytorch.DataLoader(self.data, batch_size=4, shuffle=True,
                                generator=torch.Generator().manual_seed(5))
        full = self.batches(dl.get_data_loader(repeat=True), 30)
        for skip in (0, 5, 12, 13, 29):
            self.assertEqual(self.batches(dl.get_data_loader(repeat=True, skip=skip), 30 - skip),
                             full[skip:])
        # Each epoch is a permutation of the whole dataset, shuffled differently.
        epoch0, epoch1 = full[:13], full[13:26]
        self.assertEqual(sorted(x for b in epoch0 for x in b), list(range(50)))
        self.assertEqual(sorted(x for b in epoch1 for x in b), list(range(50)))
        self.assertNotEqual(epoch0, epoch1)

    def test_ranks_share_the_batches_without_overlap(self) -> None:
        dl = pytorch.DataLoader(self.data, batch_size=5, shuffle=False)
        whole = self.batches(dl.get_data_loader(), 100)
        ranks = [self.batches(dl.get_data_loader(num_replicas=3, rank=r), 100) for r in range(3)]
        self.assertEqual(ranks[0], whole[0::3])
        self.assertEqual(ranks[1], whole[1::3])
        self.assertEqual(sorted(b for r in ranks for bs in r for b in bs), list(range(50)))
        self.assertEqual(len(dl.get_data_loader(repeat=True, num_replicas=3, rank=0)), 3)
        self.assertEqual(len(dl.get_data_loader(num_replicas=3, rank=0)), 4)

    def test_drop_last_and_batch_sampler(self) -> None:
        dl = pytorch.DataLoader(self.data, batch_size=8, drop_last=True)
        self.assertEqual(len(dl), 6)
        bs = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(self.data), 20,
                                           False)
        dl = pytorch.DataLoader(self.data, batch_sampler=bs)
        self.assertEqual([len(b) for b in self.batches(dl.get_data_loader(), 10)], [20, 20, 10])
        with self.assertRaises(ValueError):
            pytorch.DataLoader(self.data, batch_size=8, batch_sampler=bs)


def _subprocess_env(master_url: str, tmp: str, **over: Any) -> Dict[str, str]:
    env = clean_environ()
    env.update(trial_env(master_url, tmp, **over))
    env.update({"PYTHONPATH": f"{HARNESS}", "PYTHONDONTWRITEBYTECODE": "1", "HOME": tmp,
                "OMP_NUM_THREADS": "1"})
    return env


@unittest.skipIf(torch is None, "torch is not installed")
class ProcessTest(unittest.TestCase):
    """Runs trials as tasks run them: in processes of their own."""

    def setUp(self) -> None:
        self.master = FakeMaster()
        self.addCleanup(self.master.close)
        self.tmp = tempfile.mkdtemp(prefix="harness-pt-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.model = os.path.join(self.tmp, "model")
        shutil.copytree(HARNESS / "tests", self.model,
                        ignore=shutil.ignore_patterns("__pycache__"))
        self.info_dir = os.path.join(self.tmp, "no-info")

    def run_task(self, argv: List[str], env: Dict[str, str]) -> str:
        # Keep a real /run/determined/info on the machine from leaking in.
        runner = ("import sys, runpy, determined._info as i; i.INFO_DIR = sys.argv.pop(1); "
                  "mod = sys.argv.pop(1); sys.argv[0] = mod; runpy.run_module(mod, "
                  "run_name='__main__', alter_sys=True)")
        proc = subprocess.run([sys.executable, "-B", "-c", runner, self.info_dir] + argv,
                              env=env, cwd=self.model, capture_output=True, text=True,
                              timeout=300)
        if proc.returncode != 0:
            self.fail(f"{argv} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        return proc.stderr

    def validations(self) -> List[Dict[str, Any]]:
        return [{"steps": r.body["metrics"]["steps_completed"],
                 **r.body["metrics"]["metrics"]["avg_metrics"]}
                for r in self.master.calls("POST", "/api/v1/trials/11/metrics")
                if r.body["group"] == "validation"]

    def test_module_class_entrypoint_runs_through_the_trainer(self) -> None:
        env = _subprocess_env(self.master.url, self.tmp, DET_HPARAMS=HP,
                              DET_EXPERIMENT_CONFIG=config(self.tmp))
        self.run_task(["determined.exec.harness", "pytorch_trial:LinearTrial"], env)
        self.assertEqual([v["steps"] for v in self.validations()], [16])
        (ckpt,) = [r.body for r in self.master.calls("POST", "/api/v1/checkpoints")]
        d = pathlib.Path(self.tmp, "checkpoints", ckpt["uuid"])
        self.assertTrue((d / "code" / "pytorch_trial.py").exists())
        self.assertEqual(json.loads((d / "load_data.json").read_text())["trial_cls_spec"],
                         "pytorch_trial:LinearTrial")

    def test_two_ranks_match_one_rank_with_the_whole_batch(self) -> None:
        hp = {"global_batch_size": 16, "dropout": 0.0}
        env = _subprocess_env(self.master.url, self.tmp, DET_HPARAMS=hp,
                              DET_EXPERIMENT_CONFIG=config(self.tmp))
        self.run_task(["pytorch_trial", "16"], env)
        one = self.validations()
        self.master.requests.clear()
        env = _subprocess_env(self.master.url, self.tmp, DET_HPARAMS=hp,
                              DET_EXPERIMENT_CONFIG=config(self.tmp), DET_SLOT_IDS="[0,1]")
        self.run_task(["determined.launch.torch_distributed", sys.executable,
                       "pytorch_trial.py", "16"], env)
        two = self.validations()
        self.assertEqual([v["steps"] for v in two], [8, 16])
        for a, b in zip(one, two):
            self.assertAlmostEqual(a["validation_loss"], b["validation_loss"], places=5)
            self.assertEqual(b["n"], 64)  # both ranks' halves of the validation set
            self.assertEqual(b["records_seen"], 64)
        # Only the chief reports, checkpoints, and trains 16 batches of 8 records per rank.
        train = [r.body for r in self.master.calls("POST", "/api/v1/trials/11/metrics")
                 if r.body["group"] == "training"]
        self.assertEqual([t["metrics"]["steps_completed"] for t in train], [4, 8, 12, 16])
        self.assertEqual(train[0]["metrics"]["metrics"]["avg_metrics"]["records_seen"], 64)
        self.assertEqual(len(self.master.calls("POST", "/api/v1/checkpoints")), 2)


if __name__ == "__main__":
    unittest.main()
