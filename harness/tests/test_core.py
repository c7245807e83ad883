import datetime
import json
import os
import pathlib
import socket
import stat
import subprocess
import sys
import tempfile
import time
import unittest
from typing import Any, Dict, List
from unittest import mock

import determined as det
from determined import _info, _session, core

from tests.helpers import ALLOC, TOKEN, MasterTestCase, clean_environ

HARNESS = str(pathlib.Path(__file__).resolve().parent.parent)


class ClusterInfoTest(MasterTestCase):
    def test_from_env(self) -> None:
        info = det.get_cluster_info()
        assert info is not None
        self.assertEqual(info.master_url, self.master.url)
        self.assertEqual(info.cluster_id, "cluster-1")
        self.assertEqual(info.task_id, "7.1")
        self.assertEqual(info.allocation_id, ALLOC)
        self.assertEqual(info.session_token, TOKEN)
        self.assertEqual(info.task_type, "TRIAL")
        self.assertEqual(info.agent_id, "agent-1")
        self.assertEqual(info.slot_ids, [0])
        self.assertEqual(info.user, "alice")
        self.assertIsNone(info.latest_checkpoint)
        self.assertEqual(info.user_data, {"url": "https://example.com/data"})
        self.assertEqual(info.trial.trial_id, 11)
        self.assertEqual(info.trial.experiment_id, 7)
        self.assertEqual(info.trial.trial_seed, 42)
        self.assertEqual(info.trial.hparams, {"increment_by": 1})
        self.assertEqual(info.trial._trial_run_id, 2)
        self.assertEqual(info.trial._steps_completed, 0)
        self.assertEqual(info.trial._config["searcher"]["name"], "single")
        self.assertEqual(info.container_rank, 0)
        self.assertEqual(info.container_addrs, ["127.0.0.1"])
        self.assertEqual(info.gpu_uuids, [])
        # Cached.
        self.assertIs(det.get_cluster_info(), info)

    def test_hparams_and_checkpoint(self) -> None:
        hp = {"lr": 0.01, "layers": [1, 2], "opt": {"name": "adam", "beta": 0.9}}
        self.set_env(DET_HPARAMS=hp, DET_LATEST_CHECKPOINT="ck-uuid", DET_STEPS_COMPLETED="30",
                     DET_SLOT_IDS="0,1")
        info = det.get_cluster_info()
        assert info is not None
        self.assertEqual(info.trial.hparams, hp)
        self.assertEqual(info.latest_checkpoint, "ck-uuid")
        self.assertEqual(info.trial._steps_completed, 30)
        self.assertEqual(info.slot_ids, [0, 1])

    def test_bad_hparams_json(self) -> None:
        self.set_env(DET_HPARAMS="{not json")
        with self.assertRaisesRegex(RuntimeError, "DET_HPARAMS"):
            det.get_cluster_info()

    def test_non_trial(self) -> None:
        self.set_env(DET_TASK_TYPE="COMMAND", DET_TRIAL_ID=None, DET_EXPERIMENT_ID=None)
        info = det.get_cluster_info()
        assert info is not None
        self.assertEqual(info.task_type, "COMMAND")
        self.assertIsNone(info.latest_checkpoint)
        self.assertEqual(info.user_data, {})
        with self.assertRaises(RuntimeError):
            info.trial
        with det.core.init() as ctx:
            ctx.train.report_training_metrics(1, {"x": 1})
            self.assertFalse(ctx.preempt.should_preempt())
        self.assertEqual(self.master.requests, [])

    def test_cluster_json(self) -> None:
        d = pathlib.Path(self.tmp) / "info"
        d.mkdir()
        (d / "cluster.json").write_text(json.dumps({
            "master_url": self.master.url, "cluster_id": "c2", "agent_id": "a", "slot_ids": [3],
            "task_id": "t", "allocation_id": "t.1", "session_token": "tok",
            "task_type": "TRIAL", "latest_checkpoint": "abc",
        }))
        (d / "rendezvous.json").write_text(json.dumps({
            "container_addrs": ["10.0.0.1", "10.0.0.2"], "container_rank": 1,
            "container_slot_counts": [1, 1]}))
        (d / "resources.json").write_text(json.dumps({"gpu_uuids": ["GPU-1"]}))
        with mock.patch.object(_info, "INFO_DIR", str(d)):
            _info._reset_cluster_info()
            info = det.get_cluster_info()
            assert info is not None
            self.assertEqual(info.cluster_id, "c2")
            self.assertEqual(info.latest_checkpoint, "abc")
            self.assertEqual(info.trial.trial_id, 11)  # trial info from env
            self.assertEqual(info.container_addrs, ["10.0.0.1", "10.0.0.2"])
            self.assertEqual(info.container_rank, 1)
            self.assertEqual(info.gpu_uuids, ["GPU-1"])
        _info._reset_cluster_info()


class OffClusterTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="harness-off-")
        env = clean_environ()
        env["HOME"] = self.tmp
        env.pop("XDG_DATA_HOME", None)
        p = mock.patch.dict(os.environ, env, clear=True)
        p.start()
        self.addCleanup(p.stop)
        _info._reset_cluster_info()
        self.addCleanup(_info._reset_cluster_info)

    def test_no_cluster_info(self) -> None:
        self.assertIsNone(det.get_cluster_info())

    def test_dummy_context(self) -> None:
        storage = os.path.join(self.tmp, "ckpts")
        with self.assertLogs("determined.core", "INFO") as logs:
            with det.core.init(checkpoint_storage=storage) as ctx:
                self.assertEqual(ctx.distributed.size, 1)
                ctx.train.report_training_metrics(10, {"loss": 0.5})
                ctx.train.report_validation_metrics(10, {"acc": 0.9})
                ctx.train.report_metrics("inference", 10, {"q": 1})
                ctx.train.report_progress(0.5)
                ctx.train.set_status("hi")
                self.assertIsNone(ctx.train.get_experiment_best_validation())
                self.assertFalse(ctx.preempt.should_preempt())
                with ctx.checkpoint.store_path({"steps_completed": 10}) as (path, sid):
                    (path / "w").write_text("1")
                self.assertTrue(os.path.isfile(os.path.join(storage, sid, "w")))
                self.assertEqual(ctx.checkpoint.get_metadata(sid), {"steps_completed": 10})
                with ctx.checkpoint.restore_path(sid) as p:
                    self.assertEqual((p / "w").read_text(), "1")
        text = "\n".join(logs.output)
        self.assertIn("report_training_metrics(steps_completed=10", text)

    def test_searcher_dummy(self) -> None:
        with det.core.init(checkpoint_storage=self.tmp) as ctx:
            with self.assertWarns(FutureWarning):
                for op in ctx.searcher.operations():
                    self.assertEqual(op.length, 1)
                    op.report_progress(1)
                    op.report_completed(0.1)

    def test_default_storage_is_user_data_dir(self) -> None:
        with det.core.init() as ctx:
            with ctx.checkpoint.store_path({"steps_completed": 1}) as (path, sid):
                (path / "f").write_text("x")
        self.assertTrue(os.path.isfile(
            os.path.join(self.tmp, ".local", "share", "determined", sid, "f")))

    def test_own_storage_off_cluster_is_not_shared(self) -> None:
        # A directory of one's own is made as any other, not writable by all as a cluster's is.
        mine = pathlib.Path(self.tmp, "mine", "ckpts")
        with det.core.init(checkpoint_storage=str(mine)) as ctx:
            with ctx.checkpoint.store_path({"steps_completed": 1}) as (path, sid):
                pass
        for d in (mine, mine.parent):
            self.assertEqual(stat.S_IMODE(d.stat().st_mode) & 0o002, 0, d)

    def test_invalid_hp_off_cluster(self) -> None:
        with self.assertRaises(SystemExit) as cm:
            with det.core.init(checkpoint_storage=self.tmp):
                raise det.InvalidHP("bad lr")
        self.assertEqual(cm.exception.code, 0)

    def test_a_bucket_uri_is_s3_or_gcs_storage_with_its_prefix(self) -> None:
        from determined.core import _storage

        s3 = _storage.from_string("s3://bucket/some/prefix/")
        self.assertEqual((s3.kind, s3.bucket, s3.prefix), ("s3", "bucket", "some/prefix"))
        gcs = _storage.from_string("gs://other")
        self.assertEqual((gcs.kind, gcs.bucket, gcs.prefix), ("gcs", "other", ""))
        self.assertEqual(s3.key("id", "a/b"), "some/prefix/id/a/b")
        self.assertEqual(gcs.key("id", "a/b"), "id/a/b")
        with self.assertRaisesRegex(ValueError, "must not contain '..'"):
            _storage.from_string("s3://bucket/a/../b")


class MetricsTest(MasterTestCase):
    def test_training_validation_custom_bodies(self) -> None:
        with det.core.init() as ctx:
            ctx.train.report_training_metrics(
                steps_completed=10, metrics={"loss": 0.5}, batch_metrics=[{"loss": 0.6}])
            ctx.train.report_validation_metrics(steps_completed=10, metrics={"acc": 0.9})
            ctx.train.report_metrics("inference", 20, {"latency": 3})
        calls = self.master.calls("POST", "/api/v1/trials/11/metrics")
        self.assertEqual([c.body for c in calls], [
            {"metrics": {"trial_id": 11, "trial_run_id": 2, "steps_completed": 10,
                         "metrics": {"avg_metrics": {"loss": 0.5},
                                     "batch_metrics": [{"loss": 0.6}]}},
             "group": "training"},
            {"metrics": {"trial_id": 11, "trial_run_id": 2, "steps_completed": 10,
                         "metrics": {"avg_metrics": {"acc": 0.9}}},
             "group": "validation"},
            {"metrics": {"trial_id": 11, "trial_run_id": 2, "steps_completed": 20,
                         "metrics": {"avg_metrics": {"latency": 3}}},
             "group": "inference"},
        ])
        for c in calls:
            self.assert_token(c)
            self.assertEqual(c.headers.get("content-type"), "application/json")

    def test_shipped_in_background_and_flushed_on_exit(self) -> None:
        def slow(req):  # type: ignore
            time.sleep(0.1)
            return 200, {}

        self.master.route("POST", r"/api/v1/trials/\d+/metrics", slow)
        with det.core.init() as ctx:
            start = time.monotonic()
            for i in range(5):
                ctx.train.report_training_metrics(i + 1, {"x": i})
            self.assertLess(time.monotonic() - start, 0.3)  # did not wait for 5 x 0.1 s
        calls = self.master.calls("POST", "/api/v1/trials/11/metrics")
        self.assertEqual([c.body["metrics"]["steps_completed"] for c in calls], [1, 2, 3, 4, 5])

    def test_validation_filtering(self) -> None:
        with det.core.init() as ctx:
            with self.assertRaises(RuntimeError):
                ctx.train.report_validation_metrics(1, {"acc": None})
            with self.assertLogs("determined.core", "WARNING"):
                ctx.train.report_validation_metrics(1, {"acc": 1.0, "blob": b"xx"})
            with self.assertRaises(ValueError):
                ctx.train.report_metrics("a.b", 1, {"x": 1})
            ctx.train.report_training_metrics(2, {"nan": float("nan"), "inf": float("inf")})
        bodies = [c.body for c in self.master.calls("POST", "/api/v1/trials/11/metrics")]
        self.assertEqual(bodies[0]["metrics"]["metrics"]["avg_metrics"], {"acc": 1.0})
        self.assertEqual(bodies[1]["metrics"]["metrics"]["avg_metrics"],
                         {"nan": "NaN", "inf": "Infinity"})

    def test_shipping_error_raised_on_close(self) -> None:
        self.master.fail_next.append(
            (r"/metrics$", 400, {"error": {"code": "invalid_argument", "message": "bad metric"}}))
        with self.assertRaisesRegex(_session.APIException, "bad metric"):
            with det.core.init() as ctx:
                ctx.train.report_training_metrics(1, {"x": 1})

    def test_progress_status_best(self) -> None:
        with det.core.init() as ctx:
            ctx.train.report_progress(0.25)
            with self.assertRaises(ValueError):
                ctx.train.report_progress(1.5)
            ctx.train.set_status("loading data")
            self.assertIsNone(ctx.train.get_experiment_best_validation())
            self.master.best_validation = 0.125
            self.assertEqual(ctx.train.get_experiment_best_validation(), 0.125)
        (p,) = self.master.calls("POST", "/api/v1/trials/11/progress")
        self.assertEqual(p.body, {"progress": 0.25, "is_raw": True})
        self.assert_token(p)
        (s,) = self.master.calls("POST", "/api/v1/trials/11/runner/metadata")
        self.assertEqual(s.body, {"state": "loading data"})
        best = self.master.calls(
            "GET", "/api/v1/experiments/7/searcher/best_searcher_validation_metric")
        self.assertEqual(len(best), 2)

    def test_invalid_hp_reports_early_exit_and_exits_0(self) -> None:
        with self.assertRaises(SystemExit) as cm:
            with det.core.init() as ctx:
                ctx.train.report_training_metrics(1, {"x": 1})
                raise det.InvalidHP("lr too big")
        self.assertEqual(cm.exception.code, 0)
        (e,) = self.master.calls("POST", "/api/v1/trials/11/early_exit")
        self.assertEqual(e.body, {"reason": "EXITED_REASON_INVALID_HP"})
        self.assert_token(e)
        # Metrics were flushed before the early exit was reported.
        self.assertEqual(len(self.master.calls("POST", "/api/v1/trials/11/metrics")), 1)
        order = [r.path for r in self.master.requests]
        self.assertLess(order.index("/api/v1/trials/11/metrics"),
                        order.index("/api/v1/trials/11/early_exit"))

    def test_other_exceptions_propagate(self) -> None:
        with self.assertRaises(KeyError):
            with det.core.init():
                raise KeyError("x")
        self.assertEqual(self.master.calls("POST", "/api/v1/trials/11/early_exit"), [])

    def test_run_prepare(self) -> None:
        with det.core.init():
            pass
        (r,) = self.master.calls("POST", "/api/v1/runs/start")
        self.assertEqual(r.body["runId"], 11)
        self.assertEqual(r.body["checkpointStorage"]["type"], "shared_fs")

    def test_run_prepare_missing_is_tolerated(self) -> None:
        self.master.route("POST", r"/api/v1/runs/start",
                          lambda req: (404, {"error": {"message": "not found"}}))
        with det.core.init() as ctx:
            with ctx.checkpoint.store_path({"steps_completed": 1}) as (path, sid):
                pass
        (c,) = self.master.calls("POST", "/api/v1/checkpoints")
        self.assertNotIn("storageId", c.body)

    def test_tensorboard_path(self) -> None:
        with det.core.init() as ctx:
            p = ctx.train.get_tensorboard_path()
        self.assertEqual(p, pathlib.Path(self.tmp, "checkpoints", "cluster-1", "tensorboard",
                                         "experiment", "7", "trial", "11"))
        self.assertTrue(p.is_dir())
        # Every user's tasks write TensorBoard files here: the directories above each
        # experiment's are sticky and writable by all, as /tmp; the experiment's are its owner's.
        base = pathlib.Path(self.tmp, "checkpoints")
        for shared in (base, base / "cluster-1", base / "cluster-1" / "tensorboard",
                       base / "cluster-1" / "tensorboard" / "experiment"):
            self.assertEqual(stat.S_IMODE(shared.stat().st_mode), 0o1777, shared)
        self.assertEqual(stat.S_IMODE(p.parent.parent.stat().st_mode) & 0o002, 0)

    def test_multi_slot_requires_distributed(self) -> None:
        self.set_env(DET_SLOT_IDS="[0,1]")
        with self.assertRaisesRegex(ValueError, "DistributedContext"):
            det.core.init()


class CheckpointTest(MasterTestCase):
    def test_store_path_writes_and_reports(self) -> None:
        with det.core.init() as ctx:
            with ctx.checkpoint.store_path({"steps_completed": 10, "note": "hi"}) as (path, sid):
                self.assertTrue(path.is_dir())
                (path / "a.txt").write_text("hello")
                (path / "sub").mkdir()
                (path / "sub" / "b.txt").write_text("abc")
        base = pathlib.Path(self.tmp, "checkpoints")
        final = base / sid
        self.assertEqual((final / "a.txt").read_text(), "hello")
        self.assertEqual(json.loads((final / "metadata.json").read_text()),
                         {"steps_completed": 10, "note": "hi"})
        self.assertEqual(sorted(os.listdir(base)), [sid])  # no temp dirs left behind
        (c,) = self.master.calls("POST", "/api/v1/checkpoints")
        self.assert_token(c)
        body = dict(c.body)
        report_time = body.pop("reportTime")
        datetime.datetime.fromisoformat(report_time)
        self.assertEqual(body, {
            "uuid": sid,
            "taskId": "7.1",
            "allocationId": ALLOC,
            "resources": {"a.txt": 5, "sub/": 0, "sub/b.txt": 3},
            "metadata": {"steps_completed": 10, "note": "hi"},
            "state": "STATE_COMPLETED",
            "training": {},
            "storageId": 7,
        })

    def test_store_path_requires_steps_completed(self) -> None:
        with det.core.init() as ctx:
            with self.assertRaisesRegex(ValueError, "steps_completed"):
                with ctx.checkpoint.store_path({"x": 1}) as (path, sid):
                    pass
        self.assertEqual(self.master.calls("POST", "/api/v1/checkpoints"), [])

    def test_store_path_failure_leaves_nothing(self) -> None:
        with det.core.init() as ctx:
            with self.assertRaises(ZeroDivisionError):
                with ctx.checkpoint.store_path({"steps_completed": 1}) as (path, sid):
                    (path / "x").write_text("x")
                    1 / 0
        self.assertEqual(os.listdir(os.path.join(self.tmp, "checkpoints")), [])
        self.assertEqual(self.master.calls("POST", "/api/v1/checkpoints"), [])

    def test_delete_with_globs_on_shared_fs_follows_python_glob(self) -> None:
        from determined.core import _storage

        m = _storage.SharedFSStorageManager(os.path.join(self.tmp, "globs"))
        src = pathlib.Path(self.tmp, "globs-src")
        for name in ("model.pt", "sub/model.pt", "sub/keep.txt", "logs/a/b.txt", "top.txt"):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text("x")
        m.upload(src, "c")
        # "*.pt" stops at "/"; a matched directory goes with what it holds (as the buckets').
        self.assertEqual(m.delete("c", ["*.pt", "logs"]),
                         {"sub/": 0, "sub/keep.txt": 1, "sub/model.pt": 1, "top.txt": 1})
        self.assertEqual(m.delete("c", ["**/*.pt"]), {"sub/": 0, "sub/keep.txt": 1, "top.txt": 1})
        self.assertEqual(m.delete("c", ["**/*"]), {})

    def test_upload_download_restore_metadata_delete(self) -> None:
        src = pathlib.Path(self.tmp, "src")
        (src / "d").mkdir(parents=True)
        (src / "model.bin").write_bytes(b"\0" * 10)
        (src / "d" / "opt.bin").write_bytes(b"\1" * 4)
        (src / "skip.log").write_text("no")
        with det.core.init() as ctx:
            sid = ctx.checkpoint.upload(src, {"steps_completed": 5},
                                        selector=lambda p: not p.endswith(".log"))
            (c,) = self.master.calls("POST", "/api/v1/checkpoints")
            self.assertEqual(c.body["resources"], {"d/": 0, "d/opt.bin": 4, "model.bin": 10})
            self.assertEqual(ctx.checkpoint.get_metadata(sid), {"steps_completed": 5})
            dst = pathlib.Path(self.tmp, "dst")
            ctx.checkpoint.download(sid, dst)
            self.assertEqual(sorted(str(p.relative_to(dst)) for p in dst.rglob("*")),
                             ["d", "d/opt.bin", "metadata.json", "model.bin"])
            with ctx.checkpoint.restore_path(sid) as p:
                self.assertEqual(p, pathlib.Path(self.tmp, "checkpoints", sid))
                self.assertEqual((p / "model.bin").read_bytes(), b"\0" * 10)
            with self.assertRaises(FileNotFoundError):
                with ctx.checkpoint.restore_path("nope"):
                    pass
            ctx.checkpoint.delete(sid)
            self.assertFalse(os.path.exists(os.path.join(self.tmp, "checkpoints", sid)))
        (patch,) = self.master.calls("PATCH", "/api/v1/checkpoints")
        self.assertEqual(patch.body,
                         {"checkpoints": [{"uuid": sid, "resources": {"resources": {}}}]})
        (g,) = self.master.calls("GET", f"/api/v1/checkpoints/{sid}")
        self.assert_token(g)

    def test_directory_storage(self) -> None:
        d = os.path.join(self.tmp, "dir-storage")
        cfg = {"checkpoint_storage": {"type": "directory", "container_path": d}}
        self.set_env(DET_EXPERIMENT_CONFIG=cfg)
        with det.core.init() as ctx:
            with ctx.checkpoint.store_path({"steps_completed": 1}) as (path, sid):
                (path / "f").write_text("1")
        self.assertTrue(os.path.isfile(os.path.join(d, sid, "f")))

    def test_a_bucket_it_cannot_reach_fails_init_naming_the_bucket(self) -> None:
        # A port nothing listens on: the trial fails at start, not at its first checkpoint.
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        cfg = {"checkpoint_storage": {"type": "s3", "bucket": "b", "access_key": "k",
                                      "secret_key": "s", "endpoint_url": f"http://127.0.0.1:{port}"}}
        self.set_env(DET_EXPERIMENT_CONFIG=cfg)
        with self.assertRaisesRegex(RuntimeError,
                                    "s3 checkpoint storage, bucket 'b': check access: cannot reach"):
            det.core.init()


class PreemptTest(MasterTestCase):
    def wait_for(self, fn, timeout: float = 5.0) -> bool:  # type: ignore
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if fn():
                return True
            time.sleep(0.05)
        return False

    def test_watcher_and_auto_ack(self) -> None:
        with det.core.init() as ctx:
            self.assertFalse(ctx.preempt.should_preempt())
            self.master.set_preempt(True)
            self.assertTrue(self.wait_for(ctx.preempt.should_preempt))
            self.assertTrue(ctx.preempt.should_preempt())
        acks = self.master.calls("POST", f"/api/v1/allocations/{ALLOC}/signals/ack_preemption")
        self.assertEqual(len(acks), 1)
        self.assert_token(acks[0])
        polls = self.master.calls("GET", f"/api/v1/allocations/{ALLOC}/signals/preemption")
        self.assertEqual(polls[0].query["timeout_seconds"], ["0"])
        self.assertEqual(polls[1].query["timeout_seconds"], ["60"])
        self.assert_token(polls[0])

    def test_preempted_at_start_no_auto_ack(self) -> None:
        self.master.set_preempt(True)
        with det.core.init() as ctx:
            self.assertTrue(ctx.preempt.should_preempt(auto_ack=False))
            self.assertEqual(
                self.master.calls("POST", f"/api/v1/allocations/{ALLOC}/signals/ack_preemption"),
                [])
            ctx.preempt.acknowledge_preemption_signal()
        self.assertEqual(len(self.master.calls(
            "POST", f"/api/v1/allocations/{ALLOC}/signals/ack_preemption")), 1)

    def test_master_without_preemption_endpoint(self) -> None:
        self.master.route("GET", r"/api/v1/allocations/[^/]+/signals/preemption",
                          lambda req: (404, {"error": {"message": "nope"}}))
        with self.assertLogs("determined.core", "WARNING"):
            with det.core.init() as ctx:
                self.assertFalse(ctx.preempt.should_preempt())


class SearcherTest(MasterTestCase):
    def test_single_op_from_max_length(self) -> None:
        with det.core.init() as ctx:
            self.assertEqual(ctx.searcher.get_configured_units(), core.Unit.BATCHES)
            with self.assertWarns(FutureWarning):
                ops = []
                for op in ctx.searcher.operations():
                    ops.append(op)
                    self.assertEqual(op.length, 100)
                    op.report_progress(50)
                    op.report_completed(0.5)
            self.assertEqual(len(ops), 1)
        (p,) = self.master.calls("POST", "/api/v1/trials/11/progress")
        self.assertEqual(p.body, {"progress": 0.5, "is_raw": True})

    def test_missing_max_length(self) -> None:
        cfg = {"checkpoint_storage": {"type": "shared_fs", "host_path": self.tmp},
               "searcher": {"name": "single", "metric": "x"}}
        self.set_env(DET_EXPERIMENT_CONFIG=cfg)
        with det.core.init() as ctx:
            with self.assertRaisesRegex(ValueError, "searcher.max_length"):
                ctx.searcher.operations()



DIST_WORKER = """
import json, sys
import determined as det
d = det.core.DistributedContext.from_torch_distributed()
out = {
    "gather": d.gather(d.rank * 10),
    "allgather": d.allgather("r%d" % d.rank),
    "broadcast": d.broadcast({"from": d.rank}),
    "broadcast_local": d.broadcast_local("local-chief-%d" % d.cross_rank if d.local_rank == 0 else None),
    "gather_local": d.gather_local(d.rank),
}
import tempfile
with det.core.init(distributed=d, checkpoint_storage=tempfile.gettempdir()) as ctx:
    out["preempt"] = ctx.preempt.should_preempt()
    ops = []
    import warnings
    warnings.simplefilter("ignore")
    for op in ctx.searcher.operations():
        ops.append(op.length)
        if d.rank == 0:
            op.report_completed(0.0)
    out["ops"] = ops
print(json.dumps(out))
"""


class DistributedTest(unittest.TestCase):
    def test_single_process(self) -> None:
        d = core.DummyDistributedContext()
        self.assertEqual((d.rank, d.size, d.local_rank, d.local_size, d.cross_rank,
                          d.cross_size), (0, 1, 0, 1, 0, 1))
        self.assertEqual(d.gather(3), [3])
        self.assertEqual(d.gather_local(3), [3])
        self.assertEqual(d.allgather("a"), ["a"])
        self.assertEqual(d.allgather_local("a"), ["a"])
        self.assertEqual(d.broadcast({"k": 1}), {"k": 1})
        self.assertEqual(d.broadcast_local(5), 5)

    def test_from_torch_distributed(self) -> None:
        env = {"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
               "GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1"}
        with mock.patch.dict(os.environ, env):
            d = core.DistributedContext.from_torch_distributed()
        self.assertEqual(d.size, 1)
        self.assertEqual(d.allgather(1), [1])

    def _run_workers(self, size: int, local_size: int) -> List[Dict[str, Any]]:
        """Runs DIST_WORKER as `size` processes, `local_size` per node, torchrun-style."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = []
        for rank in range(size):
            env = clean_environ()
            env.update({"RANK": str(rank), "WORLD_SIZE": str(size),
                        "LOCAL_RANK": str(rank % local_size), "LOCAL_WORLD_SIZE": str(local_size),
                        "GROUP_RANK": str(rank // local_size),
                        "GROUP_WORLD_SIZE": str(size // local_size), "DET_DIST_PORT": str(port),
                        "DET_CHIEF_IP": "127.0.0.1",
                        "PYTHONPATH": HARNESS, "PYTHONDONTWRITEBYTECODE": "1",
                        "HOME": tempfile.gettempdir()})
            procs.append(subprocess.Popen([sys.executable, "-B", "-c", DIST_WORKER], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 0, err)
            outs.append(json.loads(out))
        return outs

    def test_single_node_multi_process(self) -> None:
        outs = self._run_workers(3, 3)
        for rank, out in enumerate(outs):
            self.assertEqual(out["gather"], [0, 10, 20] if rank == 0 else None)
            self.assertEqual(out["allgather"], ["r0", "r1", "r2"])
            self.assertEqual(out["broadcast"], {"from": 0})
            self.assertEqual(out["broadcast_local"], "local-chief-0")
            self.assertEqual(out["gather_local"], [0, 1, 2] if rank == 0 else None)
            self.assertFalse(out["preempt"])
            self.assertEqual(out["ops"], [1])

    def test_two_nodes_multi_process(self) -> None:
        # Two nodes of two workers (as two pods after the rendezvous): the global collectives
        # span all four, the local ones each node.
        outs = self._run_workers(4, 2)
        for rank, out in enumerate(outs):
            node, local_rank = rank // 2, rank % 2
            self.assertEqual(out["gather"], [0, 10, 20, 30] if rank == 0 else None)
            self.assertEqual(out["allgather"], ["r0", "r1", "r2", "r3"])
            self.assertEqual(out["broadcast"], {"from": 0})
            self.assertEqual(out["broadcast_local"], "local-chief-%d" % node)
            self.assertEqual(out["gather_local"],
                             [2 * node, 2 * node + 1] if local_rank == 0 else None)
            self.assertFalse(out["preempt"])
            self.assertEqual(out["ops"], [1])

    def test_several_nodes_need_the_chief_address(self) -> None:
        env = {"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
               "GROUP_RANK": "1", "GROUP_WORLD_SIZE": "2"}
        with mock.patch.dict(os.environ, clean_environ(), clear=True):
            with mock.patch.dict(os.environ, env):
                with self.assertRaisesRegex(ValueError, "chief_ip"):
                    core.DistributedContext.from_torch_distributed()

    def test_missing_env_raises_keyerror(self) -> None:
        with mock.patch.dict(os.environ, clean_environ(), clear=True):
            with self.assertRaises(KeyError):
                core.DistributedContext.from_torch_distributed()


class SessionTest(MasterTestCase):
    def test_retries_on_503(self) -> None:
        self.master.fail_next.append((r"/progress$", 503, {}))
        self.master.fail_next.append((r"/progress$", 502, {}))
        s = _session.Session(self.master.url, TOKEN, backoff=0.01)
        s.post("/api/v1/trials/11/progress", json={"progress": 0.1, "is_raw": True})
        self.assertEqual(len(self.master.calls("POST", "/api/v1/trials/11/progress")), 3)

    def test_retries_503_until_the_master_answers(self) -> None:
        # A database restart: the master answers 503 for a while.
        for _ in range(12):
            self.master.fail_next.append((r"/progress$", 503, {}))
        s = _session.Session(self.master.url, TOKEN, backoff=0.01, max_backoff=0.02)
        s.post("/api/v1/trials/11/progress", json={"progress": 0.1, "is_raw": True})
        self.assertEqual(len(self.master.calls("POST", "/api/v1/trials/11/progress")), 13)

    def test_retrying_is_bounded_in_time(self) -> None:
        for _ in range(1000):
            self.master.fail_next.append((r"/progress$", 503, {}))
        s = _session.Session(self.master.url, TOKEN, backoff=0.01, max_backoff=0.05, retry_seconds=0.5)
        start = time.monotonic()
        with self.assertRaises(_session.APIException) as cm:
            s.post("/api/v1/trials/11/progress", json={})
        self.assertEqual(cm.exception.status, 503)
        self.assertLess(time.monotonic() - start, 3)

    def test_4xx_message(self) -> None:
        self.master.fail_next.append(
            (r"/progress$", 403, {"error": {"code": "permission_denied", "message": "no way"}}))
        s = _session.Session(self.master.url, TOKEN, backoff=0.01)
        with self.assertRaises(_session.ForbiddenException) as cm:
            s.post("/api/v1/trials/11/progress", json={})
        self.assertEqual(cm.exception.status, 403)
        self.assertIn("no way", str(cm.exception))
        self.assertEqual(len(self.master.calls("POST", "/api/v1/trials/11/progress")), 1)

    def test_unreachable_is_bounded(self) -> None:
        url = self.master.url
        self.master.close()
        s = _session.Session(url, TOKEN, max_retries=2, backoff=0.01)
        start = time.monotonic()
        with self.assertRaises(_session.MasterNotFoundException):
            s.get("/api/v1/master")
        self.assertLess(time.monotonic() - start, 5)
        self.master = type(self.master)()  # a fresh one for cleanup
        self.addCleanup(self.master.close)

    def test_no_scheme(self) -> None:
        s = _session.Session(self.master.url[len("http://"):], TOKEN)
        s.post("/api/v1/trials/11/progress", json={"progress": 0.0, "is_raw": True})



class LaunchTest(unittest.TestCase):
    def test_torch_distributed_single_slot(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            script = pathlib.Path(tmp, "train.py")
            script.write_text(
                "import sys, determined as det\n"
                "d = det.core.DistributedContext.from_torch_distributed()\n"
                "print('rank', d.rank, 'size', d.size, sys.argv[1:])\n")
            env = clean_environ()
            env.update({"PYTHONPATH": HARNESS, "PYTHONDONTWRITEBYTECODE": "1"})
            out = subprocess.run(
                [sys.executable, "-B", "-m", "determined.launch.torch_distributed", "--",
                 str(script), "--epochs", "2"],
                env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stdout.strip(), "rank 0 size 1 ['--epochs', '2']")
            usage = subprocess.run(
                [sys.executable, "-B", "-m", "determined.launch.torch_distributed"],
                env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(usage.returncode, 2)

    def test_torch_distributed_two_slots(self) -> None:
        # Two slots on one container: torchrun (through _torchrun, which also works where
        # torch's own fails under Python 3.11) starts two workers that form one
        # DistributedContext.
        try:
            import torch.distributed.run  # noqa: F401
        except ImportError:
            self.skipTest("PyTorch is not installed")
        with tempfile.TemporaryDirectory() as tmp:
            script = pathlib.Path(tmp, "train.py")
            script.write_text(
                "import determined as det\n"
                "d = det.core.DistributedContext.from_torch_distributed()\n"
                "ranks = d.allgather(d.rank)\n"
                # One write of the whole line: both workers share the pipe, and
                # print's pieces of several arguments interleave.
                "import sys\n"
                "sys.stdout.write(f'rank {d.rank} of {d.size} saw {ranks}\\n')\n"
                "sys.stdout.flush()\n")
            env = clean_environ()
            env.update({"PYTHONPATH": HARNESS, "PYTHONDONTWRITEBYTECODE": "1",
                        "DET_MASTER": "http://127.0.0.1:1", "DET_SESSION_TOKEN": "t",
                        "DET_TASK_ID": "t", "DET_ALLOCATION_ID": "t.1", "DET_TASK_TYPE": "COMMAND",
                        "DET_SLOT_IDS": "[0,1]", "HOME": tmp})
            out = subprocess.run(
                [sys.executable, "-B", "-m", "determined.launch.torch_distributed", str(script)],
                env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            for rank in (0, 1):
                self.assertIn(f"rank {rank} of 2 saw [0, 1]", out.stdout, out.stderr)


if __name__ == "__main__":
    unittest.main()
