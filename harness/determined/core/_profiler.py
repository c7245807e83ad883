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
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Tuple

from determined import _session
from determined.core._distributed import DistributedContext
from determined.core._sysinfo import GPUReader, ProcReader, disk_util

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
    context starts, or, with ``begin_on_batch`` and ``end_after_batch``, from the start of batch
    ``begin_on_batch`` to the end of batch ``end_after_batch`` (counted by
    ``report_training_metrics``'s ``steps_completed`` and by the Trial APIs after every batch);
    see :class:`ProfilingWindow` for ``sync_timings``. It is turned off when the context closes. Only the first worker of each
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
        self._window: Optional[ProfilingWindow] = None
        self._window_over = False

    @property
    def is_on(self) -> bool:
        return self._on

    def _follow(self, window: "ProfilingWindow") -> None:
        """Let the experiment config's ``profiling`` section drive the profiler: on while the
        batches completed are within ``window`` (from the start when ``begin_on_batch`` is 0)."""
        self._window = window
        self._window_over = False
        self._batches_completed(0)

    def _batches_completed(self, batches: int) -> None:
        """Told the batches completed so far (by ``report_training_metrics`` and by the Trial
        APIs after every batch): turns the profiler on when ``begin_on_batch`` is reached and off
        once ``end_after_batch`` is passed, never to come on again in this run."""
        window = getattr(self, "_window", None)
        if window is None or self._window_over:
            return
        want = window.wants(batches)
        if want and not self._on:
            window.sync(f"starting at batch {batches}")
            self.on()
        elif not want and self._on:
            window.sync(f"stopping after batch {batches - 1}")
            self.off()
        if window.end_after_batch is not None and batches > window.end_after_batch:
            self._window_over = True

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

    def _follow(self, window: "ProfilingWindow") -> None:
        pass

    def _batches_completed(self, batches: int) -> None:
        pass

    def _close(self) -> None:
        pass


def profiling_enabled(config: Dict[str, Any]) -> bool:
    """Whether the experiment config's ``profiling.enabled`` is true."""
    p = config.get("profiling") if isinstance(config, dict) else None
    return bool(isinstance(p, dict) and p.get("enabled"))


class ProfilingWindow:
    """
    The experiment config's ``profiling`` section: system metrics are collected while the
    batches completed ``n`` satisfy ``begin_on_batch <= n <= end_after_batch`` (no end when
    ``end_after_batch`` is unset), that is from the start of batch ``begin_on_batch`` to the end
    of batch ``end_after_batch``.

    ``sync_timings`` (Determined's default, true) makes the edges of the window wait for the work
    already queued on the GPU (``torch.cuda.synchronize()``, where the script imported torch and
    CUDA is available), so that the samples taken cover the GPU work of the window's batches
    rather than that of batches before it; false switches without waiting.
    """

    def __init__(
        self, begin_on_batch: int = 0, end_after_batch: Optional[int] = None,
        sync_timings: bool = True,
    ) -> None:
        self.begin_on_batch = int(begin_on_batch or 0)
        self.end_after_batch = None if end_after_batch is None else int(end_after_batch)
        self.sync_timings = bool(sync_timings)

    def wants(self, batches: int) -> bool:
        """Whether the profiler is on once ``batches`` batches are completed."""
        return self.begin_on_batch <= batches and (
            self.end_after_batch is None or batches <= self.end_after_batch
        )

    def sync(self, what: str) -> bool:
        """With ``sync_timings``, wait for the GPU's queued work; says whether it waited."""
        if not self.sync_timings:
            return False
        torch = sys.modules.get("torch")
        cuda = getattr(torch, "cuda", None)
        try:
            if cuda is None or not cuda.is_available():
                return False
            cuda.synchronize()
        except Exception as e:  # a broken CUDA must not stop training
            logger.warning(f"profiler: sync_timings: torch.cuda.synchronize() failed: {e}")
            return False
        logger.info(f"profiler: waited for the GPU's queued work before {what} (sync_timings)")
        return True


def profiling_window(config: Dict[str, Any]) -> Optional[ProfilingWindow]:
    """The experiment config's profiling window; None unless ``profiling.enabled``."""
    if not profiling_enabled(config):
        return None
    p = config["profiling"]
    sync = p.get("sync_timings")
    return ProfilingWindow(p.get("begin_on_batch") or 0, p.get("end_after_batch"),
                           True if sync is None else bool(sync))


__all__ = ["ProfilerContext", "DummyProfilerContext", "ProfilingWindow", "profiling_enabled",
           "profiling_window", "average"]
