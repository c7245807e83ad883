"""profiling.begin_on_batch, end_after_batch and sync_timings of the experiment config."""
import sys
import threading
import types
import unittest
from typing import Any, List, Optional, Tuple
from unittest import mock

import determined as det
from determined.core import _profiler

from tests.fake_master import Request
from tests.helpers import MasterTestCase


class _Sampler:
    """A sampler that says nothing: the tests watch when the profiler runs, not what it reads."""

    def sample(self) -> dict:
        return {}


def _profiler_with(window: _profiler.ProfilingWindow) -> _profiler.ProfilerContext:
    dist = types.SimpleNamespace(local_rank=0)
    session = types.SimpleNamespace(post=lambda *a, **k: None)
    p = _profiler.ProfilerContext(session, "agent-1", 11, 2, dist,  # type: ignore[arg-type]
                                  sampler_factory=_Sampler)
    p._follow(window)
    return p


class _FakeCUDA:
    def __init__(self, available: bool = True) -> None:
        self.available = available
        self.synchronized = 0

    def is_available(self) -> bool:
        return self.available

    def synchronize(self) -> None:
        self.synchronized += 1


class ProfilingWindowTest(unittest.TestCase):
    def test_the_window_holds_the_batches_from_begin_to_end(self) -> None:
        cases = {
            "the defaults profile from the first batch on": ((0, None), [True] * 6),
            "begin_on_batch 3 waits for three batches": ((3, None), [False, False, False, True, True, True]),
            "end_after_batch 2 stops once batch 2 is done": ((0, 2), [True, True, True, False, False, False]),
            "both": ((2, 3), [False, False, True, True, False, False]),
            "a window of one batch": ((4, 4), [False, False, False, False, True, False]),
        }
        for name, ((begin, end), want) in cases.items():
            with self.subTest(name):
                w = _profiler.ProfilingWindow(begin, end)
                self.assertEqual([w.wants(n) for n in range(6)], want)

    def test_the_config_gives_the_window_only_when_profiling_is_enabled(self) -> None:
        self.assertIsNone(_profiler.profiling_window({}))
        self.assertIsNone(_profiler.profiling_window({"profiling": {"enabled": False, "begin_on_batch": 3}}))
        w = _profiler.profiling_window(
            {"profiling": {"enabled": True, "begin_on_batch": 2, "end_after_batch": 10, "sync_timings": False}})
        assert w is not None
        self.assertEqual((w.begin_on_batch, w.end_after_batch, w.sync_timings), (2, 10, False))
        w = _profiler.profiling_window({"profiling": {"enabled": True}})
        assert w is not None
        self.assertEqual((w.begin_on_batch, w.end_after_batch, w.sync_timings), (0, None, True))

    def test_the_profiler_runs_within_the_window_and_never_again_after_it(self) -> None:
        p = _profiler_with(_profiler.ProfilingWindow(3, 5, sync_timings=False))
        self.addCleanup(p._close)
        seen = []
        for n in list(range(9)) + [4, 3]:  # a repeated report of earlier steps changes nothing
            p._batches_completed(n)
            seen.append(p.is_on)
        self.assertEqual(seen, [False, False, False, True, True, True, False, False, False, False, False])
        self.assertNotIn("ProfilerCollectorThread", {t.name for t in threading.enumerate()})

    def test_sync_timings_waits_for_the_gpu_at_each_edge_of_the_window(self) -> None:
        for sync, available, want in ((True, True, 2), (False, True, 0), (True, False, 0)):
            with self.subTest(sync_timings=sync, cuda=available):
                cuda = _FakeCUDA(available)
                with mock.patch.dict(sys.modules, {"torch": types.SimpleNamespace(cuda=cuda)}):
                    p = _profiler_with(_profiler.ProfilingWindow(1, 2, sync_timings=sync))
                    self.addCleanup(p._close)
                    for n in range(5):
                        p._batches_completed(n)
                self.assertEqual(cuda.synchronized, want)

    def test_without_torch_sync_timings_does_not_import_it(self) -> None:
        with mock.patch.dict(sys.modules, {"torch": None}):
            self.assertFalse(_profiler.ProfilingWindow(0, None, True).sync("starting"))
            self.assertIsNone(sys.modules.get("torch"))


class ProfilingWindowInATrialTest(MasterTestCase):
    def _config(self, **profiling: Any) -> dict:
        return {"name": "p", "profiling": dict(enabled=True, **profiling),
                "checkpoint_storage": {"type": "shared_fs", "host_path": self.tmp},
                "searcher": {"name": "single", "metric": "x", "max_length": 1}}

    def test_training_reports_move_the_profiler_through_the_window(self) -> None:
        self.master.route("POST", r"/api/v1/trials/\d+/metrics", lambda req: (200, {}))
        self.set_env(DET_EXPERIMENT_CONFIG=self._config(begin_on_batch=20, end_after_batch=40))
        with det.core.init() as ctx:
            self.assertFalse(ctx.profiler.is_on, "on before begin_on_batch")
            seen = []
            for steps in (10, 20, 30, 40, 50, 60):
                ctx.train.report_training_metrics(steps_completed=steps, metrics={"loss": 1.0})
                seen.append(ctx.profiler.is_on)
            self.assertEqual(seen, [False, True, True, True, False, False])

    def test_begin_on_batch_zero_profiles_from_the_start(self) -> None:
        self.master.route("POST", r"/api/v1/trials/\d+/metrics", lambda req: (200, {}))
        self.set_env(DET_EXPERIMENT_CONFIG=self._config(end_after_batch=5))
        with det.core.init() as ctx:
            self.assertTrue(ctx.profiler.is_on)
            ctx.train.report_training_metrics(steps_completed=6, metrics={"loss": 1.0})
            self.assertFalse(ctx.profiler.is_on)


if __name__ == "__main__":
    unittest.main()
