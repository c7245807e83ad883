"""Workspaces and their projects, as Determined's SDK gives them."""

from typing import Any, Dict, List, Optional

from determined.common.api import _session as api_session
from determined.common.api import errors


class Project:
    """A project: ``id``, ``name``, ``description``, ``workspace_id``, ``archived``,
    ``n_experiments``."""

    def __init__(self, project_id: int, session: api_session.Session) -> None:
        self.id = project_id
        self._session = session
        self.name: Optional[str] = None
        self.description: Optional[str] = None
        self.workspace_id: Optional[int] = None
        self.archived: Optional[bool] = None
        self.n_experiments: Optional[int] = None

    @classmethod
    def _from_json(cls, data: Dict[str, Any], session: api_session.Session) -> "Project":
        p = cls(int(data.get("id") or 0), session)
        p._hydrate(data)
        return p

    def _hydrate(self, data: Dict[str, Any]) -> None:
        self.name = data.get("name")
        self.description = data.get("description")
        self.workspace_id = data.get("workspaceId")
        self.archived = bool(data.get("archived"))
        self.n_experiments = data.get("numExperiments")

    def reload(self) -> None:
        self._hydrate((self._session.get(f"/api/v1/projects/{self.id}").json() or {}).get("project") or {})

    def _patch(self, body: Dict[str, Any]) -> None:
        r = self._session.patch(f"/api/v1/projects/{self.id}", json=body).json() or {}
        self._hydrate(r.get("project") or {})

    def set_name(self, name: str) -> None:
        self._patch({"name": name})

    def set_description(self, description: str) -> None:
        self._patch({"description": description})

    def archive(self) -> None:
        self._session.post(f"/api/v1/projects/{self.id}/archive")
        self.archived = True

    def unarchive(self) -> None:
        self._session.post(f"/api/v1/projects/{self.id}/unarchive")
        self.archived = False

    def __repr__(self) -> str:
        return f"Project(id={self.id}, name={self.name!r})"


class Workspace:
    """A workspace: ``id``, ``name``, ``archived``."""

    def __init__(self, session: api_session.Session, workspace_id: Optional[int] = None,
                 workspace_name: Optional[str] = None) -> None:
        if workspace_id is None and workspace_name is None:
            raise ValueError("a Workspace needs an id or a name")
        self._session = session
        self.id = workspace_id
        self.name = workspace_name
        self.archived: Optional[bool] = None
        if workspace_id is None:
            match = [w for w in _workspaces(session) if w.get("name") == workspace_name]
            if not match:
                raise errors.NotFoundException("GET", "/api/v1/workspaces", 404,
                                               f"workspace {workspace_name!r} not found")
            self._hydrate(match[0])
        else:
            self.reload()

    @classmethod
    def _from_json(cls, data: Dict[str, Any], session: api_session.Session) -> "Workspace":
        w = cls.__new__(cls)
        w._session = session
        w._hydrate(data)
        return w

    def _hydrate(self, data: Dict[str, Any]) -> None:
        self.id = data.get("id")
        self.name = data.get("name")
        self.archived = bool(data.get("archived"))

    def reload(self) -> None:
        self._hydrate((self._session.get(f"/api/v1/workspaces/{self.id}").json() or {}).get("workspace") or {})

    def list_projects(self) -> List[Project]:
        r = self._session.get(f"/api/v1/workspaces/{self.id}/projects").json() or {}
        return [Project._from_json(p, self._session) for p in r.get("projects") or []]

    def get_project(self, project_name: str) -> Project:
        for p in self.list_projects():
            if p.name == project_name:
                return p
        raise errors.NotFoundException("GET", f"/api/v1/workspaces/{self.id}/projects", 404,
                                       f"project {project_name!r} not found in {self.name!r}")

    def create_project(self, name: str, description: Optional[str] = None) -> Project:
        body: Dict[str, Any] = {"name": name}
        if description is not None:
            body["description"] = description
        r = self._session.post(f"/api/v1/workspaces/{self.id}/projects", json=body).json() or {}
        return Project._from_json(r.get("project") or {}, self._session)

    def delete_project(self, name: str) -> None:
        self._session.delete(f"/api/v1/projects/{self.get_project(name).id}")

    def __repr__(self) -> str:
        return f"Workspace(id={self.id}, name={self.name!r})"


def _workspaces(session: api_session.Session) -> List[Dict[str, Any]]:
    return list((session.get("/api/v1/workspaces").json() or {}).get("workspaces") or [])
