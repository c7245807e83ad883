"""ClusterInfo: what a task knows about itself, from its environment.

Resolute's master gives every task ``DET_*`` environment variables; a launcher may also write
``/run/determined/info/{cluster,trial,rendezvous,resources}.json`` (upstream's layout), which win
when present.
"""

import json
import os
from typing import Any, Dict, List, Optional, Union

INFO_DIR = "/run/determined/info"


def _info_path(name: str) -> str:
    return os.path.join(INFO_DIR, name)


def _load_json_file(name: str) -> Optional[Dict[str, Any]]:
    path = _info_path(name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        out = json.load(f)
    return out if isinstance(out, dict) else None


def _env_json(key: str, default: Any) -> Any:
    val = os.environ.get(key)
    if val is None or val == "":
        return default
    try:
        return json.loads(val)
    except ValueError as e:
        raise RuntimeError(f"environment variable {key} is not valid JSON: {e}") from None


def _env_int(key: str, default: Optional[int]) -> Optional[int]:
    val = os.environ.get(key)
    if val is None or val.strip() == "":
        return default
    try:
        return int(val)
    except ValueError:
        raise RuntimeError(f"environment variable {key}={val!r} is not an integer") from None


def _parse_slot_ids(val: Optional[str]) -> List[int]:
    if not val:
        return []
    val = val.strip()
    if val.startswith("["):
        return [int(x) for x in json.loads(val)]
    return [int(x) for x in val.split(",") if x.strip()]


class RendezvousInfo:
    """Where the containers of one allocation are, and which one this is."""

    def __init__(
        self,
        container_addrs: List[str],
        container_rank: int,
        container_slot_counts: List[int],
    ) -> None:
        self.container_addrs = container_addrs
        self.container_rank = container_rank
        self.container_slot_counts = container_slot_counts


class TrialInfo:
    """Information about the trial that is currently running."""

    def __init__(
        self,
        trial_id: int,
        experiment_id: int,
        trial_seed: int,
        hparams: Dict[str, Any],
        config: Dict[str, Any],
        steps_completed: int,
        trial_run_id: int,
        debug: bool = False,
        unique_port_offset: int = 0,
        inter_node_network_interface: Optional[str] = None,
        tensorboard_logging: bool = True,
    ) -> None:
        #: The trial ID of the current task.
        self.trial_id = trial_id
        #: The experiment ID of the current task.
        self.experiment_id = experiment_id
        #: The random seed of this trial.
        self.trial_seed = trial_seed
        #: The hyperparameter values chosen for this trial.
        self.hparams = hparams
        # The full experiment config (not a stable API, as upstream).
        self._config = config
        self._steps_completed = steps_completed
        self._trial_run_id = trial_run_id
        self._debug = debug
        self._unique_port_offset = unique_port_offset
        self._inter_node_network_interface = inter_node_network_interface
        self._tensorboard_logging = tensorboard_logging

    @property
    def id(self) -> int:
        return self.trial_id

    @classmethod
    def _from_env(cls) -> "TrialInfo":
        missing = [k for k in ("DET_TRIAL_ID", "DET_EXPERIMENT_ID") if not os.environ.get(k)]
        if missing:
            raise RuntimeError(
                f"missing environment keys [{', '.join(missing)}] for a TRIAL task"
            )
        config = _env_json("DET_EXPERIMENT_CONFIG", {}) or {}
        hparams = _env_json("DET_HPARAMS", {}) or {}
        return cls(
            trial_id=int(os.environ["DET_TRIAL_ID"]),
            experiment_id=int(os.environ["DET_EXPERIMENT_ID"]),
            trial_seed=_env_int("DET_TRIAL_SEED", 0) or 0,
            hparams=hparams,
            config=config,
            steps_completed=_env_int("DET_STEPS_COMPLETED", 0) or 0,
            trial_run_id=_env_int("DET_TRIAL_RUN_ID", 1) or 1,
            debug=bool(config.get("debug", False)),
            unique_port_offset=_env_int("DET_UNIQUE_PORT_OFFSET", 0) or 0,
            inter_node_network_interface=os.environ.get("DET_INTER_NODE_NETWORK_INTERFACE")
            or None,
            tensorboard_logging=bool(config.get("tensorboard_logging", True)),
        )

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> "TrialInfo":
        return cls(
            trial_id=int(d["trial_id"]),
            experiment_id=int(d["experiment_id"]),
            trial_seed=int(d.get("trial_seed", 0)),
            hparams=d.get("hparams") or {},
            config=d.get("config") or {},
            steps_completed=int(d.get("steps_completed", 0)),
            trial_run_id=int(d.get("trial_run_id", 1)),
            debug=bool(d.get("debug", False)),
            unique_port_offset=int(d.get("unique_port_offset", 0)),
            inter_node_network_interface=d.get("inter_node_network_interface"),
            tensorboard_logging=bool(d.get("tensorboard_logging", True)),
        )


class ClusterInfo:
    """
    ClusterInfo exposes properties that are set for tasks while running on the cluster.

    .. code:: python

        info = det.get_cluster_info()
        assert info is not None, "this code only runs on-cluster!"
        print(info.master_url, info.task_id, info.allocation_id)
        if info.task_type == "TRIAL":
            print(info.trial.trial_id, info.trial.hparams)
    """

    def __init__(
        self,
        master_url: str,
        cluster_id: str,
        agent_id: str,
        slot_ids: List[int],
        task_id: str,
        allocation_id: str,
        session_token: str,
        task_type: str,
        master_cert_name: Optional[str] = None,
        master_cert_file: Optional[str] = None,
        latest_checkpoint: Optional[str] = None,
        trial_info: Optional[TrialInfo] = None,
        rendezvous_info: Optional[RendezvousInfo] = None,
        gpu_uuids: Optional[List[str]] = None,
        user: Optional[str] = None,
    ) -> None:
        #: The URL of the master.
        self.master_url = master_url
        #: The unique identifier of this cluster.
        self.cluster_id = cluster_id
        #: The agent (node) this task runs on.
        self.agent_id = agent_id
        #: The slot IDs assigned to this container.
        self.slot_ids = slot_ids
        #: The current task's ID.
        self.task_id = task_id
        #: The current allocation's ID.
        self.allocation_id = allocation_id
        #: The allocation token this task authenticates with.
        self.session_token = session_token
        #: One of TRIAL, NOTEBOOK, SHELL, COMMAND, TENSORBOARD, CHECKPOINT_GC, GENERIC.
        self.task_type = task_type
        self.master_cert_name = master_cert_name
        self.master_cert_file = master_cert_file
        #: The user the task runs for (``DET_USER``).
        self.user = user
        self._latest_checkpoint = latest_checkpoint
        self._trial_info = trial_info
        self._rendezvous_info = rendezvous_info
        self._gpu_uuids = gpu_uuids

    @classmethod
    def _from_env(cls) -> Optional["ClusterInfo"]:
        if not os.environ.get("DET_ALLOCATION_ID"):
            return None
        required = ["DET_MASTER", "DET_TASK_ID", "DET_ALLOCATION_ID", "DET_SESSION_TOKEN"]
        missing = [k for k in required if not os.environ.get(k)]
        if missing:
            raise RuntimeError(
                f"missing environment keys [{', '.join(missing)}]; DET_ALLOCATION_ID is set, so "
                "this looks like a task, but its environment is incomplete"
            )
        task_type = os.environ.get("DET_TASK_TYPE") or (
            "TRIAL" if os.environ.get("DET_TRIAL_ID") else "GENERIC"
        )
        trial_info = None
        if task_type == "TRIAL":
            trial = _load_json_file("trial.json")
            trial_info = TrialInfo._from_dict(trial) if trial else TrialInfo._from_env()
        return cls(
            master_url=os.environ["DET_MASTER"],
            cluster_id=os.environ.get("DET_CLUSTER_ID", ""),
            agent_id=os.environ.get("DET_AGENT_ID", ""),
            slot_ids=_parse_slot_ids(os.environ.get("DET_SLOT_IDS")),
            task_id=os.environ["DET_TASK_ID"],
            allocation_id=os.environ["DET_ALLOCATION_ID"],
            session_token=os.environ["DET_SESSION_TOKEN"],
            task_type=task_type,
            master_cert_name=os.environ.get("DET_MASTER_CERT_NAME") or None,
            master_cert_file=os.environ.get("DET_MASTER_CERT_FILE") or None,
            latest_checkpoint=os.environ.get("DET_LATEST_CHECKPOINT") or None,
            trial_info=trial_info,
            rendezvous_info=_load_rendezvous(),
            gpu_uuids=_load_gpu_uuids(),
            user=os.environ.get("DET_USER") or None,
        )

    @classmethod
    def _from_file(cls) -> Optional["ClusterInfo"]:
        d = _load_json_file("cluster.json")
        if d is None:
            return None
        trial = _load_json_file("trial.json")
        trial_info = TrialInfo._from_dict(trial) if trial else None
        if trial_info is None and d.get("task_type") == "TRIAL":
            trial_info = TrialInfo._from_env()
        return cls(
            master_url=d.get("master_url") or os.environ.get("DET_MASTER", ""),
            cluster_id=d.get("cluster_id", ""),
            agent_id=d.get("agent_id", ""),
            slot_ids=list(d.get("slot_ids") or []),
            task_id=d["task_id"],
            allocation_id=d["allocation_id"],
            session_token=d.get("session_token") or os.environ.get("DET_SESSION_TOKEN", ""),
            task_type=d.get("task_type", "GENERIC"),
            master_cert_name=d.get("master_cert_name"),
            master_cert_file=d.get("master_cert_file"),
            latest_checkpoint=d.get("latest_checkpoint"),
            trial_info=trial_info,
            rendezvous_info=_load_rendezvous(),
            gpu_uuids=_load_gpu_uuids(),
            user=d.get("user") or os.environ.get("DET_USER") or None,
        )

    @property
    def latest_checkpoint(self) -> Optional[str]:
        """The checkpoint (storage ID) this trial should resume from, if any; None otherwise."""
        if self.task_type != "TRIAL":
            return None
        return self._latest_checkpoint

    @property
    def user_data(self) -> Dict[str, Any]:
        """The ``data`` field of the experiment config ({} for non-trial tasks)."""
        if self.task_type != "TRIAL":
            return {}
        return self.trial._config.get("data") or {}

    @property
    def trial(self) -> TrialInfo:
        """The :class:`TrialInfo` of the current trial; raises for non-trial tasks."""
        if self.task_type != "TRIAL":
            raise RuntimeError(
                f'you cannot use the .trial property when .task_type ("{self.task_type}") != '
                '"TRIAL"'
            )
        assert self._trial_info is not None
        return self._trial_info

    @property
    def container_addrs(self) -> List[str]:
        """Addresses of all containers of the allocation, ordered by rank."""
        if self._rendezvous_info is None:
            return ["127.0.0.1"]
        return self._rendezvous_info.container_addrs

    @property
    def container_slot_counts(self) -> List[int]:
        if self._rendezvous_info is None:
            return [len(self.slot_ids)]
        return self._rendezvous_info.container_slot_counts

    @property
    def container_rank(self) -> int:
        """The rank of this container in the allocation."""
        if self._rendezvous_info is None:
            return 0
        return self._rendezvous_info.container_rank

    @property
    def gpu_uuids(self) -> List[str]:
        """UUIDs of the GPUs assigned to this container."""
        return list(self._gpu_uuids or [])


def _load_rendezvous() -> Optional[RendezvousInfo]:
    d = _load_json_file("rendezvous.json")
    if d is not None:
        return RendezvousInfo(
            container_addrs=list(d.get("container_addrs") or ["127.0.0.1"]),
            container_rank=int(d.get("container_rank", 0)),
            container_slot_counts=list(d.get("container_slot_counts") or []),
        )
    addrs = os.environ.get("DET_CONTAINER_ADDRS")
    if addrs:
        slots = _parse_slot_ids(os.environ.get("DET_SLOT_IDS"))
        addr_list = [a for a in addrs.split(",") if a]
        return RendezvousInfo(
            container_addrs=addr_list,
            container_rank=_env_int("DET_CONTAINER_RANK", 0) or 0,
            container_slot_counts=[len(slots)] * len(addr_list),
        )
    return None


def _load_gpu_uuids() -> List[str]:
    d = _load_json_file("resources.json")
    if d is not None:
        return list(d.get("gpu_uuids") or [])
    env = os.environ.get("DET_GPU_UUIDS")
    if env:
        return [u for u in env.split(",") if u]
    return []


_info: Union[ClusterInfo, str, None] = "unloaded"


def get_cluster_info() -> Optional[ClusterInfo]:
    """
    Return the :class:`ClusterInfo` of the current task, or None when not running in a task.
    """
    global _info
    if isinstance(_info, str):
        _info = ClusterInfo._from_file() or ClusterInfo._from_env()
    return _info


def _reset_cluster_info() -> None:
    """Forget the cached ClusterInfo (tests change the environment between cases)."""
    global _info
    _info = "unloaded"
