"""The Determined class: one master, one signed-in user, and everything the SDK reaches."""

import json
import logging
import os
import pathlib
import ssl
from typing import Any, Dict, Iterable, List, Optional, Union

from determined.common import context
from determined.common.api import _session as api_session
from determined.common.api import authentication, errors
from determined.common.experimental import (
    _util,
    checkpoint,
    experiment,
    metrics,
    model,
    trial,
    user,
    workspace,
)

logger = logging.getLogger("determined.client")


def _task_session(master: str, cert: Optional[ssl.SSLContext]) -> Optional[api_session.Session]:
    """Inside a task with no stored login: its user's token (DET_USER_TOKEN) when the master
    gave one, else the task's allocation token, which reaches what the task itself may read."""
    import determined

    info = determined.get_cluster_info()
    if info is None:
        return None
    user = info.user or authentication.get_det_username_from_env()
    store = authentication.TokenStore(master)
    # A `det user login` inside the task wins, as in Determined; then the task user's own.
    for stored_user in (store.get_active_user(), user):
        token = store.get_token(stored_user) if stored_user else None
        if token is not None and authentication._token_is_valid(store.master_address, token, cert):
            return api_session.Session(store.master_address, stored_user, token, cert)
    env_token = authentication.get_det_user_token_from_env()
    if user and env_token:
        return api_session.Session(store.master_address, user, env_token, cert)
    return api_session.Session(store.master_address, user, None, cert,
                               allocation_token=info.session_token)


class Determined:
    """A connection to a master as one user; ``determined.experimental.client`` offers the same
    methods through one default instance.

    Arguments:
        master: the master's URL; default DET_MASTER, else DET_MASTER_ADDR, else
            http://localhost:8080 (inside a task: the task's master).
        user: the user to act as; default as ``det`` picks (DET_USER with DET_PASS, else the
            last ``det user login``, else ``determined``).
        password: used only when no stored login of the user works; the new login is stored
            for ``det`` and later scripts.
        cert_path, cert_name, noverify: TLS settings for an https master.
    """

    def __init__(
        self,
        master: Optional[str] = None,
        user: Optional[str] = None,
        password: Optional[str] = None,
        cert_path: Optional[str] = None,
        cert_name: Optional[str] = None,
        noverify: bool = False,
    ) -> None:
        import determined

        info = determined.get_cluster_info()
        if master is None and info is not None:
            master = info.master_url
        master = api_session.canonicalize_master_url(master or api_session.default_master())
        cert = api_session._tls(master, cert_path, cert_name, noverify)
        sess = None
        if user is None and password is None and os.environ.get("DET_PASS") is None:
            sess = _task_session(master, cert)
        if sess is None:
            sess = authentication.login_with_cache(master, user, password, cert)
        self._session = sess
        self._master = master

    # Users.

    def whoami(self) -> user.User:
        """The signed-in user."""
        return user.User._from_json((self._session.get("/api/v1/me").json() or {}).get("user") or {},
                                    self._session)

    def get_session_username(self) -> str:
        return self._session.username or str(self.whoami().username or "")

    def get_user_by_id(self, user_id: int) -> user.User:
        r = self._session.get(f"/api/v1/users/{int(user_id)}").json() or {}
        return user.User._from_json(r.get("user") or {}, self._session)

    def get_user_by_name(self, user_name: str) -> user.User:
        r = self._session.get(f"/api/v1/users/{model._q(user_name)}/by-username").json() or {}
        return user.User._from_json(r.get("user") or {}, self._session)

    def list_users(self, active: Optional[bool] = None) -> List[user.User]:
        r = self._session.get("/api/v1/users").json() or {}
        users = [user.User._from_json(u, self._session) for u in r.get("users") or []]
        return [u for u in users if active is None or u.active == active]

    def create_user(self, username: str, admin: bool, password: Optional[str] = None,
                    remote: bool = False) -> user.User:
        """Add a user (administrators); remote (SSO) users are not supported."""
        if remote:
            raise ValueError("remote (SSO) users are not supported by this master")
        body = {"user": {"username": username, "admin": bool(admin)}, "password": password or ""}
        r = self._session.post("/api/v1/users", json=body).json() or {}
        return user.User._from_json(r.get("user") or {}, self._session)

    # Workspaces.

    def get_workspace(self, name: str) -> workspace.Workspace:
        return workspace.Workspace(self._session, workspace_name=name)

    def list_workspaces(self) -> List[workspace.Workspace]:
        return [workspace.Workspace._from_json(w, self._session)
                for w in workspace._workspaces(self._session)]

    def create_workspace(self, name: str) -> workspace.Workspace:
        r = self._session.post("/api/v1/workspaces", json={"name": name}).json() or {}
        return workspace.Workspace._from_json(r.get("workspace") or {}, self._session)

    def delete_workspace(self, name: str) -> None:
        self._session.delete(f"/api/v1/workspaces/{self.get_workspace(name).id}")

    def logout(self) -> None:
        """End this session and forget it in the stored logins."""
        user = self._session.username
        try:
            self._session.post("/api/v1/auth/logout")
        except (errors.UnauthenticatedException, errors.APIException):
            pass
        if user:
            store = authentication.TokenStore(self._master)
            if store.get_token(user) == self._session.token:
                store.drop_user(user)

    # Experiments.

    def create_experiment(
        self,
        config: Union[str, pathlib.Path, Dict[str, Any]],
        model_dir: Optional[Union[str, pathlib.Path]] = None,
        includes: Optional[Iterable[Union[str, pathlib.Path]]] = None,
        project_id: Optional[int] = None,
        template: Optional[str] = None,
    ) -> experiment.Experiment:
        """Submit an experiment: config as a YAML file's path or a dict, the code from model_dir
        (and includes), packed as ``det experiment create`` packs it. It starts active."""
        if isinstance(config, dict):
            text = json.dumps(config)  # JSON is YAML
        elif isinstance(config, (str, pathlib.Path)):
            text = pathlib.Path(config).read_text()
        else:
            raise TypeError("config must be a path to a YAML file or a dict")
        fields = [("config", text)]
        if template:
            fields.append(("template", template))
        if project_id is not None:
            fields.append(("project_id", str(int(project_id))))
        files = []
        if model_dir is not None or includes:
            files.append(("context", "context.tar.gz", context.pack(model_dir, includes)))
        r = self._session.post_form("/api/v1/experiments", fields, files).json() or {}
        exp = r.get("experiment") or {}
        if not isinstance(exp.get("id"), int):
            raise errors.BadResponseException(f"the master's answer has no experiment id: {r}")
        for w in r.get("warnings") or []:
            logger.warning(w)
        return experiment.Experiment._from_json(exp, self._session)

    def get_experiment(self, experiment_id: int) -> experiment.Experiment:
        """The experiment with this id; NotFoundException when there is none."""
        return experiment.Experiment._get(int(experiment_id), self._session)

    def list_experiments(
        self,
        sort_by: Optional[experiment.ExperimentSortBy] = None,
        order_by: Optional[_util.OrderBy] = None,
        experiment_ids: Optional[List[int]] = None,
        labels: Optional[List[str]] = None,
        users: Optional[List[str]] = None,
        states: Optional[List[experiment.ExperimentState]] = None,
        name: Optional[str] = None,
        project_id: Optional[int] = None,
    ) -> List[experiment.Experiment]:
        """Experiments that pass every filter given, by id unless sort_by says otherwise."""
        params: Dict[str, Any] = {}
        if project_id is not None:
            params["project_id"] = project_id
        if states:
            params["states"] = [s.value if isinstance(s, experiment.ExperimentState) else str(s)
                                for s in states]
        r = self._session.get("/api/v1/experiments", params=params or None).json() or {}
        out = []
        for e in r.get("experiments") or []:
            if experiment_ids is not None and e.get("id") not in experiment_ids:
                continue
            if labels is not None and not set(labels) & set(e.get("labels") or []):
                continue
            if users is not None and e.get("username") not in users:
                continue
            if name is not None and name not in (e.get("name") or ""):
                continue
            out.append(experiment.Experiment._from_json(e, self._session))
        key = experiment._SORT_KEYS.get(sort_by or experiment.ExperimentSortBy.ID, "id")
        out.sort(key=lambda x: (x._raw_sort(key)), reverse=order_by == _util.OrderBy.DESC)
        return out

    # Trials, checkpoints, metrics.

    def get_trial(self, trial_id: int) -> trial.Trial:
        t = trial.Trial(int(trial_id), self._session)
        t.reload()
        return t

    def get_checkpoint(self, uuid: str) -> checkpoint.Checkpoint:
        r = self._session.get(f"/api/v1/checkpoints/{uuid}").json() or {}
        return checkpoint.Checkpoint._from_json(r.get("checkpoint") or {}, self._session)

    def iter_trials_metrics(self, trial_ids: List[int], group: str) -> Iterable[metrics.TrialMetrics]:
        return trial._trials_metrics(self._session, list(trial_ids), group)

    def stream_trials_metrics(self, trial_ids: List[int], group: str) -> Iterable[metrics.TrialMetrics]:
        return self.iter_trials_metrics(trial_ids, group)

    def stream_trials_training_metrics(self, trial_ids: List[int]) -> Iterable[metrics.TrainingMetrics]:
        for m in trial._trials_metrics(self._session, list(trial_ids), "training"):
            yield metrics.TrainingMetrics(**trial._fields(m))

    def stream_trials_validation_metrics(self, trial_ids: List[int]) -> Iterable[metrics.ValidationMetrics]:
        for m in trial._trials_metrics(self._session, list(trial_ids), "validation"):
            yield metrics.ValidationMetrics(**trial._fields(m))

    # Models.

    def create_model(self, name: str, description: Optional[str] = "",
                     metadata: Optional[Dict[str, Any]] = None,
                     labels: Optional[List[str]] = None,
                     workspace_name: Optional[str] = None) -> model.Model:
        """Add a model to the registry; its name must be new."""
        body: Dict[str, Any] = {"name": name, "description": description or ""}
        if metadata is not None:
            body["metadata"] = metadata
        if labels is not None:
            body["labels"] = list(labels)
        if workspace_name is not None:
            ws = self._session.get("/api/v1/workspaces").json() or {}
            match = [w for w in ws.get("workspaces") or [] if w.get("name") == workspace_name]
            if not match:
                raise errors.NotFoundException("GET", "/api/v1/workspaces", 404,
                                               f"workspace {workspace_name!r} not found")
            body["workspaceId"] = match[0]["id"]
        r = self._session.post("/api/v1/models", json=body).json() or {}
        return model.Model._from_json(r.get("model") or {}, self._session)

    def get_model(self, identifier: Union[str, int]) -> model.Model:
        """The model with this name (or numeric id); NotFoundException when there is none."""
        if isinstance(identifier, int):
            for m in self.list_models():
                if m.model_id == identifier:
                    return m
            raise errors.NotFoundException("GET", "/api/v1/models", 404,
                                           f"model {identifier} not found")
        r = self._session.get(f"/api/v1/models/{model._q(identifier)}").json() or {}
        return model.Model._from_json(r.get("model") or {}, self._session)

    def get_model_by_id(self, model_id: int) -> model.Model:
        return self.get_model(int(model_id))

    def list_models(
        self,
        sort_by: model.ModelSortBy = model.ModelSortBy.NAME,
        order_by: _util.OrderBy = _util.OrderBy.ASCENDING,
        name: Optional[str] = None,
        description: Optional[str] = None,
        model_id: Optional[int] = None,
        workspace_names: Optional[List[str]] = None,
        workspace_ids: Optional[List[int]] = None,
    ) -> List[model.Model]:
        """The registry's models that pass every filter given."""
        r = self._session.get("/api/v1/models").json() or {}
        out = []
        for d in r.get("models") or []:
            if name and name not in (d.get("name") or ""):
                continue
            if description and description not in (d.get("description") or ""):
                continue
            if model_id and d.get("id") != model_id:
                continue
            if workspace_names is not None and d.get("workspaceName") not in workspace_names:
                continue
            if workspace_ids is not None and d.get("workspaceId") not in workspace_ids:
                continue
            out.append(model.Model._from_json(d, self._session))
        out.sort(key=model._MODEL_KEYS.get(sort_by, model._MODEL_KEYS[model.ModelSortBy.NAME]),
                 reverse=order_by == _util.OrderBy.DESC)
        return out

    def get_models(self, sort_by: model.ModelSortBy = model.ModelSortBy.NAME,
                   order_by: _util.OrderBy = _util.OrderBy.ASCENDING, name: str = "",
                   description: str = "") -> List[model.Model]:
        """Deprecated in Determined: list_models."""
        return self.list_models(sort_by, order_by, name or None, description or None)

    def get_model_labels(self) -> List[str]:
        """Labels used on models, most used first."""
        counts: Dict[str, int] = {}
        for m in self.list_models():
            for label in m.labels:
                counts[label] = counts.get(label, 0) + 1
        return sorted(counts, key=lambda k: (-counts[k], k))
