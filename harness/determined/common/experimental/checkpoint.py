"""Checkpoints, as Determined's SDK gives them: what a trial saved, and its files to download."""

import enum
import json
import os
import pathlib
import shutil
import tarfile
from typing import Any, Callable, Dict, List, Optional

from determined.common.api import _session as api_session
from determined.common.api import errors
from determined.common.experimental import _util


class CheckpointState(enum.Enum):
    """Where a checkpoint is in its life."""

    UNSPECIFIED = "STATE_UNSPECIFIED"
    ACTIVE = "STATE_ACTIVE"
    COMPLETED = "STATE_COMPLETED"
    ERROR = "STATE_ERROR"
    DELETED = "STATE_DELETED"
    PARTIALLY_DELETED = "STATE_PARTIALLY_DELETED"


class CheckpointSortBy(enum.Enum):
    """The field a list of checkpoints is sorted on (or give a validation metric's name)."""

    UUID = "SORT_BY_UUID"
    TRIAL_ID = "SORT_BY_TRIAL_ID"
    BATCH_NUMBER = "SORT_BY_BATCH_NUMBER"
    END_TIME = "SORT_BY_END_TIME"
    STATE = "SORT_BY_STATE"
    SEARCHER_METRIC = "SORT_BY_SEARCHER_METRIC"


CheckpointOrderBy = _util.OrderBy


class DownloadMode(enum.Enum):
    """How Checkpoint.download reads the files: MASTER through the master's download route
    (works wherever the master is reachable), DIRECT from checkpoint storage mounted on this
    machine, AUTO as MASTER."""

    DIRECT = "direct"
    MASTER = "master"
    AUTO = "auto"


def _experiment_config(session: api_session.Session, experiment_id: int,
                       cache: Optional[Dict[int, Dict[str, Any]]] = None) -> Dict[str, Any]:
    if cache is not None and experiment_id in cache:
        return cache[experiment_id]
    exp = (session.get(f"/api/v1/experiments/{experiment_id}").json() or {}).get("experiment") or {}
    config = exp.get("config") or {}
    if cache is not None:
        cache[experiment_id] = config
    return config


class CheckpointTrainingMetadata:
    """What the trial that saved a checkpoint knew: its experiment, trial, hyperparameters and
    the validation metrics reported at the same step. The experiment's config and the trial's
    hyperparameters are fetched when first read."""

    def __init__(self, session: api_session.Session, experiment_id: int, trial_id: int,
                 validation: Dict[str, Any], config_cache: Optional[Dict[int, Dict[str, Any]]] = None):
        self._session = session
        self.experiment_id = experiment_id
        self.trial_id = trial_id
        avg = _util.avg_metrics(validation)
        self.validation_metrics: Dict[str, Any] = {"avgMetrics": avg, "batchMetrics": []}
        self.training_metrics: Dict[str, Any] = {}
        self._config: Optional[Dict[str, Any]] = None
        self._config_cache = config_cache
        self._hparams: Optional[Dict[str, Any]] = None

    @property
    def experiment_config(self) -> Dict[str, Any]:
        if self._config is None:
            self._config = _experiment_config(self._session, self.experiment_id, self._config_cache)
        return self._config

    @property
    def hparams(self) -> Dict[str, Any]:
        if self._hparams is None:
            t = (self._session.get(f"/api/v1/trials/{self.trial_id}").json() or {}).get("trial") or {}
            self._hparams = t.get("hparams") or {}
        return self._hparams

    @property
    def searcher_metric(self) -> Optional[float]:
        name = (self.experiment_config.get("searcher") or {}).get("metric")
        value = self.validation_metrics["avgMetrics"].get(name) if name else None
        return value if isinstance(value, (int, float)) else None


class Checkpoint:
    """A checkpoint: ``uuid``, ``state`` (CheckpointState), ``metadata`` (what the trial wrote
    with it), ``resources`` (file name → size), ``report_time``, ``task_id``, ``allocation_id``,
    ``training`` (CheckpointTrainingMetadata) and ``steps_completed``."""

    def __init__(self, session: api_session.Session, uuid: str) -> None:
        self._session = session
        self.uuid = uuid
        self.task_id: Optional[str] = None
        self.allocation_id: Optional[str] = None
        self.report_time: Any = None
        self.resources: Dict[str, int] = {}
        self.metadata: Dict[str, Any] = {}
        self.state: CheckpointState = CheckpointState.UNSPECIFIED
        self.training: Optional[CheckpointTrainingMetadata] = None
        self.steps_completed: int = 0
        self.size: int = 0

    @classmethod
    def _from_json(cls, data: Dict[str, Any], session: api_session.Session,
                   config_cache: Optional[Dict[int, Dict[str, Any]]] = None) -> "Checkpoint":
        c = cls(session, str(data.get("uuid") or ""))
        c._hydrate(data, config_cache)
        return c

    def _hydrate(self, data: Dict[str, Any],
                 config_cache: Optional[Dict[int, Dict[str, Any]]] = None) -> None:
        self.task_id = data.get("taskId")
        self.allocation_id = data.get("allocationId")
        self.report_time = _util.parse_time(data.get("reportTime"))
        self.resources = dict(data.get("resources") or {})
        md = data.get("metadata")
        self.metadata = dict(md) if isinstance(md, dict) else {}
        try:
            self.state = CheckpointState(_util.state_name(data.get("state")))
        except ValueError:
            self.state = CheckpointState.UNSPECIFIED
        self.steps_completed = int(data.get("stepsCompleted") or 0)
        self.size = int(data.get("size") or 0)
        val = data.get("validationMetrics")
        self.training = CheckpointTrainingMetadata(
            self._session, int(data.get("experimentId") or 0), int(data.get("trialId") or 0),
            val if isinstance(val, dict) else {}, config_cache,
        )

    def reload(self) -> None:
        """Read the checkpoint again from the master."""
        data = (self._session.get(f"/api/v1/checkpoints/{self.uuid}").json() or {}).get("checkpoint")
        self._hydrate(data or {})

    def download(
        self,
        path: Optional[str] = None,
        mode: DownloadMode = DownloadMode.AUTO,
        selector: Optional[Callable[[str], bool]] = None,
    ) -> str:
        """Download the checkpoint's files to ``path`` (default ``checkpoints/<uuid>``) and
        write its metadata beside them as metadata.json; returns the path. A directory that
        already has metadata.json is taken as downloaded. ``selector`` keeps only the files whose
        relative path it accepts."""
        local = pathlib.Path(path) if path is not None else pathlib.Path("checkpoints", self.uuid)
        if local.joinpath("metadata.json").exists():
            return str(local)
        if not isinstance(mode, DownloadMode):
            raise ValueError(f"mode must be a DownloadMode, not {mode!r}")
        local.mkdir(parents=True, exist_ok=True)
        if mode == DownloadMode.DIRECT:
            self._download_direct(local, selector)
        else:
            self._download_via_master(local, selector)
        self.write_metadata_file(str(local.joinpath("metadata.json")))
        return str(local)

    def _download_via_master(self, dst: pathlib.Path,
                             selector: Optional[Callable[[str], bool]]) -> None:
        resp = self._session.open("GET", f"/api/v1/checkpoints/{self.uuid}/download", timeout=600)
        with resp:
            with tarfile.open(fileobj=resp, mode="r|*") as tar:
                for member in tar:
                    _extract(tar, member, dst, selector)

    def _download_direct(self, dst: pathlib.Path,
                         selector: Optional[Callable[[str], bool]]) -> None:
        from determined.core import _storage

        assert self.training is not None
        storage = self.training.experiment_config.get("checkpoint_storage") or {}
        # The master masks storage secrets as "********": without them, the storage's own
        # credentials on this machine (the environment, ~/.aws, an instance role) are used.
        storage = {k: v for k, v in storage.items() if v != "********"}
        manager = _storage.build(storage)
        if not manager.direct_access:
            # A bucket: this machine reads it with the experiment's keys, or its own.
            manager.download(self.uuid, dst, selector)
            return
        src = pathlib.Path(manager.base_path) / self.uuid
        if not src.is_dir():
            raise FileNotFoundError(
                f"checkpoint {self.uuid} is not in {manager.base_path} on this machine; "
                "download it with mode=DownloadMode.MASTER"
            )
        for root, _, files in os.walk(src):
            for name in files:
                rel = os.path.relpath(os.path.join(root, name), src).replace(os.sep, "/")
                if selector is not None and not selector(rel):
                    continue
                target = dst.joinpath(rel)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(os.path.join(root, name), target)

    def write_metadata_file(self, path: str) -> None:
        """Write the checkpoint's metadata as JSON to path."""
        with open(path, "w") as f:
            json.dump(self.metadata, f, indent=2)

    def get_metadata(self) -> Dict[str, Any]:
        return dict(self.metadata)

    def __repr__(self) -> str:
        return f"Checkpoint(uuid={self.uuid})"


def _extract(tar: tarfile.TarFile, member: tarfile.TarInfo, dst: pathlib.Path,
             selector: Optional[Callable[[str], bool]]) -> None:
    """Write one entry of the master's tar under dst: only files and directories, only inside
    dst (a name that would leave it is refused)."""
    name = member.name.replace("\\", "/")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts:
        return
    if any(p == ".." for p in parts) or name.startswith("/"):
        raise errors.BadResponseException(
            f"the checkpoint's archive has an entry outside its directory: {member.name!r}"
        )
    rel = "/".join(parts)
    target = dst.joinpath(*parts)
    if member.isdir():
        target.mkdir(parents=True, exist_ok=True)
        return
    if not member.isfile():
        return  # links and devices are never written
    if selector is not None and not selector(rel):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    src = tar.extractfile(member)
    assert src is not None
    with src, open(target, "wb") as out:
        shutil.copyfileobj(src, out)
    os.chmod(target, 0o644 | (member.mode & 0o111))


def _sort(checkpoints: List[Checkpoint], sort_by: Any, order_by: Optional[_util.OrderBy],
          config: Dict[str, Any]) -> List[Checkpoint]:
    """Checkpoints sorted as Determined's list_checkpoints sorts them; by the searcher metric
    (and its smaller_is_better) when sort_by is None or SEARCHER_METRIC, those without it last."""
    searcher = config.get("searcher") or {}
    if sort_by is None or sort_by == CheckpointSortBy.SEARCHER_METRIC:
        metric = searcher.get("metric")
        if order_by is None:
            order_by = _util.OrderBy.ASC if searcher.get("smaller_is_better", True) else _util.OrderBy.DESC
        sort_by = metric
    if order_by is None:
        # A metric without an order: the searcher's smaller_is_better says which way is better.
        smaller = searcher.get("smaller_is_better", True)
        order_by = _util.OrderBy.ASC if smaller or isinstance(sort_by, CheckpointSortBy) else _util.OrderBy.DESC
    desc = order_by == _util.OrderBy.DESC
    if isinstance(sort_by, CheckpointSortBy):
        keys = {
            CheckpointSortBy.UUID: lambda c: c.uuid,
            CheckpointSortBy.TRIAL_ID: lambda c: c.training.trial_id if c.training else 0,
            CheckpointSortBy.BATCH_NUMBER: lambda c: c.steps_completed,
            CheckpointSortBy.END_TIME: lambda c: c.report_time.timestamp() if c.report_time else 0,
            CheckpointSortBy.STATE: lambda c: c.state.value,
        }
        return sorted(checkpoints, key=keys[sort_by], reverse=desc)
    with_metric, without = [], []
    for c in checkpoints:
        v = c.training.validation_metrics["avgMetrics"].get(sort_by) if (c.training and sort_by) else None
        (with_metric if isinstance(v, (int, float)) else without).append((v, c))
    with_metric.sort(key=lambda vc: vc[0], reverse=desc)
    return [c for _, c in with_metric] + [c for _, c in without]
