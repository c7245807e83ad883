import logging
import os
import pathlib
import signal
import sys
import threading
import traceback
import types
from typing import Any, Dict, Optional, Union

import determined as det
from determined import _session
from determined.core import _storage, _tensorboard
from determined.core._checkpoint import CheckpointContext, DummyCheckpointContext
from determined.core._distributed import DistributedContext, DummyDistributedContext
from determined.core._preempt import DummyPreemptContext, PreemptContext, PreemptMode
from determined.core._profiler import (
    DummyProfilerContext,
    ProfilerContext,
    ProfilingWindow,
    profiling_window,
)
from determined.core._searcher import (
    DummySearcherContext,
    SearcherContext,
    SearcherContextMissing,
    _parse_searcher_max_length,
    _parse_searcher_units,
)
from determined.core._train import DummyTrainContext, EarlyExitReason, TensorboardMode, TrainContext

logger = logging.getLogger("determined.core")


class Context:
    """
    ``core.Context`` groups the Core API components:

    - ``.checkpoint``, a :class:`CheckpointContext`
    - ``.distributed``, a :class:`DistributedContext`
    - ``.preempt``, a :class:`PreemptContext`
    - ``.profiler``, a :class:`ProfilerContext`
    - ``.searcher``, a :class:`SearcherContext`
    - ``.train``, a :class:`TrainContext`

    Always create it with ``with det.core.init() as core_context:``.
    """

    def __init__(
        self,
        checkpoint: CheckpointContext,
        distributed: Optional[DistributedContext] = None,
        preempt: Optional[PreemptContext] = None,
        train: Optional[TrainContext] = None,
        searcher: Optional[SearcherContext] = None,
        info: Optional["det.ClusterInfo"] = None,
        _session: Optional["_session.Session"] = None,
        profiler: Optional[ProfilerContext] = None,
        _profiling: Optional[ProfilingWindow] = None,
    ) -> None:
        self.checkpoint = checkpoint
        self.distributed = distributed or DummyDistributedContext()
        self.preempt = preempt or DummyPreemptContext(self.distributed)
        self.train = train or DummyTrainContext()
        self.searcher = searcher or DummySearcherContext(self.distributed)
        self.profiler = profiler or DummyProfilerContext()
        self._profiling = _profiling
        # Reports of training metrics tell the profiler how many batches are done.
        self.train._on_steps_completed = self.profiler._batches_completed
        self.info = info
        self._session = _session
        self._started = False
        self._closed = False

    def start(self) -> None:
        if self._started:
            return
        self._started = True
        self.preempt.start()
        self.train._start()
        if self._profiling is not None:
            # The experiment config's profiling section: Determined turns the profiler on for its
            # Trial APIs; here it is on for every trial that asks, Core API scripts included,
            # within begin_on_batch and end_after_batch.
            self.profiler._follow(self._profiling)

    def __enter__(self) -> "Context":
        self.start()
        return self

    def close(
        self,
        exc_type: Optional[type] = None,
        exc_val: Optional[BaseException] = None,
        exc_tb: Optional[types.TracebackType] = None,
    ) -> None:
        if self._closed:
            return
        self._closed = True
        self.profiler._close()
        self.preempt.close()
        try:
            # Flush queued metrics; a shipping error surfaces here unless another exception is
            # already propagating.
            self.train._close()
        except Exception:
            if exc_val is None:
                raise
            logger.exception("failed to flush metrics while handling another exception")
        finally:
            self.distributed.close()

    def __exit__(
        self,
        exc_type: Optional[type],
        exc_val: Optional[BaseException],
        exc_tb: Optional[types.TracebackType],
    ) -> None:
        self.close(exc_type, exc_val, exc_tb)
        if isinstance(exc_val, det.InvalidHP):
            self.train.report_early_exit(EarlyExitReason.INVALID_HP)
            logger.info("InvalidHP detected during Trial init, converting InvalidHP to exit(0)")
            sys.exit(0)


def _install_stacktrace_on_sigusr1() -> None:
    """On SIGUSR1, print every thread's stack to stderr (useful for hung jobs)."""
    if not hasattr(signal, "SIGUSR1"):
        return
    if threading.current_thread() is not threading.main_thread():
        return
    old_handler: Any = None

    def handler(signum: Any, frame: Any) -> None:
        traceback.print_stack(frame, file=sys.stderr)
        if callable(old_handler):
            old_handler(signum, frame)

    try:
        old_handler = signal.signal(signal.SIGUSR1, handler)
    except (ValueError, OSError):
        pass


def _storage_from_arg(
    checkpoint_storage: Optional[Union[str, Dict[str, Any]]]
) -> Optional["_storage.StorageManager"]:
    if checkpoint_storage is None:
        return None
    if isinstance(checkpoint_storage, (str, os.PathLike)):
        return _storage.from_string(os.fspath(checkpoint_storage))
    if isinstance(checkpoint_storage, dict):
        if checkpoint_storage.get("type") == "shared_fs":
            raise ValueError(
                "Cannot configure a shared_fs checkpoint storage with a dictionary. "
                "Use a string or a configuration file."
            )
        return _storage.build(checkpoint_storage)
    raise TypeError("checkpoint_storage must be a string, dictionary, or None")


def _dummy_init(
    *,
    distributed: Optional[DistributedContext] = None,
    checkpoint_storage: Optional[Union[str, Dict[str, Any]]] = None,
    tensorboard_path: Optional[pathlib.Path] = None,
    preempt_mode: PreemptMode = PreemptMode.WorkersAskChief,
) -> Context:
    """A core.Context for running off-cluster: metrics are logged, checkpoints go to a local
    directory, preemption never happens."""
    distributed = distributed or DummyDistributedContext()
    preempt = DummyPreemptContext(distributed, preempt_mode)
    storage_manager = _storage_from_arg(checkpoint_storage)
    if storage_manager is None:
        base = _storage.default_local_base()
        logger.info(f"no storage_manager provided; storing checkpoints in {base}")
        storage_manager = _storage.SharedFSStorageManager(base)
    checkpoint = DummyCheckpointContext(distributed, storage_manager)
    train = DummyTrainContext(tensorboard_path)
    searcher = DummySearcherContext(distributed)
    _install_stacktrace_on_sigusr1()
    return Context(
        checkpoint=checkpoint,
        distributed=distributed,
        preempt=preempt,
        train=train,
        searcher=searcher,
    )


def _shortcut_to_config(s: str) -> Dict[str, Any]:
    for scheme, kind, key in (("s3://", "s3", "bucket"), ("gs://", "gcs", "bucket")):
        if s.startswith(scheme):
            bucket, _, prefix = s[len(scheme):].partition("/")
            out: Dict[str, Any] = {"type": kind, key: bucket}
            if prefix:
                out["prefix"] = prefix
            return out
    return {"type": "directory", "container_path": os.path.abspath(s)}


def _run_prepare(
    session: _session.Session,
    trial_id: int,
    checkpoint_storage: Optional[Union[str, Dict[str, Any]]],
) -> Optional[int]:
    """``POST /api/v1/runs/start``: tells the master the run is about to report, and which
    checkpoint storage it uses; the answer's ``storageId`` is attached to checkpoint reports.
    A master without this endpoint (404/405/501) is tolerated."""
    cs = None
    if isinstance(checkpoint_storage, str):
        cs = _shortcut_to_config(checkpoint_storage)
    elif isinstance(checkpoint_storage, dict):
        cs = checkpoint_storage
    body: Dict[str, Any] = {"runId": trial_id}
    if cs is not None:
        body["checkpointStorage"] = cs
    try:
        r = session.post("/api/v1/runs/start", json=body).json() or {}
    except _session.APIException as e:
        if e.status in (404, 405, 501):
            logger.debug(f"master has no /api/v1/runs/start ({e.status}); continuing")
            return None
        raise
    sid = r.get("storageId")
    return int(sid) if sid is not None else None


def init(
    *,
    distributed: Optional[DistributedContext] = None,
    checkpoint_storage: Optional[Union[str, Dict[str, Any]]] = None,
    preempt_mode: PreemptMode = PreemptMode.WorkersAskChief,
    tensorboard_mode: TensorboardMode = TensorboardMode.AUTO,
) -> Context:
    """
    Build a :class:`Context` for the Core API. Always use it as
    ``with det.core.init() as core_context:``.

    Arguments:
        distributed: required for multi-slot tasks; defaults to a single-process context.
        checkpoint_storage: a directory path to store checkpoints in instead of the experiment's
            checkpoint storage, or ``s3://bucket/prefix`` / ``gs://bucket/prefix``, or a
            ``checkpoint_storage`` dictionary.
        preempt_mode: the calling pattern of ``core_context.preempt.should_preempt()``.
        tensorboard_mode: AUTO (default) or MANUAL.
    """
    info = det.get_cluster_info()
    if info is None:
        return _dummy_init(
            distributed=distributed,
            checkpoint_storage=checkpoint_storage,
            preempt_mode=preempt_mode,
        )

    session = _session.Session(info.master_url, info.session_token)

    if distributed is None:
        if len(info.container_addrs) > 1 or len(info.slot_ids) > 1:
            raise ValueError("you must provide a valid DistributedContext for a multi-slot task")
    distributed = distributed or DummyDistributedContext()

    storage_manager = _storage_from_arg(checkpoint_storage)

    if info.task_type != "TRIAL":
        if storage_manager is None:
            base = _storage.default_local_base()
            logger.info(f"no storage_manager provided; storing checkpoints in {base}")
            storage_manager = _storage.SharedFSStorageManager(base)
        _install_stacktrace_on_sigusr1()
        return Context(
            checkpoint=DummyCheckpointContext(distributed, storage_manager),
            distributed=distributed,
            preempt=DummyPreemptContext(distributed, preempt_mode),
            info=info,
            _session=session,
        )

    trial = info.trial
    config = trial._config or {}
    storage_config = config.get("checkpoint_storage")
    if storage_manager is None:
        if not storage_config:
            raise ValueError("the experiment config has no checkpoint_storage")
        storage_manager = _storage.build(storage_config)

    uploader = None
    if storage_manager.direct_access:
        tensorboard_path = (
            storage_manager.base_path
            / (info.cluster_id or "cluster")
            / "tensorboard"
            / "experiment"
            / str(trial.experiment_id)
            / "trial"
            / str(trial.trial_id)
        )
    else:
        # A bucket: fail now, naming the bucket and the cause, rather than at the first
        # checkpoint; TensorBoard files are written locally and uploaded.
        storage_manager.check_access()
        uploader = _tensorboard.for_trial(
            storage_manager, info.cluster_id or "cluster", trial.experiment_id, trial.trial_id,
            info.allocation_id, distributed.rank,
        )
        tensorboard_path = uploader.local_dir
    train = TrainContext(
        session,
        trial.trial_id,
        trial._trial_run_id,
        trial.experiment_id,
        distributed,
        tensorboard_mode,
        tensorboard_path,
        uploader,
    )

    max_length = _parse_searcher_max_length(config)
    searcher: SearcherContext
    if max_length is None:
        searcher = SearcherContextMissing()
    else:
        searcher = SearcherContext(
            session, distributed, trial.trial_id, max_length, _parse_searcher_units(config)
        )

    storage_used = checkpoint_storage if checkpoint_storage is not None else storage_config
    storage_id = None
    if distributed.rank == 0:
        storage_id = _run_prepare(session, trial.trial_id, storage_used)

    checkpoint = CheckpointContext(
        distributed,
        storage_manager,
        session,
        info.task_id,
        info.allocation_id,
        storage_id,
        tensorboard_sync=train._sync_tensorboard_auto,
    )
    preempt = PreemptContext(session, info.allocation_id, distributed, preempt_mode)
    profiler = ProfilerContext(
        session, info.agent_id, trial.trial_id, trial._trial_run_id, distributed, info.gpu_uuids
    )

    _install_stacktrace_on_sigusr1()
    return Context(
        checkpoint=checkpoint,
        distributed=distributed,
        preempt=preempt,
        train=train,
        searcher=searcher,
        info=info,
        _session=session,
        profiler=profiler,
        _profiling=profiling_window(config),
    )
