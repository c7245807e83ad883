"""The Python SDK as Determined's ``determined.experimental.client``: the same verbs as ``det``
for Python code, through one default connection.

.. code:: python

    from determined.experimental import client

    # Unneeded after `det user login`: the SDK and det share the stored login.
    # client.login(master="http://host:8080", user="alice", password="...")
    exp = client.create_experiment(config="const.yaml", model_dir=".")
    print(exp.wait())                       # ExperimentState.COMPLETED
    best = exp.list_checkpoints(max_results=1)[0]
    path = best.download()                  # checkpoints/<uuid>

The default connection is made on first use (or by ``login``): master from the argument, else
DET_MASTER, else http://localhost:8080; user as ``det`` picks. Use ``Determined`` objects to
talk to several masters at once.
"""

import functools
import logging
import pathlib
from typing import Any, Callable, Dict, Iterable, List, Optional, TypeVar, Union

from determined.common.api import Session  # noqa: F401
from determined.common.experimental import (  # noqa: F401
    Checkpoint,
    CheckpointOrderBy,
    CheckpointSortBy,
    CheckpointState,
    Determined,
    DownloadMode,
    Experiment,
    ExperimentOrderBy,
    ExperimentReference,
    ExperimentSortBy,
    ExperimentState,
    LogLevel,
    Model,
    ModelOrderBy,
    ModelSortBy,
    ModelVersion,
    OrderBy,
    Project,
    TrainingMetrics,
    Trial,
    TrialMetrics,
    TrialOrderBy,
    TrialReference,
    TrialSortBy,
    TrialState,
    User,
    ValidationMetrics,
    Workspace,
)

logger = logging.getLogger("determined.client")

_determined: Optional[Determined] = None

C = TypeVar("C", bound=Callable[..., Any])


def _require_singleton(fn: C) -> C:
    @functools.wraps(fn)
    def _fn(*args: Any, **kwargs: Any) -> Any:
        global _determined
        if _determined is None:
            _determined = Determined()
        return fn(*args, **kwargs)

    return _fn  # type: ignore


def login(
    master: Optional[str] = None,
    user: Optional[str] = None,
    password: Optional[str] = None,
    cert_path: Optional[str] = None,
    cert_name: Optional[str] = None,
    noverify: bool = False,
) -> None:
    """Make the module's default connection; call it once, before anything else (see
    ``Determined`` for the arguments). Unneeded where ``det`` works without arguments."""
    global _determined
    if _determined is not None:
        raise ValueError(
            "You can only call login() once, before any other calls to any functions in the client "
            "module. If you have reason to connect to multiple masters, you should use explicit "
            "client.Determined() objects, which each expose the same functions as this module."
        )
    _determined = Determined(master, user, password, cert_path, cert_name, noverify)


def logout() -> None:
    """End the default connection's session (a no-op before any login)."""
    global _determined
    if _determined is None:
        logger.warning("client has not been logged in, so client.logout() has nothing to do")
        return
    _determined.logout()
    _determined = None


@_require_singleton
def create_experiment(
    config: Union[str, pathlib.Path, Dict],
    model_dir: Optional[Union[str, pathlib.Path]] = None,
    includes: Optional[Iterable[Union[str, pathlib.Path]]] = None,
    project_id: Optional[int] = None,
    template: Optional[str] = None,
) -> Experiment:
    """Submit an experiment (config: a YAML file's path or a dict; model_dir: its code)."""
    assert _determined is not None
    return _determined.create_experiment(config, model_dir, includes, project_id, template)


@_require_singleton
def get_experiment(experiment_id: int) -> Experiment:
    assert _determined is not None
    return _determined.get_experiment(experiment_id)


@_require_singleton
def list_experiments(
    sort_by: Optional[ExperimentSortBy] = None,
    order_by: Optional[OrderBy] = None,
    experiment_ids: Optional[List[int]] = None,
    labels: Optional[List[str]] = None,
    users: Optional[List[str]] = None,
    states: Optional[List[ExperimentState]] = None,
    name: Optional[str] = None,
    project_id: Optional[int] = None,
) -> List[Experiment]:
    assert _determined is not None
    return _determined.list_experiments(sort_by=sort_by, order_by=order_by,
                                        experiment_ids=experiment_ids, labels=labels, users=users,
                                        states=states, name=name, project_id=project_id)


@_require_singleton
def get_trial(trial_id: int) -> Trial:
    assert _determined is not None
    return _determined.get_trial(trial_id)


@_require_singleton
def get_checkpoint(uuid: str) -> Checkpoint:
    assert _determined is not None
    return _determined.get_checkpoint(uuid)


@_require_singleton
def whoami() -> User:
    assert _determined is not None
    return _determined.whoami()


@_require_singleton
def get_user_by_id(user_id: int) -> User:
    assert _determined is not None
    return _determined.get_user_by_id(user_id)


@_require_singleton
def get_user_by_name(user_name: str) -> User:
    assert _determined is not None
    return _determined.get_user_by_name(user_name)


@_require_singleton
def list_users(active: Optional[bool] = None) -> List[User]:
    assert _determined is not None
    return _determined.list_users(active=active)


@_require_singleton
def create_user(username: str, admin: bool, password: Optional[str] = None,
                remote: bool = False) -> User:
    assert _determined is not None
    return _determined.create_user(username, admin, password, remote)


@_require_singleton
def get_workspace(name: str) -> Workspace:
    assert _determined is not None
    return _determined.get_workspace(name)


@_require_singleton
def list_workspaces() -> List[Workspace]:
    assert _determined is not None
    return _determined.list_workspaces()


@_require_singleton
def create_workspace(name: str) -> Workspace:
    assert _determined is not None
    return _determined.create_workspace(name)


@_require_singleton
def delete_workspace(name: str) -> None:
    assert _determined is not None
    return _determined.delete_workspace(name)


@_require_singleton
def get_session_username() -> str:
    assert _determined is not None
    return _determined.get_session_username()


@_require_singleton
def create_model(name: str, description: Optional[str] = "",
                 metadata: Optional[Dict[str, Any]] = None) -> Model:
    assert _determined is not None
    return _determined.create_model(name, description, metadata)


@_require_singleton
def get_model(identifier: Union[str, int]) -> Model:
    assert _determined is not None
    return _determined.get_model(identifier)


@_require_singleton
def get_model_by_id(model_id: int) -> Model:
    assert _determined is not None
    return _determined.get_model(int(model_id))


@_require_singleton
def list_models(
    sort_by: ModelSortBy = ModelSortBy.NAME,
    order_by: OrderBy = OrderBy.ASCENDING,
    name: Optional[str] = None,
    description: Optional[str] = None,
    model_id: Optional[int] = None,
    workspace_names: Optional[List[str]] = None,
    workspace_ids: Optional[List[int]] = None,
) -> List[Model]:
    assert _determined is not None
    return _determined.list_models(sort_by=sort_by, order_by=order_by, name=name,
                                   description=description, model_id=model_id,
                                   workspace_names=workspace_names, workspace_ids=workspace_ids)


@_require_singleton
def get_models(sort_by: ModelSortBy = ModelSortBy.NAME, order_by: OrderBy = OrderBy.ASCENDING,
               name: str = "", description: str = "") -> List[Model]:
    assert _determined is not None
    return _determined.get_models(sort_by, order_by, name, description)


@_require_singleton
def get_model_labels() -> List[str]:
    assert _determined is not None
    return _determined.get_model_labels()


@_require_singleton
def iter_trials_metrics(trial_ids: List[int], group: str) -> Iterable[TrialMetrics]:
    assert _determined is not None
    return _determined.iter_trials_metrics(trial_ids, group=group)


def stream_trials_metrics(trial_ids: List[int], group: str) -> Iterable[TrialMetrics]:
    """Deprecated in Determined: iter_trials_metrics."""
    return iter_trials_metrics(trial_ids, group=group)


@_require_singleton
def stream_trials_training_metrics(trial_ids: List[int]) -> Iterable[TrainingMetrics]:
    assert _determined is not None
    return _determined.stream_trials_training_metrics(trial_ids)


@_require_singleton
def stream_trials_validation_metrics(trial_ids: List[int]) -> Iterable[ValidationMetrics]:
    assert _determined is not None
    return _determined.stream_trials_validation_metrics(trial_ids)


@_require_singleton
def _get_singleton_session() -> Session:
    assert _determined is not None
    return _determined._session
