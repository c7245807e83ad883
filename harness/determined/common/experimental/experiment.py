"""Experiments, as Determined's SDK gives them."""

import enum
import logging
import time
import warnings
from typing import Any, Dict, Iterable, List, Optional, Union

from determined.common.api import _session as api_session
from determined.common.experimental import _util, checkpoint, metrics, trial

logger = logging.getLogger("determined.client")


class ExperimentState(enum.Enum):
    """Where an experiment is in its life."""

    UNSPECIFIED = "STATE_UNSPECIFIED"
    ACTIVE = "STATE_ACTIVE"
    PAUSED = "STATE_PAUSED"
    STOPPING_COMPLETED = "STATE_STOPPING_COMPLETED"
    STOPPING_CANCELED = "STATE_STOPPING_CANCELED"
    STOPPING_ERROR = "STATE_STOPPING_ERROR"
    COMPLETED = "STATE_COMPLETED"
    CANCELED = "STATE_CANCELED"
    ERROR = "STATE_ERROR"
    DELETED = "STATE_DELETED"
    DELETING = "STATE_DELETING"
    DELETE_FAILED = "STATE_DELETE_FAILED"
    STOPPING_KILLED = "STATE_STOPPING_KILLED"
    QUEUED = "STATE_QUEUED"
    PULLING = "STATE_PULLING"
    STARTING = "STATE_STARTING"
    RUNNING = "STATE_RUNNING"


_TERMINAL = (ExperimentState.COMPLETED, ExperimentState.CANCELED, ExperimentState.DELETED,
             ExperimentState.ERROR)


class ExperimentSortBy(enum.Enum):
    """The field a list of experiments is sorted on."""

    ID = "SORT_BY_ID"
    DESCRIPTION = "SORT_BY_DESCRIPTION"
    NAME = "SORT_BY_NAME"
    START_TIME = "SORT_BY_START_TIME"
    END_TIME = "SORT_BY_END_TIME"
    STATE = "SORT_BY_STATE"
    NUM_TRIALS = "SORT_BY_NUM_TRIALS"
    PROGRESS = "SORT_BY_PROGRESS"
    USER = "SORT_BY_USER"
    RESOURCE_POOL = "SORT_BY_RESOURCE_POOL"
    PROJECT_ID = "SORT_BY_PROJECT_ID"


ExperimentOrderBy = _util.OrderBy

_SORT_KEYS = {
    ExperimentSortBy.ID: "id",
    ExperimentSortBy.DESCRIPTION: "description",
    ExperimentSortBy.NAME: "name",
    ExperimentSortBy.START_TIME: "startTime",
    ExperimentSortBy.END_TIME: "endTime",
    ExperimentSortBy.STATE: "state",
    ExperimentSortBy.NUM_TRIALS: "numTrials",
    ExperimentSortBy.PROGRESS: "progress",
    ExperimentSortBy.USER: "username",
    ExperimentSortBy.RESOURCE_POOL: "resourcePool",
    ExperimentSortBy.PROJECT_ID: "projectId",
}


class Experiment:
    """An experiment: ``id``, and (after ``reload``, or as listed) ``name``, ``description``,
    ``labels``, ``notes``, ``state`` (ExperimentState), ``config``, ``archived``, ``progress``,
    ``project_id``, ``workspace_id``, ``username``, ``start_time``, ``end_time``."""

    def __init__(self, experiment_id: int, session: api_session.Session) -> None:
        self._id = experiment_id
        self._session = session
        self.name: Optional[str] = None
        self.description: Optional[str] = None
        self.labels: Optional[List[str]] = None
        self.notes: Optional[str] = None
        self.state: Optional[ExperimentState] = None
        self.config: Optional[Dict[str, Any]] = None
        self.archived: Optional[bool] = None
        self.progress: Optional[float] = None
        self.project_id: Optional[int] = None
        self.workspace_id: Optional[int] = None
        self.username: Optional[str] = None
        self.start_time: Any = None
        self.end_time: Any = None
        self._raw: Dict[str, Any] = {}

    @property
    def id(self) -> int:
        return self._id

    @classmethod
    def _from_json(cls, data: Dict[str, Any], session: api_session.Session) -> "Experiment":
        e = cls(int(data.get("id") or 0), session)
        e._hydrate(data)
        return e

    @classmethod
    def _get(cls, experiment_id: int, session: api_session.Session) -> "Experiment":
        e = cls(experiment_id, session)
        e.reload()
        return e

    def _raw_sort(self, key: str) -> Any:
        v = self._raw.get(key)
        return (0, v) if v is not None else (1, 0)

    def _hydrate(self, data: Dict[str, Any]) -> None:
        self._raw = data
        self.name = data.get("name")
        self.description = data.get("description")
        self.labels = list(data.get("labels") or [])
        self.notes = data.get("notes")
        try:
            self.state = ExperimentState(_util.state_name(data.get("state")))
        except ValueError:
            self.state = ExperimentState.UNSPECIFIED
        cfg = data.get("config")
        self.config = cfg if isinstance(cfg, dict) else {}
        self.archived = bool(data.get("archived"))
        self.progress = data.get("progress")
        self.project_id = data.get("projectId")
        self.workspace_id = data.get("workspaceId")
        self.username = data.get("username")
        self.start_time = _util.parse_time(data.get("startTime"))
        self.end_time = _util.parse_time(data.get("endTime"))

    def _fetch(self) -> Dict[str, Any]:
        r = self._session.get(f"/api/v1/experiments/{self._id}").json() or {}
        return r.get("experiment") or {}

    def reload(self) -> None:
        """Read the experiment again from the master."""
        self._hydrate(self._fetch())

    def _post(self, action: str) -> None:
        self._session.post(f"/api/v1/experiments/{self._id}/{action}")

    def activate(self) -> None:
        self._post("activate")

    def pause(self) -> None:
        self._post("pause")

    def cancel(self) -> None:
        self._post("cancel")

    def kill(self) -> None:
        self._post("kill")

    def archive(self) -> None:
        self._post("archive")

    def unarchive(self) -> None:
        self._post("unarchive")

    def delete(self) -> None:
        """Delete the experiment and its checkpoints."""
        self._session.delete(f"/api/v1/experiments/{self._id}")

    def _patch(self, body: Dict[str, Any]) -> None:
        r = self._session.patch(f"/api/v1/experiments/{self._id}", json=body).json() or {}
        if r.get("experiment"):
            self._hydrate(r["experiment"])

    def set_name(self, name: str) -> None:
        self._patch({"name": name})

    def set_description(self, description: str) -> None:
        self._patch({"description": description})

    def add_label(self, label: str) -> None:
        labels = list(self._fetch().get("labels") or [])
        if label not in labels:
            self._patch({"labels": labels + [label]})

    def remove_label(self, label: str) -> None:
        labels = list(self._fetch().get("labels") or [])
        if label in labels:
            self._patch({"labels": [x for x in labels if x != label]})

    def move_to_project(self, workspace_name: str = "", project_name: str = "", *,
                        project_id: Optional[int] = None) -> None:
        """Move the experiment to another project (by id, or by workspace and project name)."""
        if project_id is None:
            ws = self._session.get("/api/v1/workspaces").json() or {}
            match = [w for w in ws.get("workspaces") or [] if w.get("name") == workspace_name]
            if not match:
                raise ValueError(f"no workspace named {workspace_name!r}")
            ps = self._session.get(f"/api/v1/workspaces/{match[0]['id']}/projects").json() or {}
            proj = [p for p in ps.get("projects") or [] if p.get("name") == project_name]
            if not proj:
                raise ValueError(f"no project named {project_name!r} in {workspace_name!r}")
            project_id = int(proj[0]["id"])
        self._session.post(f"/api/v1/experiments/{self._id}/move",
                           json={"destinationProjectId": project_id})

    def get_config(self) -> Dict[str, Any]:
        """The experiment's expanded config (deprecated in Determined: the config attribute)."""
        return self._fetch().get("config") or {}

    def list_trials(self, sort_by: Optional[trial.TrialSortBy] = None,
                    order_by: Optional[_util.OrderBy] = None,
                    limit: Optional[int] = None) -> List[trial.Trial]:
        """The experiment's trials, by id unless sort_by says otherwise."""
        r = self._session.get(f"/api/v1/experiments/{self._id}/trials").json() or {}
        trials = [trial.Trial._from_json(t, self._session) for t in r.get("trials") or []]
        key = {
            trial.TrialSortBy.START_TIME: lambda t: t._raw.get("startTime") or "",
            trial.TrialSortBy.END_TIME: lambda t: t._raw.get("endTime") or "",
            trial.TrialSortBy.STATE: lambda t: t._raw.get("state") or "",
            trial.TrialSortBy.BEST_VALIDATION_METRIC: lambda t: _num(t._raw.get("bestValidation")),
            trial.TrialSortBy.BATCHES_PROCESSED: lambda t: t._raw.get("totalBatchesProcessed") or 0,
            trial.TrialSortBy.RESTARTS: lambda t: t._raw.get("restarts") or 0,
        }.get(sort_by or trial.TrialSortBy.ID, lambda t: t.id)
        trials.sort(key=key, reverse=order_by == _util.OrderBy.DESC)
        return trials[:limit] if limit else trials

    def get_trials(self, sort_by: trial.TrialSortBy = trial.TrialSortBy.ID,
                   order_by: _util.OrderBy = _util.OrderBy.ASC) -> List[trial.Trial]:
        """Deprecated in Determined: list_trials."""
        return self.list_trials(sort_by, order_by)

    def iter_trials(self, sort_by: Optional[trial.TrialSortBy] = None,
                    order_by: Optional[_util.OrderBy] = None) -> Iterable[trial.Trial]:
        yield from self.list_trials(sort_by, order_by)

    def await_first_trial(self, interval: float = 0.1) -> trial.Trial:
        """Wait until the experiment has a trial, and return it."""
        while True:
            trials = self.list_trials()
            if trials:
                return trials[0]
            time.sleep(interval)

    def wait(self, interval: float = 5.0) -> ExperimentState:
        """Wait until the experiment ends (COMPLETED, CANCELED, ERROR or DELETED) and return
        that state. Raises ValueError when the experiment is paused: nothing would end it."""
        started = time.monotonic()
        last_note = started
        while True:
            self.reload()
            assert self.state is not None
            if self.state in _TERMINAL:
                return self.state
            if self.state == ExperimentState.PAUSED:
                raise ValueError(
                    f"Experiment {self._id} is in paused state. Make sure the experiment is active."
                )
            time.sleep(interval)
            if time.monotonic() - last_note >= 60:
                last_note = time.monotonic()
                logger.info(f"Waiting for Experiment {self._id} to complete. Elapsed "
                            f"{(last_note - started) / 60:.1f} minutes")

    def _checkpoints(self) -> List[checkpoint.Checkpoint]:
        cache: Dict[int, Dict[str, Any]] = {}
        r = self._session.get(f"/api/v1/experiments/{self._id}/checkpoints").json() or {}
        return [checkpoint.Checkpoint._from_json(c, self._session, cache)
                for c in r.get("checkpoints") or []]

    def list_checkpoints(
        self,
        sort_by: Optional[Union[str, checkpoint.CheckpointSortBy]] = None,
        order_by: Optional[_util.OrderBy] = None,
        max_results: Optional[int] = None,
    ) -> List[checkpoint.Checkpoint]:
        """The experiment's completed checkpoints, by default best first by the searcher's
        metric. sort_by and order_by go together, or neither is given."""
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
        cps = checkpoint._sort(cps, sort_by, order_by, self.config or self.get_config())
        return cps[:max_results] if max_results else cps

    def top_n_checkpoints(self, limit: int, sort_by: Optional[str] = None,
                          smaller_is_better: Optional[bool] = None) -> List[checkpoint.Checkpoint]:
        """The best checkpoint of each of the best `limit` trials (deprecated in Determined)."""
        order_by = None
        if sort_by and smaller_is_better is not None:
            order_by = _util.OrderBy.ASC if smaller_is_better else _util.OrderBy.DESC
        seen, out = set(), []
        for c in self._sorted_checkpoints(sort_by, order_by):
            tid = c.training.trial_id if c.training else None
            if tid not in seen:
                seen.add(tid)
                out.append(c)
        if not out:
            raise AssertionError(f"No checkpoint found for experiment {self._id}")
        return out[:limit]

    def top_checkpoint(self, sort_by: Optional[str] = None,
                       smaller_is_better: Optional[bool] = None) -> checkpoint.Checkpoint:
        """The experiment's best checkpoint, by sort_by (default the searcher's metric)."""
        return self.top_n_checkpoints(1, sort_by, smaller_is_better)[0]

    def iter_metrics(self, group: str) -> Iterable[metrics.TrialMetrics]:
        """Every trial's reports of a metric group, trial by trial."""
        return trial._trials_metrics(self._session, [t.id for t in self.list_trials()], group)

    def __repr__(self) -> str:
        return f"Experiment(id={self._id})"


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) else float("inf")


class ExperimentReference(Experiment):
    """Determined's older name of Experiment."""
