"""Trials, as Determined's SDK gives them."""

import enum
import json
import warnings
from typing import Any, Dict, Iterable, List, Optional, Union

from determined.common.api import _session as api_session
from determined.common.experimental import _util, checkpoint, metrics


class TrialState(enum.Enum):
    """Where a trial is in its life."""

    ACTIVE = "STATE_ACTIVE"
    PAUSED = "STATE_PAUSED"
    STOPPING_CANCELED = "STATE_STOPPING_CANCELED"
    STOPPING_KILLED = "STATE_STOPPING_KILLED"
    STOPPING_COMPLETED = "STATE_STOPPING_COMPLETED"
    STOPPING_ERROR = "STATE_STOPPING_ERROR"
    CANCELED = "STATE_CANCELED"
    COMPLETED = "STATE_COMPLETED"
    ERROR = "STATE_ERROR"
    QUEUED = "STATE_QUEUED"
    PULLING = "STATE_PULLING"
    STARTING = "STATE_STARTING"
    RUNNING = "STATE_RUNNING"


class TrialSortBy(enum.Enum):
    """The field a list of trials is sorted on."""

    ID = "SORT_BY_ID"
    START_TIME = "SORT_BY_START_TIME"
    END_TIME = "SORT_BY_END_TIME"
    STATE = "SORT_BY_STATE"
    BEST_VALIDATION_METRIC = "SORT_BY_BEST_VALIDATION_METRIC"
    LATEST_VALIDATION_METRIC = "SORT_BY_LATEST_VALIDATION_METRIC"
    BATCHES_PROCESSED = "SORT_BY_BATCHES_PROCESSED"
    DURATION = "SORT_BY_DURATION"
    RESTARTS = "SORT_BY_RESTARTS"


TrialOrderBy = _util.OrderBy


class LogLevel(enum.Enum):
    """The least level of the log lines to return."""

    TRACE = "LOG_LEVEL_TRACE"
    DEBUG = "LOG_LEVEL_DEBUG"
    INFO = "LOG_LEVEL_INFO"
    WARNING = "LOG_LEVEL_WARNING"
    ERROR = "LOG_LEVEL_ERROR"
    CRITICAL = "LOG_LEVEL_CRITICAL"


class Trial:
    """A trial: ``id``, and (after ``reload``, or as listed) ``experiment_id``, ``hparams``,
    ``state`` (TrialState) and ``summary_metrics``."""

    def __init__(self, trial_id: int, session: api_session.Session) -> None:
        self.id = trial_id
        self._session = session
        self.experiment_id: Optional[int] = None
        self.hparams: Optional[Dict[str, Any]] = None
        self.summary_metrics: Optional[Dict[str, Any]] = None
        self.state: Optional[TrialState] = None
        self._raw: Dict[str, Any] = {}

    @classmethod
    def _from_json(cls, data: Dict[str, Any], session: api_session.Session) -> "Trial":
        t = cls(int(data.get("id") or 0), session)
        t._hydrate(data)
        return t

    def _hydrate(self, data: Dict[str, Any], latest: Optional[List[Dict[str, Any]]] = None) -> None:
        self._raw = data
        self.experiment_id = data.get("experimentId")
        hp = data.get("hparams")
        self.hparams = hp if isinstance(hp, dict) else {}
        try:
            self.state = TrialState(_util.state_name(data.get("state")))
        except ValueError:
            self.state = None
        if latest is not None:
            # Determined's shape ({"avg_metrics": {"loss": {"last": ..., "type": "number"}},
            # "validation_metrics": {...}}, other groups by name), from each group's latest
            # report: only "last" (not count/min/max/sum) is known without reading them all.
            names = {"training": "avg_metrics", "validation": "validation_metrics"}
            summary: Dict[str, Any] = {}
            for r in latest:
                group = str(r.get("group") or "")
                summary[names.get(group, group)] = {
                    k: {"last": v, "type": "number" if isinstance(v, (int, float)) else "string"}
                    for k, v in _util.avg_metrics(r.get("metrics")).items()
                }
            self.summary_metrics = summary

    def reload(self) -> None:
        """Read the trial again from the master."""
        r = self._session.get(f"/api/v1/trials/{self.id}").json() or {}
        self._hydrate(r.get("trial") or {}, r.get("latestMetrics") or [])

    def kill(self) -> None:
        self._session.post(f"/api/v1/trials/{self.id}/kill")

    def get_experiment(self) -> Any:
        """The trial's experiment."""
        from determined.common.experimental import experiment

        if not self.experiment_id:
            self.reload()
        return experiment.Experiment._get(int(self.experiment_id or 0), self._session)

    def _checkpoints(self) -> List[checkpoint.Checkpoint]:
        cache: Dict[int, Dict[str, Any]] = {}
        r = self._session.get(f"/api/v1/trials/{self.id}/checkpoints").json() or {}
        return [checkpoint.Checkpoint._from_json(c, self._session, cache)
                for c in r.get("checkpoints") or []]

    def list_checkpoints(
        self,
        sort_by: Optional[Union[str, checkpoint.CheckpointSortBy]] = None,
        order_by: Optional[_util.OrderBy] = None,
        max_results: Optional[int] = None,
    ) -> List[checkpoint.Checkpoint]:
        """The trial's completed checkpoints, by default best first by the experiment's
        searcher metric. sort_by and order_by go together, or neither is given."""
        if (sort_by is None) != (order_by is None):
            raise AssertionError("sort_by and order_by must be either both set, or neither.")
        return self._sorted_checkpoints(sort_by, order_by, max_results)

    def _sorted_checkpoints(
        self,
        sort_by: Optional[Union[str, checkpoint.CheckpointSortBy]],
        order_by: Optional[_util.OrderBy],
        max_results: Optional[int] = None,
    ) -> List[checkpoint.Checkpoint]:
        if sort_by is not None and not isinstance(sort_by, (checkpoint.CheckpointSortBy, str)):
            raise ValueError("sort_by must be of type CheckpointSortBy or str")
        cps = [c for c in self._checkpoints() if c.state == checkpoint.CheckpointState.COMPLETED]
        if not cps:
            return []
        assert cps[0].training is not None
        cps = checkpoint._sort(cps, sort_by, order_by, cps[0].training.experiment_config)
        return cps[:max_results] if max_results else cps

    def top_checkpoint(self, sort_by: Optional[str] = None,
                       smaller_is_better: Optional[bool] = None) -> checkpoint.Checkpoint:
        """The best checkpoint by sort_by (default the searcher's metric); deprecated in
        Determined for list_checkpoints(max_results=1)."""
        order_by = None
        if sort_by and smaller_is_better is not None:
            order_by = _util.OrderBy.ASC if smaller_is_better else _util.OrderBy.DESC
        cps = self._sorted_checkpoints(sort_by, order_by, max_results=1)
        if not cps:
            raise ValueError("No checkpoints found for criteria.")
        return cps[0]

    def select_checkpoint(self, latest: bool = False, best: bool = False,
                          uuid: Optional[str] = None, sort_by: Optional[str] = None,
                          smaller_is_better: Optional[bool] = None) -> checkpoint.Checkpoint:
        """Exactly one of latest, best or uuid (deprecated in Determined)."""
        if sum([int(latest), int(best), int(uuid is not None)]) != 1:
            raise AssertionError("Exactly one of latest, best, or uuid must be set")
        if uuid:
            r = self._session.get(f"/api/v1/checkpoints/{uuid}").json() or {}
            return checkpoint.Checkpoint._from_json(r.get("checkpoint") or {}, self._session)
        if latest:
            cps = self.list_checkpoints(checkpoint.CheckpointSortBy.BATCH_NUMBER, _util.OrderBy.DESC, 1)
            if not cps:
                raise ValueError("No checkpoints found for criteria.")
            return cps[0]
        return self.top_checkpoint(sort_by, smaller_is_better)

    def get_checkpoints(self, sort_by: Optional[Union[str, checkpoint.CheckpointSortBy]] = None,
                        order_by: Optional[_util.OrderBy] = None) -> List[checkpoint.Checkpoint]:
        """Deprecated in Determined: list_checkpoints."""
        return self.list_checkpoints(sort_by, order_by)

    def iter_metrics(self, group: str) -> Iterable[metrics.TrialMetrics]:
        """The trial's reports of a metric group ("training", "validation", or any group the
        trial reported with report_metrics), in step order."""
        return _trials_metrics(self._session, [self.id], group)

    def stream_metrics(self, group: str) -> Iterable[metrics.TrialMetrics]:
        """Deprecated in Determined: iter_metrics."""
        warnings.warn("Trial.stream_metrics is deprecated; use Trial.iter_metrics",
                      FutureWarning, stacklevel=2)
        return self.iter_metrics(group)

    def stream_training_metrics(self) -> Iterable[metrics.TrainingMetrics]:
        """Deprecated in Determined: iter_metrics("training")."""
        warnings.warn("Trial.stream_training_metrics is deprecated; use "
                      "Trial.iter_metrics('training')", FutureWarning, stacklevel=2)
        for m in _trials_metrics(self._session, [self.id], "training"):
            yield metrics.TrainingMetrics(**_fields(m))

    def stream_validation_metrics(self) -> Iterable[metrics.ValidationMetrics]:
        """Deprecated in Determined: iter_metrics("validation")."""
        warnings.warn("Trial.stream_validation_metrics is deprecated; use "
                      "Trial.iter_metrics('validation')", FutureWarning, stacklevel=2)
        for m in _trials_metrics(self._session, [self.id], "validation"):
            yield metrics.ValidationMetrics(**_fields(m))

    def iter_logs(self, follow: bool = False, *, head: Optional[int] = None,
                  tail: Optional[int] = None, min_level: Optional[LogLevel] = None,
                  timestamp_before: Optional[str] = None, timestamp_after: Optional[str] = None,
                  search_text: Optional[str] = None, rank_ids: Optional[List[int]] = None,
                  stdtypes: Optional[List[str]] = None,
                  container_ids: Optional[List[str]] = None,
                  sources: Optional[List[str]] = None) -> Iterable[str]:
        """The trial's log lines; with follow, until the trial ends. rank_ids and stdtypes
        ("stdout", "stderr") keep only those lines; container_ids and sources are accepted for
        Determined's signature and do not filter (a local trial has one container)."""
        if head is not None and head < 0:
            raise ValueError(f"head must be non-negative, got {head}")
        if tail is not None and tail < 0:
            raise ValueError(f"tail must be non-negative, got {tail}")
        params: Dict[str, Any] = {}
        if follow:
            params["follow"] = "true"
        if min_level is not None:
            params["level"] = min_level.value.replace("LOG_LEVEL_", "")
        if search_text:
            params["search"] = search_text
        if timestamp_before:
            params["timestamp_before"] = timestamp_before
        if timestamp_after:
            params["timestamp_after"] = timestamp_after
        resp = self._session.open("GET", f"/api/v1/trials/{self.id}/logs", params=params,
                                  timeout=None if follow else 120)
        lines: List[str] = []
        with resp:
            for raw in resp:
                if not raw.strip():
                    continue
                msg = json.loads(raw)
                if isinstance(msg, dict) and msg.get("error"):
                    err = msg["error"]
                    raise RuntimeError(err.get("message") if isinstance(err, dict) else str(err))
                entry = (msg or {}).get("result") or {}
                if rank_ids is not None and entry.get("rankId") not in rank_ids:
                    continue
                if stdtypes is not None and entry.get("stdtype") not in stdtypes:
                    continue
                line = entry.get("log", "")
                if tail is not None:
                    lines.append(line)
                    continue
                yield line
                if head is not None:
                    head -= 1
                    if head <= 0:
                        return
        if tail is not None:
            yield from (lines[-tail:] if tail else [])

    def logs(self, *args: Any, **kwargs: Any) -> Iterable[str]:
        """Deprecated in Determined: iter_logs."""
        warnings.warn("Trial.logs() is deprecated; use Trial.iter_logs()", FutureWarning,
                      stacklevel=2)
        return self.iter_logs(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Trial(id={self.id})"


def _fields(m: metrics.TrialMetrics) -> Dict[str, Any]:
    return {"trial_id": m.trial_id, "trial_run_id": m.trial_run_id,
            "total_batches": m.total_batches, "end_time": m.end_time, "metrics": m.metrics,
            "group": m.group, "batch_metrics": m.batch_metrics}


def _trials_metrics(session: api_session.Session, trial_ids: List[int],
                    group: str) -> Iterable[metrics.TrialMetrics]:
    for tid in trial_ids:
        r = session.get(f"/api/v1/trials/{tid}/metrics", params={"group": group}).json() or {}
        for report in r.get("metrics") or []:
            yield metrics.TrialMetrics._from_json(report, group)


class TrialReference(Trial):
    """Determined's older name of Trial."""
