import contextlib
import enum
import json
import logging
import os
import pathlib
import shutil
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

from determined import _session
from determined.core import _sharded, _storage
from determined.core._distributed import DistributedContext

logger = logging.getLogger("determined.core")


class DownloadMode(enum.Enum):
    """
    How ``.download()`` and ``.restore_path()`` coordinate workers. With
    ``LocalWorkersShareDownload`` (the default) workers on one node share one download and must
    call in step; with ``NoSharedDownload`` there is no coordination.
    """

    LocalWorkersShareDownload = "LOCAL_WORKERS_SHARE_DOWNLOAD"
    NoSharedDownload = "NO_SHARED_DOWNLOAD"


def _write_metadata(ckpt_dir: Union[str, os.PathLike], metadata: Dict[str, Any]) -> None:
    path = pathlib.Path(os.fspath(ckpt_dir)) / "metadata.json"
    with path.open("w") as f:
        f.write(json.dumps(_session._sanitize(metadata), indent=2))


def _check_metadata(metadata: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    metadata = dict(metadata or {})
    if "steps_completed" not in metadata:
        raise ValueError(
            "metadata for reported checkpoints, in the current implementation, requires a "
            "'steps_completed' item, which has not been provided"
        )
    return metadata


class CheckpointContext:
    """
    ``CheckpointContext`` saves checkpoints to the experiment's checkpoint storage and reports
    them to the master, and restores them.
    """

    def __init__(
        self,
        dist: DistributedContext,
        storage_manager: "_storage.StorageManager",
        session: Optional[_session.Session],
        task_id: Optional[str],
        allocation_id: Optional[str],
        storage_id: Optional[int] = None,
        tensorboard_sync: Optional[Callable[[], None]] = None,
    ) -> None:
        self._dist = dist
        self._storage_manager = storage_manager
        self._session = session
        self._task_id = task_id
        self._allocation_id = allocation_id
        self._storage_id = storage_id
        self._tensorboard_sync = tensorboard_sync

    def _require_chief(self, what: str) -> None:
        if self._dist.rank != 0:
            raise RuntimeError(
                f"cannot call CheckpointContext.{what}(shard=False) from non-chief worker "
                f"(rank={self._dist.rank})"
            )

    def _checked(self, metadata: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        # Off-cluster nothing is reported, so nothing is required.
        return _check_metadata(metadata) if self._session is not None else dict(metadata or {})

    def _sharded(self) -> _sharded.ShardedWriter:
        return _sharded.ShardedWriter(
            self._dist,
            self._storage_manager,
            self._report_checkpoint,
            self._checked,
            _write_metadata,
        )

    @contextlib.contextmanager
    def store_path(
        self, metadata: Optional[Dict[str, Any]] = None, *, shard: bool = False
    ) -> Iterator[Tuple[pathlib.Path, str]]:
        """
        Context manager yielding ``(path, storage_id)``: save your checkpoint files under
        ``path``. On exit ``metadata.json`` is written, the directory becomes the checkpoint
        ``<storage>/<storage_id>`` and the checkpoint is reported to the master. ``metadata`` must
        contain ``steps_completed``.

        .. code:: python

           with core_context.checkpoint.store_path({"steps_completed": 10}) as (path, uuid):
               save_model(path)

        Only the chief (rank 0) may call it, unless ``shard=True``: then every worker calls it in
        step, gets the same directory (checkpoint storage must be shared by the trial's nodes)
        and writes its own files into it; the workers' metadata is merged (a key given two
        values raises on every worker) and the chief reports the one checkpoint.
        """
        if shard:
            with self._sharded().store_path(dict(metadata or {})) as out:
                yield out
            return
        self._require_chief("store_path")
        metadata = self._checked(metadata)
        storage_id = _storage.new_storage_id()
        with self._storage_manager.store_path(storage_id) as path:
            yield path, storage_id
            resources = _storage.list_directory(path)
            _write_metadata(path, metadata)
        self._report_checkpoint(storage_id, resources, metadata)

    def upload(
        self,
        ckpt_dir: Optional[Union[str, os.PathLike]],
        metadata: Optional[Dict[str, Any]] = None,
        *,
        shard: bool = False,
        selector: Optional[Callable[[str], bool]] = None,
    ) -> str:
        """
        Copy the contents of ``ckpt_dir`` (the directory name itself is not kept) into a new
        checkpoint, report it, and return its ``storage_id``. ``selector(relpath)`` may filter
        the files.

        Only the chief (rank 0) may call it, unless ``shard=True``: then every worker calls it in
        step, each with its own ``ckpt_dir`` (or None when it has nothing to add), and the one
        checkpoint holds the union of their files and merged metadata. A file that two workers
        would upload, or a metadata key they give different values, raises on every worker
        before anything is stored; workers of one node passing the same directory upload it once.
        """
        if shard:
            src = pathlib.Path(os.fspath(ckpt_dir)) if ckpt_dir is not None else None
            return self._sharded().upload(src, dict(metadata or {}), selector)
        self._require_chief("upload")
        metadata = self._checked(metadata)
        storage_id = _storage.new_storage_id()
        if ckpt_dir is None:
            with self._storage_manager.store_path(storage_id) as path:
                resources: Dict[str, int] = {}
                _write_metadata(path, metadata)
        elif not self._storage_manager.direct_access:
            # A bucket: the files go up from where they are, then metadata.json; a failure
            # removes what went up.
            src = pathlib.Path(os.fspath(ckpt_dir))
            resources = _storage.list_directory(src, selector)
            resources.pop("metadata.json", None)
            try:
                self._storage_manager.upload_paths(src, storage_id, resources)
            except BaseException:
                self._storage_manager.discard(storage_id)
                raise
            with self._storage_manager.store_path(storage_id) as path:
                _write_metadata(path, metadata)
        else:
            src = pathlib.Path(os.fspath(ckpt_dir))
            resources = _storage.list_directory(src, selector)
            resources.pop("metadata.json", None)
            with self._storage_manager.store_path(storage_id) as path:
                for rel in sorted(resources):
                    if rel.endswith("/"):
                        (path / rel).mkdir(parents=True, exist_ok=True)
                        continue
                    (path / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src / rel, path / rel)
                _write_metadata(path, metadata)
        self._report_checkpoint(storage_id, resources, metadata)
        return storage_id

    def download(
        self,
        storage_id: str,
        ckpt_dir: Union[str, os.PathLike],
        download_mode: DownloadMode = DownloadMode.LocalWorkersShareDownload,
        *,
        selector: Optional[Callable[[str], bool]] = None,
    ) -> None:
        """Copy checkpoint ``storage_id`` into ``ckpt_dir`` (created if missing)."""
        download_mode = DownloadMode(download_mode)
        if download_mode == DownloadMode.NoSharedDownload:
            self._storage_manager.download(storage_id, ckpt_dir, selector)
            return
        selector = self._local_selector(storage_id, selector)
        failed: Optional[BaseException] = None
        if self._dist.local_rank == 0:
            try:
                self._storage_manager.download(storage_id, ckpt_dir, selector)
            except Exception as e:
                failed = e
        # The node's other workers wait for the download, and fail with it.
        failed = self._dist.broadcast_local(failed)
        if failed is not None:
            raise failed

    def _local_selector(
        self, storage_id: str, selector: Optional[Callable[[str], bool]]
    ) -> Optional[Callable[[str], bool]]:
        """For the local chief, who downloads for its node: a selector of every file that any
        local worker's selector picks (None, all of them, where a worker has none)."""
        if any(self._dist.allgather_local(selector is not None)):
            names = None
            if self._dist.local_rank == 0:
                names = sorted(self._storage_manager.list(storage_id))
            names = self._dist.broadcast_local(names)
            picked = self._dist.gather_local(
                [n for n in names if selector is None or selector(n)]
            )
            if self._dist.local_rank == 0:
                assert picked is not None
                union = set().union(*picked)
                selector = lambda n: n in union  # noqa: E731
        return selector

    @contextlib.contextmanager
    def _restore_shared(
        self, storage_id: str, selector: Optional[Callable[[str], bool]]
    ) -> Iterator[pathlib.Path]:
        """restore_path from a bucket for a node's workers: the local chief downloads once, every
        local worker uses its directory, and the chief removes it once all are done."""
        selector = self._local_selector(storage_id, selector)
        with contextlib.ExitStack() as stack:
            got: Any = None
            if self._dist.local_rank == 0:
                try:
                    got = stack.enter_context(
                        self._storage_manager.restore_path(storage_id, selector)
                    )
                except Exception as e:
                    got = e
            got = self._dist.broadcast_local(got)
            if isinstance(got, BaseException):
                raise got
            try:
                yield got
            finally:
                self._dist.gather_local(None)

    @contextlib.contextmanager
    def restore_path(
        self,
        storage_id: str,
        download_mode: DownloadMode = DownloadMode.LocalWorkersShareDownload,
        *,
        selector: Optional[Callable[[str], bool]] = None,
    ) -> Iterator[pathlib.Path]:
        """
        Context manager yielding a local path holding checkpoint ``storage_id``. With shared_fs
        or directory storage this is the checkpoint directory itself (treat it as read-only);
        from a bucket, a scratch directory the checkpoint (the files ``selector`` picks) is
        downloaded into, removed afterwards, which a node's workers share by default.
        """
        download_mode = DownloadMode(download_mode)
        if (download_mode == DownloadMode.LocalWorkersShareDownload
                and not self._storage_manager.direct_access):
            with self._restore_shared(storage_id, selector) as path:
                yield path
            return
        with self._storage_manager.restore_path(storage_id, selector) as path:
            if download_mode == DownloadMode.LocalWorkersShareDownload:
                self._dist.broadcast_local(path)
            try:
                yield path
            finally:
                if download_mode == DownloadMode.LocalWorkersShareDownload:
                    self._dist.gather_local(None)

    def get_metadata(self, storage_id: str) -> Dict[str, Any]:
        """The metadata of checkpoint ``storage_id``, from the master."""
        assert self._session is not None
        r = self._session.get(f"/api/v1/checkpoints/{storage_id}").json() or {}
        ckpt = r.get("checkpoint") or {}
        return ckpt.get("metadata") or {}

    def delete(self, storage_id: str, globs: Optional[List[str]] = None) -> None:
        """Delete checkpoint ``storage_id`` (or only the files matching ``globs``) from storage,
        then tell the master which resources remain."""
        remaining = self._storage_manager.delete(storage_id, globs)
        if self._session is None:
            return
        body = {
            "checkpoints": [
                {"uuid": storage_id, "resources": {"resources": remaining}},
            ]
        }
        self._session.patch("/api/v1/checkpoints", json=body)

    def _report_checkpoint(
        self, storage_id: str, resources: Dict[str, int], metadata: Dict[str, Any]
    ) -> None:
        assert self._session is not None
        body: Dict[str, Any] = {
            "uuid": storage_id,
            "taskId": self._task_id,
            "allocationId": self._allocation_id,
            "reportTime": datetime.now(timezone.utc).isoformat(),
            "resources": resources,
            "metadata": metadata,
            "state": "STATE_COMPLETED",
            "training": {},
        }
        if self._storage_id is not None:
            body["storageId"] = self._storage_id
        self._session.post("/api/v1/checkpoints", json=body)
        logger.info(f"Reported checkpoint to master {storage_id}")
        if self._tensorboard_sync is not None:
            self._tensorboard_sync()


class DummyCheckpointContext(CheckpointContext):
    """Off-cluster checkpointing: files go to local storage, nothing is reported."""

    def __init__(
        self, dist: DistributedContext, storage_manager: "_storage.StorageManager"
    ) -> None:
        super().__init__(dist, storage_manager, None, None, None)

    def _report_checkpoint(
        self, storage_id: str, resources: Dict[str, int], metadata: Dict[str, Any]
    ) -> None:
        logger.info(f"saved checkpoint {storage_id}")

    def get_metadata(self, storage_id: str) -> Dict[str, Any]:
        # Off-cluster there is no master; read metadata.json from storage instead.
        with self._storage_manager.restore_path(storage_id) as path:
            p = path / "metadata.json"
            if not p.exists():
                return {}
            with p.open() as f:
                out = json.load(f)
        return out if isinstance(out, dict) else {}
