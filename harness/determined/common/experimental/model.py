"""The model registry, as Determined's SDK gives it: models and their versions."""

import enum
import urllib.parse
from typing import Any, Dict, List, Optional

from determined.common.api import _session as api_session
from determined.common.api import errors
from determined.common.experimental import _util, checkpoint


class ModelSortBy(enum.Enum):
    """The field a list of models is sorted on."""

    UNSPECIFIED = "SORT_BY_UNSPECIFIED"
    NAME = "SORT_BY_NAME"
    DESCRIPTION = "SORT_BY_DESCRIPTION"
    CREATION_TIME = "SORT_BY_CREATION_TIME"
    LAST_UPDATED_TIME = "SORT_BY_LAST_UPDATED_TIME"
    NUM_VERSIONS = "SORT_BY_NUM_VERSIONS"
    WORKSPACE = "SORT_BY_WORKSPACE"


ModelOrderBy = _util.OrderBy

_MODEL_KEYS = {
    ModelSortBy.NAME: lambda m: m.name or "",
    ModelSortBy.UNSPECIFIED: lambda m: m.name or "",
    ModelSortBy.DESCRIPTION: lambda m: m.description or "",
    ModelSortBy.CREATION_TIME: lambda m: m._raw.get("creationTime") or "",
    ModelSortBy.LAST_UPDATED_TIME: lambda m: m._raw.get("lastUpdatedTime") or "",
    ModelSortBy.NUM_VERSIONS: lambda m: m._raw.get("numVersions") or 0,
    ModelSortBy.WORKSPACE: lambda m: m.workspace_id or 0,
}


def _q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


class ModelVersion:
    """A registered version of a model: ``model_version`` (its number), ``checkpoint``,
    ``name``, ``comment``, ``notes``, ``metadata``, ``labels``, ``model_name``, ``model_id``."""

    def __init__(self, session: api_session.Session, model_version: int, model_name: str) -> None:
        self._session = session
        self.model_version = model_version
        self.model_name = model_name
        self.model_id: Optional[int] = None
        self.checkpoint: Optional[checkpoint.Checkpoint] = None
        self.name: Optional[str] = None
        self.comment: Optional[str] = None
        self.notes: Optional[str] = None
        self.metadata: Dict[str, Any] = {}
        self.labels: List[str] = []
        self.creation_time: Any = None
        self.id: Optional[int] = None

    @classmethod
    def _from_json(cls, data: Dict[str, Any], session: api_session.Session) -> "ModelVersion":
        v = cls(session, int(data.get("version") or 0), str(data.get("modelName") or ""))
        v.id = data.get("id")
        v.model_id = data.get("modelId")
        v.name = data.get("name")
        v.comment = data.get("comment")
        v.notes = data.get("notes")
        md = data.get("metadata")
        v.metadata = dict(md) if isinstance(md, dict) else {}
        v.labels = list(data.get("labels") or [])
        v.creation_time = _util.parse_time(data.get("creationTime"))
        v.checkpoint = checkpoint.Checkpoint._from_json(
            {"uuid": data.get("checkpointUuid"), "experimentId": data.get("experimentId"),
             "trialId": data.get("trialId"), "stepsCompleted": data.get("stepsCompleted"),
             "size": data.get("checkpointSize"), "state": "COMPLETED",
             "validationMetrics": data.get("validationMetrics")},
            session,
        )
        return v

    def _path(self) -> str:
        return f"/api/v1/models/{_q(self.model_name)}/versions/{self.model_version}"

    def _patch(self, body: Dict[str, Any]) -> None:
        self._session.patch(self._path(), json=body)

    def set_name(self, name: str) -> None:
        self._patch({"name": name})
        self.name = name

    def set_notes(self, notes: str) -> None:
        self._patch({"notes": notes})
        self.notes = notes

    def add_metadata(self, metadata: Dict[str, Any]) -> None:
        self.metadata.update(metadata)
        self._patch({"metadata": self.metadata})

    def remove_metadata(self, keys: List[str]) -> None:
        for k in keys:
            self.metadata.pop(k, None)
        self._patch({"metadata": self.metadata})

    def set_labels(self, labels: List[str]) -> None:
        self._patch({"labels": list(labels)})
        self.labels = list(labels)

    def delete(self) -> None:
        self._session.delete(self._path())

    def __repr__(self) -> str:
        return f"ModelVersion(model={self.model_name!r}, version={self.model_version})"


class Model:
    """A model of the registry: ``model_id``, ``name``, ``description``, ``metadata``,
    ``labels``, ``notes``, ``workspace_id``, ``archived``, ``creation_time``,
    ``last_updated_time``."""

    def __init__(self, session: api_session.Session, name: str) -> None:
        self._session = session
        self.name = name
        self.model_id: Optional[int] = None
        self.description: Optional[str] = None
        self.metadata: Dict[str, Any] = {}
        self.labels: List[str] = []
        self.notes: Optional[str] = None
        self.workspace_id: Optional[int] = None
        self.archived: bool = False
        self.username: Optional[str] = None
        self.creation_time: Any = None
        self.last_updated_time: Any = None
        self._raw: Dict[str, Any] = {}

    @classmethod
    def _from_json(cls, data: Dict[str, Any], session: api_session.Session) -> "Model":
        m = cls(session, str(data.get("name") or ""))
        m._hydrate(data)
        return m

    def _hydrate(self, data: Dict[str, Any]) -> None:
        self._raw = data
        self.name = str(data.get("name") or self.name)
        self.model_id = data.get("id")
        self.description = data.get("description")
        md = data.get("metadata")
        self.metadata = dict(md) if isinstance(md, dict) else {}
        self.labels = list(data.get("labels") or [])
        self.notes = data.get("notes")
        self.workspace_id = data.get("workspaceId")
        self.archived = bool(data.get("archived"))
        self.username = data.get("username")
        self.creation_time = _util.parse_time(data.get("creationTime"))
        self.last_updated_time = _util.parse_time(data.get("lastUpdatedTime"))

    def _path(self) -> str:
        return f"/api/v1/models/{_q(self.name)}"

    def reload(self) -> None:
        self._hydrate((self._session.get(self._path()).json() or {}).get("model") or {})

    def get_version(self, version: int = -1) -> Optional[ModelVersion]:
        """Version number `version` of the model; -1 (the default) is the latest. None when
        the model has no versions yet."""
        num = "latest" if version == -1 else str(int(version))
        try:
            r = self._session.get(f"{self._path()}/versions/{num}").json() or {}
        except errors.NotFoundException:
            if version == -1:
                return None
            raise
        return ModelVersion._from_json(r.get("modelVersion") or {}, self._session)

    def list_versions(self, order_by: _util.OrderBy = _util.OrderBy.DESC) -> List[ModelVersion]:
        """The model's versions, newest first unless order_by says ASC."""
        r = self._session.get(f"{self._path()}/versions").json() or {}
        out = [ModelVersion._from_json(v, self._session) for v in r.get("modelVersions") or []]
        out.sort(key=lambda v: v.model_version, reverse=order_by != _util.OrderBy.ASC)
        return out

    def get_versions(self, order_by: _util.OrderBy = _util.OrderBy.DESC) -> List[ModelVersion]:
        """The model's versions (deprecated in Determined: list_versions)."""
        return self.list_versions(order_by)

    def register_version(self, checkpoint_uuid: str) -> ModelVersion:
        """Register a completed checkpoint as the model's next version."""
        r = self._session.post(f"{self._path()}/versions",
                               json={"checkpointUuid": checkpoint_uuid}).json() or {}
        return ModelVersion._from_json(r.get("modelVersion") or {}, self._session)

    def _patch(self, body: Dict[str, Any]) -> None:
        r = self._session.patch(self._path(), json=body).json() or {}
        if r.get("model"):
            self._hydrate(r["model"])

    def add_metadata(self, metadata: Dict[str, Any]) -> None:
        merged = dict(self.metadata)
        merged.update(metadata)
        self._patch({"metadata": merged})

    def remove_metadata(self, keys: List[str]) -> None:
        self._patch({"metadata": {k: v for k, v in self.metadata.items() if k not in keys}})

    def set_labels(self, labels: List[str]) -> None:
        self._patch({"labels": list(labels)})

    def add_label(self, label: str) -> None:
        if label not in self.labels:
            self.set_labels(self.labels + [label])

    def remove_label(self, label: str) -> None:
        self.set_labels([x for x in self.labels if x != label])

    def set_description(self, description: str) -> None:
        self._patch({"description": description})

    def archive(self) -> None:
        self._session.post(f"{self._path()}/archive")
        self.archived = True

    def unarchive(self) -> None:
        self._session.post(f"{self._path()}/unarchive")
        self.archived = False

    def delete(self) -> None:
        self._session.delete(self._path())

    def to_json(self) -> Dict[str, Any]:
        return {"name": self.name, "id": self.model_id, "description": self.description,
                "metadata": self.metadata, "labels": self.labels, "notes": self.notes,
                "workspaceId": self.workspace_id, "archived": self.archived}

    def __repr__(self) -> str:
        return f"Model(name={self.name!r})"
