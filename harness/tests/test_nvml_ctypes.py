"""The profiler reads GPUs through the driver's NVML with ctypes when pynvml is not installed."""
import os
import sys
import tempfile
import unittest
from typing import Any, List, Tuple
from unittest import mock

from determined.core import _sysinfo


class FakeNVML:
    """Stands in for libnvidia-ml.so.1: each call fills what its pointers point at, as NVML
    does, and returns NVML_SUCCESS (0) unless told otherwise."""

    def __init__(self, gpus: List[Tuple[str, int, int]], init_ret: int = 0) -> None:
        self.gpus = gpus  # (uuid, utilization %, free bytes)
        self.init_ret = init_ret

    def nvmlInit_v2(self) -> int:
        return self.init_ret

    def nvmlDeviceGetCount_v2(self, n: Any) -> int:
        n._obj.value = len(self.gpus)
        return 0

    def nvmlDeviceGetHandleByIndex_v2(self, i: Any, h: Any) -> int:
        h._obj.value = i.value + 1  # a handle is an opaque non-null pointer
        return 0

    def nvmlDeviceGetUUID(self, h: Any, buf: Any, n: Any) -> int:
        buf.value = self.gpus[h.value - 1][0].encode()
        return 0

    def nvmlDeviceGetUtilizationRates(self, h: Any, u: Any) -> int:
        u._obj.gpu = self.gpus[h.value - 1][1]
        return 0

    def nvmlDeviceGetMemoryInfo(self, h: Any, m: Any) -> int:
        m._obj.free = self.gpus[h.value - 1][2]
        m._obj.total = 80 << 30
        return 0


class CtypesNVMLTest(unittest.TestCase):
    def setUp(self) -> None:
        empty = tempfile.mkdtemp(prefix="no-smi-")
        self.addCleanup(__import__("shutil").rmtree, empty, True)
        # No pynvml and no nvidia-smi: NVML through ctypes, or nothing.
        for p in (mock.patch.dict(sys.modules, {"pynvml": None, "torch": None}),
                  mock.patch.dict(os.environ, {"PATH": empty})):
            p.start()
            self.addCleanup(p.stop)

    def test_the_drivers_library_gives_each_gpus_utilization_and_free_memory(self) -> None:
        lib = FakeNVML([("GPU-aaa", 87, 1 << 30), ("GPU-bbb", 3, 2 << 30)])
        with mock.patch.object(_sysinfo.ctypes, "CDLL", return_value=lib) as cdll:
            reader = _sysinfo.GPUReader()
            mine = _sysinfo.GPUReader(["GPU-bbb"])
        cdll.assert_called_with("libnvidia-ml.so.1")
        self.assertEqual(reader.source, "nvml")
        self.assertEqual(reader.sample(), {"GPU-aaa": {"gpu_util": 87.0, "gpu_free_memory": float(1 << 30)},
                                           "GPU-bbb": {"gpu_util": 3.0, "gpu_free_memory": float(2 << 30)}})
        self.assertEqual(list(mine.sample()), ["GPU-bbb"])

    def test_no_driver_means_no_gpu_source(self) -> None:
        with mock.patch.object(_sysinfo, "NVML_LIBRARY", os.path.join(tempfile.gettempdir(), "no-such-libnvidia-ml.so.1")):
            reader = _sysinfo.GPUReader()
        self.assertEqual((reader.source, reader.sample()), ("", {}))

    def test_a_driver_that_fails_to_initialize_is_not_used(self) -> None:
        with mock.patch.object(_sysinfo.ctypes, "CDLL", return_value=FakeNVML([("GPU-a", 1, 1)], init_ret=9)), \
                self.assertLogs("determined.core", "INFO") as logs:
            reader = _sysinfo.GPUReader()
        self.assertEqual((reader.source, reader.sample()), ("", {}))
        self.assertIn("nvmlInit_v2 returned 9", "\n".join(logs.output))


if __name__ == "__main__":
    unittest.main()
