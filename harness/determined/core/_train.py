import enum
import logging
import pathlib
import queue
import tempfile
import threading
from typing import Any, Callable, Dict, List, Optional, Set

from determined import _session
from determined.core import _storage, _tensorboard
from determined.core._distributed import DistributedContext

logger = logging.getLogger("determined.core")

TRAINING = "training"
VALIDATION = "validation"


class TensorboardMode(enum.Enum):
    """
    ``AUTO`` (default): the harness keeps TensorBoard files in checkpoint storage for you.
    ``MANUAL``: you write files under ``get_tensorboard_path()`` and call
    ``upload_tensorboard_files()``.
    """

    AUTO = "AUTO"
    MANUAL = "MANUAL"


class EarlyExitReason(enum.Enum):
    INVALID_HP = "EXITED_REASON_INVALID_HP"
    # This is generally unnecessary; just exit early.
    USER_REQUESTED_STOP = "EXITED_REASON_USER_REQUESTED_STOP"


class _MetricsShipper(threading.Thread):
    """Ships queued metric reports to the master in order, one POST each, from a background
    thread. An error is kept and raised to the user on the next report or on close."""

    QUEUE_MAX = 1000

    def __init__(self, session: _session.Session, trial_id: int, run_id: int) -> None:
        super().__init__(daemon=True, name="MetricsShipperThread")
        self._session = session
        self._trial_id = trial_id
        self._run_id = run_id
        self._queue: "queue.Queue[Optional[Dict[str, Any]]]" = queue.Queue(self.QUEUE_MAX)
        self._error: Optional[BaseException] = None
        self._running = False
        self._closed = False
        self._lock = threading.Lock()

    def ensure_started(self) -> None:
        with self._lock:
            if not self._running:
                self._running = True
                self.start()

    def publish(
        self,
        group: str,
        steps_completed: int,
        metrics: Dict[str, Any],
        batch_metrics: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        self.raise_error()
        if self._closed:
            raise RuntimeError("cannot report metrics after the core.Context has been closed")
        self.ensure_started()
        inner: Dict[str, Any] = {
            "trial_id": self._trial_id,
            "trial_run_id": self._run_id,
            "steps_completed": steps_completed,
            "metrics": {"avg_metrics": metrics},
        }
        if batch_metrics is not None:
            inner["metrics"]["batch_metrics"] = batch_metrics
        # Serialize now so later mutation of the user's dicts cannot change what is sent.
        body = _session._sanitize({"metrics": inner, "group": group})
        self._queue.put(body)

    def raise_error(self) -> None:
        err = self._error
        if err is not None:
            self._error = None
            logger.error(f"Error reporting metrics: {err}")
            raise err

    def run(self) -> None:
        while True:
            body = self._queue.get()
            if body is None:
                return
            if self._error is not None:
                continue  # drop the rest once shipping has failed
            try:
                self._session.post(f"/api/v1/trials/{self._trial_id}/metrics", json=body)
            except BaseException as e:  # noqa: B902
                self._error = e

    def close(self) -> None:
        """Flush every queued report, then stop; raises a shipping error if one happened."""
        if self._closed:
            return
        self._closed = True
        if self._running:
            self._queue.put(None)
            while self.is_alive():
                self.join(timeout=10)
                if self.is_alive():
                    logger.info("Waiting for the metrics shipper to finish reporting metrics...")
        self.raise_error()


class TrainContext:
    """
    ``TrainContext`` reports training and validation metrics, progress and status to the master
    during trial tasks.
    """

    def __init__(
        self,
        session: _session.Session,
        trial_id: int,
        run_id: int,
        exp_id: int,
        distributed: DistributedContext,
        tensorboard_mode: TensorboardMode,
        tensorboard_path: Optional[pathlib.Path],
        tensorboard_uploader: Optional[_tensorboard.TensorboardUploader] = None,
    ) -> None:
        self._session = session
        self._trial_id = trial_id
        self._run_id = run_id
        self._exp_id = exp_id
        self._distributed = distributed
        self._tensorboard_mode = TensorboardMode(tensorboard_mode)
        self._tensorboard_path = tensorboard_path
        # Set when checkpoint storage is a bucket: TensorBoard files are written locally and
        # uploaded (after each report in AUTO mode).
        self._tensorboard_uploader = tensorboard_uploader
        self._shipper = _MetricsShipper(session, trial_id, run_id)
        # Set by core.Context: told steps_completed of every training report (the profiler's
        # begin_on_batch and end_after_batch count them).
        self._on_steps_completed: Optional[Callable[[int], None]] = None

    def _start(self) -> None:
        self._shipper.ensure_started()

    def _close(self) -> None:
        self._shipper.close()

    def set_status(self, status: str) -> None:
        """Report a short string the WebUI shows to say what the trial is working on."""
        logger.debug(f"set_status({status})")
        self._session.post(
            f"/api/v1/trials/{self._trial_id}/runner/metadata", json={"state": status}
        )

    def _get_last_validation(self) -> Optional[int]:
        r = self._session.get(f"/api/v1/trials/{self._trial_id}").json() or {}
        val = (r.get("trial") or {}).get("latestValidation") or {}
        out = val.get("totalBatches")
        return int(out) if out is not None else None

    def _report_trial_metrics(
        self,
        group: str,
        steps_completed: int,
        metrics: Dict[str, Any],
        batch_metrics: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        if group == VALIDATION:
            keep = _serializable_metrics(metrics)
            metrics = {k: metrics[k] for k in metrics if k in keep}
        self._shipper.publish(group, steps_completed, metrics, batch_metrics)
        self._sync_tensorboard_auto()

    def _sync_tensorboard_auto(self) -> None:
        """In AUTO mode, upload the TensorBoard files that changed (bucket storage only)."""
        if self._tensorboard_mode == TensorboardMode.AUTO and self._tensorboard_uploader:
            self._tensorboard_uploader.sync_quietly()

    def report_training_metrics(
        self,
        steps_completed: int,
        metrics: Dict[str, Any],
        batch_metrics: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        """
        Report training metrics (averages in ``metrics``; optionally per-batch values in
        ``batch_metrics``) at ``steps_completed``. Reports are shipped by a background thread
        and flushed when the core.Context closes.
        """
        logger.info(
            f"report_training_metrics(steps_completed={steps_completed}, metrics={metrics})"
        )
        self._report_trial_metrics(TRAINING, steps_completed, metrics, batch_metrics)
        on_steps = getattr(self, "_on_steps_completed", None)
        if on_steps is not None:
            on_steps(int(steps_completed))

    def report_validation_metrics(self, steps_completed: int, metrics: Dict[str, Any]) -> None:
        """Report validation metrics; the searcher reads ``searcher.metric`` from these."""
        logger.info(
            f"report_validation_metrics(steps_completed={steps_completed}, metrics={metrics})"
        )
        self._report_trial_metrics(VALIDATION, steps_completed, metrics)

    def report_metrics(self, group: str, steps_completed: int, metrics: Dict[str, Any]) -> None:
        """
        Report metrics of any ``group`` ("training" and "validation" are the built-in series).
        The group name must not contain ``.``.
        """
        _check_group(group)
        logger.info(
            f"report_metrics(group={group}, steps_completed={steps_completed}, metrics={metrics})"
        )
        self._report_trial_metrics(group, steps_completed, metrics)

    def report_progress(self, progress: float) -> None:
        """Report training progress as a fraction in [0, 1], shown in the WebUI."""
        progress = float(progress)
        if progress < 0 or progress > 1:
            raise ValueError(f"progress must be between 0 and 1, got {progress}")
        logger.debug(f"report_progress({progress})")
        self._session.post(
            f"/api/v1/trials/{self._trial_id}/progress",
            json={"progress": progress, "is_raw": True},
        )

    def report_early_exit(self, reason: EarlyExitReason) -> None:
        """
        Report an early exit reason; ``EarlyExitReason.INVALID_HP`` is reported automatically
        when ``det.InvalidHP`` escapes ``with core.init() as core_context:``.
        """
        body = {"reason": EarlyExitReason(reason).value}
        logger.info(f"report_early_exit({reason})")
        try:
            self._session.post(f"/api/v1/trials/{self._trial_id}/early_exit", json=body)
        except _session.APIException as e:
            if e.status != 400:
                raise
            logger.warning("early exit has already been reported for this trial, ignoring")

    def get_experiment_best_validation(self) -> Optional[float]:
        """The best ``searcher.metric`` value reported so far in the whole experiment, or None
        when there is none yet."""
        logger.debug("get_experiment_best_validation()")
        try:
            r = self._session.get(
                f"/api/v1/experiments/{self._exp_id}/searcher/best_searcher_validation_metric"
            )
        except _session.NotFoundException:
            return None
        body = r.json() or {}
        if body.get("metric") is None:
            return None
        return float(body["metric"])

    def get_tensorboard_path(self) -> pathlib.Path:
        """The directory to write TensorBoard event files to."""
        if self._tensorboard_path is None:
            raise ValueError("no TensorBoard path is available for this task")
        if self._tensorboard_uploader is not None:
            self._tensorboard_path.mkdir(parents=True, exist_ok=True)
            return self._tensorboard_path
        # <base>/<cluster>/tensorboard/experiment is every user's; <id>/trial/<id> below it the
        # experiment owner's.
        _storage.makedirs_shared(self._tensorboard_path.parents[2])
        self._tensorboard_path.mkdir(parents=True, exist_ok=True)
        return self._tensorboard_path

    def upload_tensorboard_files(
        self,
        selector: Callable[[pathlib.Path], bool] = lambda _: True,
        mangler: Callable[[pathlib.Path, int], pathlib.Path] = lambda p, __: p,
    ) -> None:
        """
        MANUAL mode only: upload the files under ``get_tensorboard_path()`` that are new or
        changed and that ``selector(path)`` picks, each to the name ``mangler(relative_path,
        rank)`` in the trial's TensorBoard directory of checkpoint storage. With shared_fs or
        directory storage the TensorBoard path already lies in checkpoint storage, so there is
        nothing to copy.
        """
        if self._tensorboard_mode == TensorboardMode.AUTO:
            raise RuntimeError("upload_tensorboard_files can only be used in MANUAL mode")
        if self._tensorboard_uploader is not None:
            self._tensorboard_uploader.sync(selector, mangler, self._distributed.rank)

    # Run metadata, as upstream's (0.38): set_metadata replaces the run's (the trial's)
    # metadata with the object and returns what the master stored; get_metadata returns it,
    # {} when none was set.
    def set_metadata(self, metadata: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        r = self._session.post(
            f"/api/v1/runs/{self._trial_id}/metadata",
            json={"runId": self._trial_id, "metadata": metadata},
        ).json() or {}
        return r.get("metadata")

    def get_metadata(self) -> Optional[Dict[str, Any]]:
        r = self._session.get(f"/api/v1/runs/{self._trial_id}/metadata").json() or {}
        return r.get("metadata")


class DummyTrainContext(TrainContext):
    """Off-cluster TrainContext: metrics are logged, nothing is sent."""

    def __init__(self, tensorboard_path: Optional[pathlib.Path] = None) -> None:
        self._tensorboard_path = tensorboard_path
        self._tensorboard_mode = TensorboardMode.AUTO

    def _start(self) -> None:
        pass

    def _close(self) -> None:
        pass

    def set_status(self, status: str) -> None:
        logger.info(f"status: {status}")

    def _get_last_validation(self) -> Optional[int]:
        return None

    def _report_trial_metrics(
        self,
        group: str,
        steps_completed: int,
        metrics: Dict[str, Any],
        batch_metrics: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        if group == VALIDATION:
            keep = _serializable_metrics(metrics)
            metrics = {k: metrics[k] for k in metrics if k in keep}
        logger.debug(
            f"_report_trial_metrics(group={group}, steps_completed={steps_completed}, "
            f"metrics={metrics}, batch_metrics={batch_metrics})"
        )

    def report_progress(self, progress: float) -> None:
        logger.info(f"report_progress({progress})")

    def report_early_exit(self, reason: EarlyExitReason) -> None:
        logger.info(f"report_early_exit({reason})")

    def get_experiment_best_validation(self) -> Optional[float]:
        return None

    def get_tensorboard_path(self) -> pathlib.Path:
        if self._tensorboard_path is None:
            self._tensorboard_path = pathlib.Path(tempfile.mkdtemp(prefix="tensorboard-"))
        self._tensorboard_path.mkdir(parents=True, exist_ok=True)
        return self._tensorboard_path

    def upload_tensorboard_files(
        self,
        selector: Callable[[pathlib.Path], bool] = lambda _: True,
        mangler: Callable[[pathlib.Path, int], pathlib.Path] = lambda p, __: p,
    ) -> None:
        logger.info("upload_tensorboard_files()")

    def set_metadata(self, metadata: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        logger.info(f"set_metadata({metadata})")
        return metadata

    def get_metadata(self) -> Optional[Dict[str, Any]]:
        return None


def _check_group(group: str) -> None:
    if not isinstance(group, str) or not group:
        raise ValueError("metrics group must be a non-empty string")
    if "." in group:
        raise ValueError(f"metrics group {group!r} must not contain '.'")


def _serializable_metrics(metrics: Dict[str, Any]) -> Set[str]:
    keep: Set[str] = set()
    dropped = []
    for name, value in metrics.items():
        if value is None:
            raise RuntimeError(f"Validation metric '{name}' returned an invalid scalar value: None")
        if isinstance(value, (bytes, bytearray)):
            dropped.append(name)
        else:
            keep.add(name)
    if dropped:
        logger.warning("Removed non serializable metrics: %s", ", ".join(sorted(dropped)))
    return keep
