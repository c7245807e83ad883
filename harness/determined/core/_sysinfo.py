"""The machine's counters and GPUs, as the profiler (``_profiler``) samples them: ``/proc`` and
``/sys`` read with the standard library, GPUs through NVML (pynvml, or the driver's
``libnvidia-ml.so.1`` through ctypes), ``nvidia-smi`` or an imported ``torch.cuda``."""

import ctypes
import logging
import os
import shutil
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

logger = logging.getLogger("determined.core")

Sample = Dict[str, Any]


class ProcReader:
    """Reads the machine's counters from a /proc (``proc``) and /sys (``sys``) tree; tests give
    it trees of their own."""

    def __init__(self, proc: str = "/proc", sys: str = "/sys") -> None:
        self.proc = proc
        self.sys = sys

    def _lines(self, name: str) -> List[str]:
        with open(os.path.join(self.proc, name)) as f:
            return f.read().splitlines()

    def cpu_times(self) -> Tuple[float, float]:
        """(busy, total) jiffies of all CPUs since boot, from the first line of /proc/stat."""
        for line in self._lines("stat"):
            if line.startswith("cpu "):
                v = [float(x) for x in line.split()[1:]]
                # user nice system idle iowait irq softirq steal [guest guest_nice]: guest time
                # is already counted in user and nice.
                v = v[:8]
                idle = v[3] + (v[4] if len(v) > 4 else 0.0)
                return sum(v) - idle, sum(v)
        raise ValueError("no cpu line in /proc/stat")

    def memory_available(self) -> float:
        """Bytes available for new work (MemAvailable, else MemFree)."""
        fields = {}
        for line in self._lines("meminfo"):
            k, _, rest = line.partition(":")
            parts = rest.split()
            if parts:
                fields[k] = float(parts[0]) * (1024 if len(parts) > 1 and parts[1] == "kB" else 1)
        return fields.get("MemAvailable", fields.get("MemFree", 0.0))

    def _whole_disks(self) -> Optional[set]:
        try:
            names = set(os.listdir(os.path.join(self.sys, "block")))
        except OSError:
            return None
        return {n for n in names if not n.startswith(("loop", "ram", "zram"))}

    def disk_counters(self) -> Tuple[float, float, float]:
        """(bytes read, bytes written, reads + writes) of the whole disks since boot, from
        /proc/diskstats (partitions left out so nothing counts twice)."""
        disks = self._whole_disks()
        read = written = ops = 0.0
        for line in self._lines("diskstats"):
            f = line.split()
            if len(f) < 10:
                continue
            if disks is not None and f[2] not in disks:
                continue
            ops += float(f[3]) + float(f[7])
            read += float(f[5]) * 512
            written += float(f[9]) * 512
        return read, written, ops

    def net_counters(self) -> Tuple[float, float]:
        """(bytes sent, bytes received) of every interface since boot, from /proc/net/dev."""
        sent = recv = 0.0
        for line in self._lines(os.path.join("net", "dev"))[2:]:
            _, sep, rest = line.partition(":")
            f = rest.split()
            if not sep or len(f) < 9:
                continue
            recv += float(f[0])
            sent += float(f[8])
        return sent, recv


def disk_util(path: str) -> float:
    """Percent of the filesystem at ``path`` in use, as ``df`` counts it."""
    st = os.statvfs(path)
    used = (st.f_blocks - st.f_bfree) * st.f_frsize
    avail = st.f_bavail * st.f_frsize
    return 100.0 * used / (used + avail) if used + avail else 0.0


class GPUReader:
    """Samples GPUs through pynvml when it imports, else ``nvidia-smi`` on PATH, else, when the
    training code has imported torch, ``torch.cuda`` (free memory only, by device); ``uuids``,
    when given, keeps only the task's own GPUs."""

    def __init__(self, uuids: Optional[List[str]] = None, nvidia_smi: Optional[str] = None) -> None:
        self._uuids = set(uuids or [])
        self._nvml: Any = None
        self._handles: Dict[str, Any] = {}
        self._smi = nvidia_smi
        if nvidia_smi is None:
            self._init_nvml()
            if self._nvml is None:
                self._smi = shutil.which("nvidia-smi")
        nvml = "pynvml" if not isinstance(self._nvml, CtypesNVML) else "nvml"
        self.source = nvml if self._nvml is not None else ("nvidia-smi" if self._smi else "")
        if not self.source and self._torch_cuda() is not None:
            self.source = "torch.cuda"

    @staticmethod
    def _torch_cuda() -> Any:
        # Only a torch the training code already imported: importing it here would cost seconds
        # and memory in every profiled task.
        torch = sys.modules.get("torch")
        cuda = getattr(torch, "cuda", None)
        try:
            return cuda if cuda is not None and cuda.is_available() else None
        except Exception:
            return None

    def _init_nvml(self) -> None:
        try:
            import pynvml  # type: ignore
        except Exception:
            try:
                pynvml = CtypesNVML()
            except OSError:
                return  # no NVIDIA driver here
        try:
            pynvml.nvmlInit()
            for i in range(pynvml.nvmlDeviceGetCount()):
                h = pynvml.nvmlDeviceGetHandleByIndex(i)
                uuid = pynvml.nvmlDeviceGetUUID(h)
                uuid = uuid.decode() if isinstance(uuid, bytes) else uuid
                if self._uuids and uuid not in self._uuids:
                    continue
                pynvml.nvmlDeviceGetUtilizationRates(h)
                pynvml.nvmlDeviceGetMemoryInfo(h)
                self._handles[uuid] = h
            self._nvml = pynvml
        except Exception as e:
            logger.info(f"NVML is not usable ({e}); GPU metrics come from nvidia-smi if present")
            self._handles = {}

    def sample(self) -> Sample:
        if self._nvml is not None:
            out: Sample = {}
            for uuid, h in self._handles.items():
                out[uuid] = {
                    "gpu_util": float(self._nvml.nvmlDeviceGetUtilizationRates(h).gpu),
                    "gpu_free_memory": float(self._nvml.nvmlDeviceGetMemoryInfo(h).free),
                }
            return out
        if not self._smi:
            return self._sample_torch()
        res = subprocess.run(
            [self._smi, "--query-gpu=uuid,utilization.gpu,memory.free",
             "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=10, check=True,
        )
        out = {}
        for line in res.stdout.splitlines():
            f = [x.strip() for x in line.split(",")]
            if len(f) != 3 or (self._uuids and f[0] not in self._uuids):
                continue
            try:
                out[f[0]] = {"gpu_util": float(f[1]), "gpu_free_memory": float(f[2]) * 2**20}
            except ValueError:
                continue  # "[N/A]" on GPUs that do not report
        return out


    def _sample_torch(self) -> Sample:
        cuda = self._torch_cuda() if self.source == "torch.cuda" else None
        if cuda is None:
            return {}
        out: Sample = {}
        for i in range(cuda.device_count()):
            uuid = str(getattr(cuda.get_device_properties(i), "uuid", "") or f"cuda:{i}")
            if uuid.startswith("GPU-") or uuid.startswith("cuda:"):
                name = uuid
            else:
                name = "GPU-" + uuid
            if self._uuids and name not in self._uuids:
                continue
            free, _ = cuda.mem_get_info(i)
            out[name] = {"gpu_free_memory": float(free)}
        return out


#: The NVIDIA driver's NVML library, as the master's local resource manager loads it too.
NVML_LIBRARY = "libnvidia-ml.so.1"


class _Utilization(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class _Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


class NVMLError(Exception):
    """An NVML call that did not return NVML_SUCCESS."""


class CtypesNVML:
    """The few NVML calls the profiler makes, in pynvml's names, straight from the driver's
    library through ctypes: GPUs are read without pynvml or nvidia-smi installed. Loading fails
    with OSError where there is no driver; ``lib`` lets tests stand in for it."""

    def __init__(self, lib: Any = None) -> None:
        self._lib = lib if lib is not None else ctypes.CDLL(NVML_LIBRARY)

    def _call(self, name: str, *args: Any) -> None:
        ret = getattr(self._lib, name)(*args)
        if ret != 0:
            raise NVMLError(f"{name} returned {ret}")

    def nvmlInit(self) -> None:
        self._call("nvmlInit_v2")

    def nvmlDeviceGetCount(self) -> int:
        n = ctypes.c_uint()
        self._call("nvmlDeviceGetCount_v2", ctypes.byref(n))
        return n.value

    def nvmlDeviceGetHandleByIndex(self, i: int) -> Any:
        h = ctypes.c_void_p()
        self._call("nvmlDeviceGetHandleByIndex_v2", ctypes.c_uint(i), ctypes.byref(h))
        return h

    def nvmlDeviceGetUUID(self, h: Any) -> str:
        buf = ctypes.create_string_buffer(96)
        self._call("nvmlDeviceGetUUID", h, buf, ctypes.c_uint(len(buf)))
        return buf.value.decode()

    def nvmlDeviceGetUtilizationRates(self, h: Any) -> _Utilization:
        u = _Utilization()
        self._call("nvmlDeviceGetUtilizationRates", h, ctypes.byref(u))
        return u

    def nvmlDeviceGetMemoryInfo(self, h: Any) -> _Memory:
        m = _Memory()
        self._call("nvmlDeviceGetMemoryInfo", h, ctypes.byref(m))
        return m
