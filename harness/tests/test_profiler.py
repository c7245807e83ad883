import datetime
import os
import stat
import sys
import tempfile
import threading
import types
import unittest
from typing import Any, Dict, List, Tuple
from unittest import mock

import determined as det
from determined.core import _profiler, _sysinfo

from tests.fake_master import Request
from tests.helpers import MasterTestCase

SYSTEM_GROUPS = {"cpu", "memory", "disk", "network"}


def _write(root: str, name: str, text: str) -> None:
    path = os.path.join(root, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def _proc_tree(root: str, cpu: List[int], mem_kb: int, disk: Tuple[int, int, int, int],
               net: Tuple[int, int]) -> None:
    """A /proc and /sys of a machine with one disk (sda, partition sda1) and two interfaces."""
    _write(root, "proc/stat", "cpu  " + " ".join(map(str, cpu)) + "\ncpu0 1 2 3 4\nintr 5\n")
    _write(root, "proc/meminfo",
           f"MemTotal:       16000000 kB\nMemFree:         1000 kB\nMemAvailable:   {mem_kb} kB\n")
    reads, read_sectors, writes, write_sectors = disk
    _write(root, "proc/diskstats",
           f"   8       0 sda {reads} 0 {read_sectors} 0 {writes} 0 {write_sectors} 0 0 0 0\n"
           f"   8       1 sda1 {reads} 0 {read_sectors} 0 {writes} 0 {write_sectors} 0 0 0 0\n"
           "   7       0 loop0 99 0 999 0 99 0 999 0 0 0 0\n")
    sent, recv = net
    _write(root, "proc/net/dev",
           "Inter-|   Receive                            |  Transmit\n"
           " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets\n"
           f"    lo: {recv} 1 0 0 0 0 0 0 {sent} 1 0 0 0 0 0 0\n"
           f"  eth0: {recv} 1 0 0 0 0 0 0 {sent} 1 0 0 0 0 0 0\n")
    os.makedirs(os.path.join(root, "sys/block/sda"), exist_ok=True)
    os.makedirs(os.path.join(root, "sys/block/loop0"), exist_ok=True)


class SamplerTest(unittest.TestCase):
    def test_rates_and_levels_come_from_proc_counters(self) -> None:
        root = tempfile.mkdtemp(prefix="fake-proc-")
        self.addCleanup(__import__("shutil").rmtree, root, True)
        # user nice system idle iowait irq softirq steal guest guest_nice
        _proc_tree(root, [100, 0, 100, 700, 100, 0, 0, 0, 50, 0], 8_000_000,
                   (10, 100, 20, 200), (1000, 5000))
        now = [0.0]
        sampler = _profiler.Sampler(
            _profiler.ProcReader(os.path.join(root, "proc"), os.path.join(root, "sys")),
            gpus=None, disk_paths=(root,), clock=lambda: now[0])
        # Two seconds later: 300 of 1000 more jiffies busy, 40 more I/Os, 2048 sectors read and
        # 4096 written, 4000 bytes sent and 10000 received on each of two interfaces.
        _proc_tree(root, [300, 0, 200, 1300, 200, 0, 0, 0, 50, 0], 6_000_000,
                   (30, 2148, 40, 4296), (5000, 15000))
        now[0] = 2.0
        s = sampler.sample()
        self.assertAlmostEqual(s["cpu"]["cpu_util_simple"], 30.0)
        self.assertAlmostEqual(s["memory"]["memory_free"], 6_000_000 * 1024 / 1e9)
        self.assertAlmostEqual(s["disk"]["disk_iops"], 20.0)  # the partition is not counted again
        self.assertAlmostEqual(s["disk"]["disk_throughput_read"], 2048 * 512 / 2)
        self.assertAlmostEqual(s["disk"]["disk_throughput_write"], 4096 * 512 / 2)
        self.assertGreater(s["disk"][root]["disk_util"], 0.0)
        self.assertLessEqual(s["disk"][root]["disk_util"], 100.0)
        self.assertAlmostEqual(s["network"]["net_throughput_sent"], 2 * 4000 / 2)
        self.assertAlmostEqual(s["network"]["net_throughput_recv"], 2 * 10000 / 2)
        self.assertNotIn("gpu", s)

    def test_a_group_that_cannot_be_read_is_left_out(self) -> None:
        root = tempfile.mkdtemp(prefix="fake-proc-")
        self.addCleanup(__import__("shutil").rmtree, root, True)
        _proc_tree(root, [1, 0, 1, 8, 0, 0, 0, 0], 1000, (0, 0, 0, 0), (0, 0))
        os.remove(os.path.join(root, "proc/diskstats"))
        sampler = _profiler.Sampler(
            _profiler.ProcReader(os.path.join(root, "proc"), os.path.join(root, "sys")),
            disk_paths=())
        s = sampler.sample()
        self.assertEqual(set(s), {"cpu", "memory", "network"})

    def test_average_is_per_key_one_level_deep(self) -> None:
        got = _profiler.average([
            {"a": 1, "g0": {"u": 10, "m": 100}},
            {"a": 3, "g0": {"u": 20, "m": 300}, "g1": {"u": 5}},
        ])
        self.assertEqual(got, {"a": 2.0, "g0": {"u": 15.0, "m": 200.0}, "g1": {"u": 5.0}})


class GPUReaderTest(unittest.TestCase):
    def test_nvidia_smi_is_read_and_only_the_tasks_gpus_kept(self) -> None:
        d = tempfile.mkdtemp(prefix="fake-smi-")
        self.addCleanup(__import__("shutil").rmtree, d, True)
        smi = os.path.join(d, "nvidia-smi")
        with open(smi, "w") as f:
            f.write("#!/bin/sh\n"
                    "case \"$*\" in *--query-gpu=uuid,utilization.gpu,memory.free*) ;; *) exit 2;; esac\n"
                    "echo 'GPU-aaa, 87, 1024'\necho 'GPU-bbb, 3, 2048'\necho 'GPU-ccc, [N/A], 1'\n")
        os.chmod(smi, stat.S_IRWXU)
        every = _profiler.GPUReader(nvidia_smi=smi).sample()
        self.assertEqual(every, {
            "GPU-aaa": {"gpu_util": 87.0, "gpu_free_memory": 1024.0 * 2**20},
            "GPU-bbb": {"gpu_util": 3.0, "gpu_free_memory": 2048.0 * 2**20},
        })
        mine = _profiler.GPUReader(["GPU-bbb"], nvidia_smi=smi).sample()
        self.assertEqual(list(mine), ["GPU-bbb"])


    def test_without_nvml_or_nvidia_smi_an_imported_torch_cuda_gives_free_memory(self) -> None:
        class FakeCuda:
            @staticmethod
            def is_available() -> bool:
                return True

            @staticmethod
            def device_count() -> int:
                return 2

            @staticmethod
            def get_device_properties(i: int) -> Any:
                return types.SimpleNamespace(uuid="1f2e-%d" % i)

            @staticmethod
            def mem_get_info(i: int) -> Tuple[int, int]:
                return (1000 * (i + 1), 8000)

        empty = tempfile.mkdtemp(prefix="no-smi-")
        self.addCleanup(__import__("shutil").rmtree, empty, True)
        fake_torch = types.SimpleNamespace(cuda=FakeCuda)
        # Nor the driver's NVML library, on a machine that has one.
        no_nvml = mock.patch.object(_sysinfo, "NVML_LIBRARY", os.path.join(empty, "libnvidia-ml.so.1"))
        no_nvml.start()
        self.addCleanup(no_nvml.stop)
        with mock.patch.dict(sys.modules, {"torch": fake_torch, "pynvml": None}), \
                mock.patch.dict(os.environ, {"PATH": empty}):
            reader = _profiler.GPUReader()
            self.assertEqual(reader.source, "torch.cuda")
            self.assertEqual(reader.sample(), {"GPU-1f2e-0": {"gpu_free_memory": 1000.0},
                                               "GPU-1f2e-1": {"gpu_free_memory": 2000.0}})
            self.assertEqual(list(_profiler.GPUReader(["GPU-1f2e-1"]).sample()), ["GPU-1f2e-1"])
        with mock.patch.dict(sys.modules, {"torch": None, "pynvml": None}), \
                mock.patch.dict(os.environ, {"PATH": empty}):
            none = _profiler.GPUReader()
            self.assertEqual((none.source, none.sample()), ("", {}))


class ProfilerContextTest(MasterTestCase):
    def _collect(self) -> Tuple[List[Request], threading.Event]:
        """Records system-metrics reports; the event is set once every /proc group arrived."""
        got: List[Request] = []
        seen = set()
        done = threading.Event()

        def handler(req: Request) -> Tuple[int, Any]:
            if req.body.get("group") in SYSTEM_GROUPS | {"gpu"}:
                got.append(req)
                seen.add(req.body["group"])
                if SYSTEM_GROUPS <= seen:
                    done.set()
            return 200, {}

        self.master.route("POST", r"/api/v1/trials/\d+/metrics", handler)
        return got, done

    def _check_report(self, req: Request) -> None:
        self.assert_token(req)
        self.assertEqual(req.path, "/api/v1/trials/11/metrics")
        inner = req.body["metrics"]
        self.assertEqual(inner["trial_id"], 11)
        self.assertEqual(inner["trial_run_id"], 2)
        when = datetime.datetime.fromisoformat(inner["report_time"])
        self.assertIsNotNone(when.tzinfo)
        avg = inner["metrics"]["avg_metrics"]
        self.assertEqual(list(avg), ["agent-1"])
        want = {"cpu": "cpu_util_simple", "memory": "memory_free", "disk": "disk_throughput_read",
                "network": "net_throughput_sent"}.get(req.body["group"])
        if want:
            self.assertIsInstance(avg["agent-1"][want], float)

    def test_on_reports_each_group_keyed_by_agent_and_off_stops(self) -> None:
        got, done = self._collect()
        with det.core.init() as ctx:
            self.assertFalse(ctx.profiler.is_on)
            ctx.profiler.on(sampling_interval=0.1, samples_per_report=2)
            ctx.profiler.on()  # already on: nothing changes
            self.assertTrue(done.wait(30), f"reports so far: {got}")
            ctx.profiler.off()
            self.assertFalse(ctx.profiler.is_on)
            threads = {t.name for t in threading.enumerate()}
            self.assertNotIn("ProfilerCollectorThread", threads)
            self.assertNotIn("ProfilerShipperThread", threads)
            ctx.profiler.off()  # already off
        for req in list(got):
            self._check_report(req)

    def test_profiling_enabled_in_the_config_turns_it_on_for_the_trial(self) -> None:
        config = {"name": "p", "profiling": {"enabled": True},
                  "checkpoint_storage": {"type": "shared_fs", "host_path": self.tmp},
                  "searcher": {"name": "single", "metric": "x", "max_length": 1}}
        self.set_env(DET_EXPERIMENT_CONFIG=config)
        got, done = self._collect()
        with det.core.init() as ctx:
            self.assertTrue(ctx.profiler.is_on)
            # At the default pace: a sample a second, ten to a report.
            self.assertTrue(done.wait(60), f"reports so far: {got}")
        # Closing the context turned it off.
        self.assertFalse(ctx.profiler.is_on)
        self.assertNotIn("ProfilerCollectorThread", {t.name for t in threading.enumerate()})

    def test_profiling_is_off_unless_the_config_or_the_script_says_on(self) -> None:
        got, _ = self._collect()
        for profiling in (None, {"enabled": False}):
            config = {"name": "p", "checkpoint_storage": {"type": "shared_fs", "host_path": self.tmp},
                      "searcher": {"name": "single", "metric": "x", "max_length": 1}}
            if profiling is not None:
                config["profiling"] = profiling
            self.set_env(DET_EXPERIMENT_CONFIG=config)
            with det.core.init() as ctx:
                self.assertFalse(ctx.profiler.is_on)
        self.assertEqual(got, [])

    def test_only_each_machines_first_worker_samples(self) -> None:
        dist = types.SimpleNamespace(local_rank=1)
        p = _profiler.ProfilerContext(None, "agent-1", 11, 2, dist)  # type: ignore[arg-type]
        p.on(sampling_interval=0.1, samples_per_report=1)
        self.assertFalse(p.is_on)

    def test_bad_arguments_are_refused(self) -> None:
        with det.core.init() as ctx:
            with self.assertRaisesRegex(ValueError, "Sampling interval"):
                ctx.profiler.on(sampling_interval=0.01)
            with self.assertRaisesRegex(ValueError, "samples_per_report"):
                ctx.profiler.on(samples_per_report=0)
            self.assertFalse(ctx.profiler.is_on)

    def test_a_master_that_refuses_reports_does_not_stop_training(self) -> None:
        refused = threading.Event()

        def handler(req: Request) -> Tuple[int, Any]:
            refused.set()
            return 400, {"error": {"code": "invalid", "message": "no"}}

        self.master.route("POST", r"/api/v1/trials/\d+/metrics", handler)
        with det.core.init() as ctx:
            ctx.profiler.on(sampling_interval=0.1, samples_per_report=1)
            self.assertTrue(refused.wait(30))
            ctx.profiler.off()


class OffClusterProfilerTest(unittest.TestCase):
    def test_off_cluster_the_profiler_does_nothing(self) -> None:
        from tests.helpers import clean_environ
        from unittest import mock

        with mock.patch.dict(os.environ, clean_environ(), clear=True):
            with det.core.init(checkpoint_storage=tempfile.mkdtemp()) as ctx:
                ctx.profiler.on()
                ctx.profiler.off()
                self.assertIsInstance(ctx.profiler, det.core.DummyProfilerContext)
