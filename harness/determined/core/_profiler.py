"""``core_context.profiler``: system metrics of the machine a trial runs on, sampled in the
background and reported to the master, as Determined 0.38's profiler does.

Every ``sampling_interval`` seconds one sample is taken of each group; every
``samples_per_report`` samples each group's average is posted to
``POST /api/v1/trials/{id}/metrics`` with the group's name (``cpu``, ``memory``, ``disk``,
``network``, ``gpu``) and the metrics keyed by the agent id, as Determined's harness posts them
(so the master can tell them from training metrics, and a Determined client can read them back):

- cpu: ``cpu_util_simple`` (percent of all CPUs busy);
- memory: ``memory_free`` (GB available);
- disk: ``disk_iops``, ``disk_throughput_read``, ``disk_throughput_write`` (bytes/s) and, per
  mount point, ``{"/": {"disk_util": percent used}}``;
- network: ``net_throughput_sent``, ``net_throughput_recv`` (bytes/s);
- gpu (when there are GPUs): ``{uuid: {"gpu_util": percent, "gpu_free_memory": bytes}}``.

CPU, memory, disk and network are read from ``/proc`` with the standard library; GPUs through
``pynvml`` when it imports, else ``nvidia-smi`` when it is on PATH, else (free memory only)
``torch.cuda`` when the training code imported torch, else not at all. Nothing here
may stop training: a sample or a report that fails is logged and skipped.
"""

import logging
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Tuple

from determined import _session
from determined.core._distributed import DistributedContext

logger = logging.getLogger("determined.core")

Sample = Dict[str, Any]

#: The groups reported, in the order they are sampled.
GROUPS = ("cpu", "memory", "disk", "network", "gpu")

#: Mount points whose use is reported: the root and upstream's shared_fs mount in containers.
DISK_PATHS = ("/", "/determined_shared_fs")


def average(samples: List[Sample]) -> Sample:
    """Average samples key by key, one level of nesting deep (a GPU's or a mount's metrics). A
    key missing from some samples is averaged over the samples that have it."""
    sums: Dict[str, Any] = {}
    counts: Dict[str, Any] = {}
    for s in samples:
        for k, v in s.items():
            if isinstance(v, dict):
                inner_s = sums.setdefault(k, {})
                inner_c = counts.setdefault(k, {})
                for k1, v1 in v.items():
                    inner_s[k1] = inner_s.get(k1, 0.0) + float(v1)
                    inner_c[k1] = inner_c.get(k1, 0) + 1
            else:
                sums[k] = sums.get(k, 0.0) + float(v)
                counts[k] = counts.get(k, 0) + 1
    out: Sample = {}
    for k, v in sums.items():
        if isinstance(v, dict):
            out[k] = {k1: v1 / counts[k][k1] for k1, v1 in v.items()}
        else:
            out[k] = v / counts[k]
    return out


class _Rate:
    """Turns a counter read now and then into a rate per second since the previous read."""

    def __init__(self, read: Callable[[], Tuple[float, ...]], clock: Callable[[], float]) -> None:
        self._read = read
        self._clock = clock
        self._last_t = clock()
        self._last: Optional[Tuple[float, ...]] = None
        try:
            self._last = read()
        except Exception as e:  # e.g. no /proc/diskstats in this container: the group is skipped
            logger.debug(f"profiler: cannot read counters: {e}")

    def rates(self) -> Tuple[float, ...]:
        t, now = self._clock(), self._read()
        if self._last is None:
            self._last_t, self._last = t, now
            raise ValueError("no earlier reading to take a rate from")
        dt = max(t - self._last_t, 1e-6)
        out = tuple(max(b - a, 0.0) / dt for a, b in zip(self._last, now))
        self._last_t, self._last = t, now
        return out


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
        self.source = "pynvml" if self._nvml is not None else ("nvidia-smi" if self._smi else "")
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
            return
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


class Sampler:
    """Takes one sample of every group; rates are since the previous sample."""

    def __init__(
        self,
        proc: Optional[ProcReader] = None,
        gpus: Optional[GPUReader] = None,
        disk_paths: Tuple[str, ...] = DISK_PATHS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._proc = proc or ProcReader()
        self._gpus = gpus
        self._paths = [p for p in disk_paths if os.path.isdir(p)]
        self._cpu = _Rate(self._proc.cpu_times, clock)
        self._disk = _Rate(self._proc.disk_counters, clock)
        self._net = _Rate(self._proc.net_counters, clock)

    def sample(self) -> Dict[str, Sample]:
        out: Dict[str, Sample] = {}
        for group, take in (("cpu", self._sample_cpu), ("memory", self._sample_memory),
                            ("disk", self._sample_disk), ("network", self._sample_network),
                            ("gpu", self._sample_gpu)):
            try:
                s = take()
            except Exception as e:
                logger.debug(f"profiler: cannot sample {group}: {e}")
                continue
            if s:
                out[group] = s
        return out

    def _sample_cpu(self) -> Sample:
        busy, total = self._cpu.rates()
        return {"cpu_util_simple": 100.0 * busy / total if total else 0.0}

    def _sample_memory(self) -> Sample:
        return {"memory_free": self._proc.memory_available() / 1e9}

    def _sample_disk(self) -> Sample:
        read, written, ops = self._disk.rates()
        s: Sample = {"disk_iops": ops, "disk_throughput_read": read,
                     "disk_throughput_write": written}
        for p in self._paths:
            s[p] = {"disk_util": disk_util(p)}
        return s

    def _sample_network(self) -> Sample:
        sent, recv = self._net.rates()
        return {"net_throughput_sent": sent, "net_throughput_recv": recv}

    def _sample_gpu(self) -> Sample:
        return self._gpus.sample() if self._gpus is not None else {}


class _Collector(threading.Thread):
    """Samples every interval; every ``per_report`` samples (and once more when stopped) puts each
    group's average on the queue as (group, metrics, time), then None when it ends."""

    def __init__(self, sampler: Sampler, interval: float, per_report: int,
                 out: "queue.Queue[Optional[Tuple[str, Sample, datetime]]]") -> None:
        super().__init__(daemon=True, name="ProfilerCollectorThread")
        self._sampler = sampler
        self._interval = interval
        self._per_report = per_report
        self._out = out
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()

    def run(self) -> None:
        pending: Dict[str, List[Sample]] = {}
        taken = 0
        try:
            while True:
                due = time.monotonic() + self._interval
                stopping = self._stop_event.wait(max(due - time.monotonic(), 0))
                if not stopping:
                    for group, s in self._sampler.sample().items():
                        pending.setdefault(group, []).append(s)
                    taken += 1
                if taken >= self._per_report or (stopping and taken):
                    now = datetime.now(timezone.utc)
                    for group in GROUPS:
                        if pending.get(group):
                            self._out.put((group, average(pending[group]), now))
                    pending, taken = {}, 0
                if stopping:
                    return
        except Exception:
            logger.exception("profiler: sampling stopped")
        finally:
            self._out.put(None)


class _Shipper(threading.Thread):
    """Posts what the collector queues, one report per group, until it gets None."""

    def __init__(self, session: _session.Session, trial_id: int, run_id: int, agent_id: str,
                 q: "queue.Queue[Optional[Tuple[str, Sample, datetime]]]") -> None:
        super().__init__(daemon=True, name="ProfilerShipperThread")
        self._session = session
        self._trial_id = trial_id
        self._run_id = run_id
        self._agent_id = agent_id
        self._queue = q
        self._warned = False

    def run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            group, metrics, at = item
            body = {
                "metrics": {
                    "trial_id": self._trial_id,
                    "trial_run_id": self._run_id,
                    "report_time": at.isoformat(),
                    "metrics": {"avg_metrics": {self._agent_id: metrics}},
                },
                "group": group,
            }
            try:
                # Few retries: a sample that cannot be sent is worth less than a prompt exit.
                self._session.request("POST", f"/api/v1/trials/{self._trial_id}/metrics",
                                      json_body=body, max_retries=2)
            except Exception as e:
                if not self._warned:
                    logger.warning(f"profiler: cannot report system metrics: {e}")
                    self._warned = True


class ProfilerContext:
    """
    ``core_context.profiler`` samples the machine's system metrics (CPU, memory, disk, network
    and GPUs) in background threads and reports them to the master, which shows them on the
    trial's page:

    .. code:: python

        with det.core.init() as core_context:
            core_context.profiler.on()
            ...
            core_context.profiler.off()

    With ``profiling: {enabled: true}`` in the experiment config it is turned on for you when the
    context starts. It is turned off when the context closes. Only the first worker of each
    machine (``local_rank`` 0) samples, since the metrics are the machine's.
    """

    def __init__(
        self,
        session: _session.Session,
        agent_id: str,
        trial_id: int,
        run_id: int,
        distributed: DistributedContext,
        gpu_uuids: Optional[List[str]] = None,
        sampler_factory: Optional[Callable[[], Sampler]] = None,
    ) -> None:
        self._session = session
        self._agent_id = agent_id or "agent"
        self._trial_id = trial_id
        self._run_id = run_id
        self._distributed = distributed
        self._gpu_uuids = gpu_uuids
        self._sampler_factory = sampler_factory
        self._on = False
        self._collector: Optional[_Collector] = None
        self._shipper: Optional[_Shipper] = None

    @property
    def is_on(self) -> bool:
        return self._on

    def on(self, sampling_interval: float = 1, samples_per_report: int = 10) -> None:
        """
        Turn system profiling on: a sample every ``sampling_interval`` seconds (at least 0.1),
        reported as the average of every ``samples_per_report`` samples. Calling it while on
        does nothing.
        """
        if self._on:
            return
        if sampling_interval < 0.1:
            raise ValueError(f"Sampling interval must be > 0.1, got {sampling_interval}.")
        if not isinstance(samples_per_report, int) or samples_per_report < 1:
            raise ValueError(
                "samples_per_report is the number of samples averaged into one report; it must "
                f"be an int >= 1, got {samples_per_report!r}."
            )
        if self._distributed.local_rank != 0:
            return  # the machine's metrics: its first worker reports them
        logger.info("Starting system metrics profiling.")
        if self._sampler_factory is not None:
            sampler = self._sampler_factory()
        else:
            sampler = Sampler(gpus=GPUReader(self._gpu_uuids))
        q: "queue.Queue[Optional[Tuple[str, Sample, datetime]]]" = queue.Queue()
        self._collector = _Collector(sampler, float(sampling_interval), samples_per_report, q)
        self._shipper = _Shipper(self._session, self._trial_id, self._run_id, self._agent_id, q)
        self._collector.start()
        self._shipper.start()
        self._on = True

    def off(self) -> None:
        """Turn system profiling off, reporting the samples taken since the last report. Calling
        it while off does nothing."""
        if not self._on:
            return
        logger.info("Stopping system metrics profiling.")
        self._close()

    def _close(self) -> None:
        collector, shipper = self._collector, self._shipper
        self._collector = self._shipper = None
        self._on = False
        if collector is not None:
            collector.stop()
            collector.join(timeout=30)
        if shipper is not None:
            shipper.join(timeout=30)
            if shipper.is_alive():
                logger.warning("profiler: gave up waiting for the last system metrics report")


class DummyProfilerContext(ProfilerContext):
    """Off-cluster (or outside a trial): profiling does nothing."""

    def __init__(self) -> None:
        self._on = False

    def on(self, sampling_interval: float = 1, samples_per_report: int = 10) -> None:
        pass

    def off(self) -> None:
        pass

    def _close(self) -> None:
        pass


def profiling_enabled(config: Dict[str, Any]) -> bool:
    """Whether the experiment config's ``profiling.enabled`` is true."""
    p = config.get("profiling") if isinstance(config, dict) else None
    return bool(isinstance(p, dict) and p.get("enabled"))


__all__ = ["ProfilerContext", "DummyProfilerContext", "profiling_enabled", "average"]
