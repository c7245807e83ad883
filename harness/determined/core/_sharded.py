"""Sharded checkpoints: ``upload(shard=True)`` and ``store_path(shard=True)`` across workers.

Every worker calls in step. With shared_fs or directory storage: The chief picks the storage id and makes a staging directory in
checkpoint storage (``<base>/.shard-<id>``, on the shared filesystem every worker sees); the
workers write their own files into it; then the chief merges the workers' metadata, writes
``metadata.json``, renames the staging directory to the checkpoint and reports it once, and every
worker returns only after that, so a checkpoint any worker got an id for exists.

As in Determined, a file that two workers would both upload is an error (directories may be
shared), and so is a metadata key two workers give different values (dictionaries merge key by
key). Every worker learns of an error at the same step and raises it, and a worker that fails
while writing makes every other one raise instead of waiting for it forever.

With a bucket there is no directory every worker sees: the chief picks the storage id, each
worker writes (store_path) into a local directory of its own or names its own (upload), the
workers compare what they would store (conflicts are found before anything goes up), each uploads
its own files into ``<prefix>/<storage_id>/``, and then the chief uploads metadata.json and
reports. A failed upload on any worker removes the checkpoint's objects and raises on all.
"""

import contextlib
import os
import pathlib
import shutil
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from determined.core import _storage
from determined.core._distributed import DistributedContext


class ShardConflictError(RuntimeError):
    """Two workers would write the same checkpoint file, or give one metadata key two values."""


def merge_resources(per_rank: List[Dict[str, int]]) -> Tuple[Dict[str, int], Dict[str, List[int]]]:
    """The union of every rank's resources, and the files (not directories) that more than one
    rank would upload, with those ranks. A file of one rank where another has a directory of the
    same name is a conflict too."""
    merged: Dict[str, int] = {}
    owners: Dict[str, List[int]] = {}
    files = set()
    for rank, resources in enumerate(per_rank):
        for name, size in resources.items():
            merged[name] = size
            key = name.rstrip("/")
            owners.setdefault(key, [])
            if rank not in owners[key]:
                owners[key].append(rank)
            if not name.endswith("/"):
                files.add(key)
    conflicts = {f: owners[f] for f in sorted(files) if len(owners[f]) > 1}
    return merged, conflicts


def merge_metadata(per_rank: List[Dict[str, Any]]) -> Tuple[Dict[str, Any], Dict[str, List[int]]]:
    """Every rank's metadata merged: dictionaries key by key, other values kept when every rank
    that gives them agrees; a key ranks give different values is a conflict, named by its path
    (``/a/b``) with the ranks that gave it."""
    merged: Dict[str, Any] = {}
    givers: Dict[str, List[int]] = {}
    conflicts: Dict[str, List[int]] = {}

    def merge(into: Dict[str, Any], md: Dict[str, Any], rank: int, prefix: str) -> None:
        for key, value in md.items():
            path = f"{prefix}/{key}"
            givers.setdefault(path, []).append(rank)
            if isinstance(value, dict) and isinstance(into.get(key, {}), dict):
                merge(into.setdefault(key, {}), value, rank, path)
            elif key in into and into[key] != value:
                conflicts[path] = givers[path]
            else:
                into[key] = value

    for rank, md in enumerate(per_rank):
        merge(merged, md or {}, rank, "")
    return merged, conflicts


def _conflict_error(what: str, conflicts: Dict[str, List[int]]) -> ShardConflictError:
    lines = [f"    {name} from ranks {ranks}" for name, ranks in sorted(conflicts.items())]
    return ShardConflictError(f"refusing to save a sharded checkpoint with {what} conflicts:\n"
                              + "\n".join(lines))


def _copy_into(src: pathlib.Path, dst: pathlib.Path, resources: Dict[str, int]) -> None:
    for rel in sorted(resources):
        if rel.endswith("/"):
            (dst / rel).mkdir(parents=True, exist_ok=True)
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / rel, dst / rel)


class ShardedWriter:
    """Writes one sharded checkpoint for a ``CheckpointContext``: ``report(storage_id, resources,
    metadata)`` reports it (the chief's call), ``check(metadata)`` validates the merged metadata,
    ``write_metadata(dir, metadata)`` writes metadata.json."""

    def __init__(
        self,
        dist: DistributedContext,
        storage: "_storage.StorageManager",
        report: Callable[[str, Dict[str, int], Dict[str, Any]], None],
        check: Callable[[Dict[str, Any]], Dict[str, Any]],
        write_metadata: Callable[[pathlib.Path, Dict[str, Any]], None],
    ) -> None:
        self._dist = dist
        self._storage = storage
        self._report = report
        self._check = check
        self._write_metadata = write_metadata

    def _begin(self) -> Tuple[str, pathlib.Path]:
        """Agree on a storage id and a staging directory every worker sees."""
        made: Any = None
        if self._dist.rank == 0:
            storage_id = _storage.new_storage_id()
            try:
                self._storage.begin_shard(storage_id)
                made = storage_id
            except Exception as e:
                made = e
        made = self._dist.broadcast(made)
        if isinstance(made, BaseException):
            raise RuntimeError(f"the chief could not start a sharded checkpoint: {made}")
        storage_id = made
        staging = self._storage.shard_staging(storage_id)
        seen = self._dist.allgather(staging.is_dir())
        if not all(seen):
            if self._dist.rank == 0:
                self._storage.abort_shard(storage_id)
            blind = [r for r, ok in enumerate(seen) if not ok]
            raise RuntimeError(
                f"ranks {blind} cannot see the checkpoint storage directory {staging}: a sharded "
                "checkpoint needs checkpoint storage that every node of the trial shares"
            )
        return storage_id, staging

    def _finish(self, storage_id: str, staging: pathlib.Path, resources: Dict[str, int],
                metadata: Dict[str, Any], failure: Optional[str], list_staging: bool = False) -> None:
        """Every worker's step after writing: agree on success, merge, commit, report. With
        ``list_staging`` the chief lists what the workers wrote into the staging directory as the
        checkpoint's resources."""
        everyone = self._dist.allgather((failure, resources, metadata))
        merged_res, merged_md, error = self._judge(everyone)
        if error is not None:
            if self._dist.rank == 0:
                self._storage.abort_shard(storage_id)
            raise error
        done: Any = None
        if self._dist.rank == 0:
            try:
                if list_staging:
                    merged_res = _storage.list_directory(staging)
                merged_res.pop("metadata.json", None)
                self._write_metadata(staging, merged_md)
                self._storage.commit_shard(storage_id)
                self._report(storage_id, merged_res, merged_md)
            except Exception as e:
                done = f"{type(e).__name__}: {e}"
                self._storage.abort_shard(storage_id)
                self._dist.broadcast(done)
                raise
        done = self._dist.broadcast(done)
        if done is not None:
            raise RuntimeError(f"the chief could not save the sharded checkpoint: {done}")

    def _judge(self, everyone: List[Tuple[Optional[str], Dict[str, int], Dict[str, Any]]]
               ) -> Tuple[Dict[str, int], Dict[str, Any], Optional[BaseException]]:
        """Every worker's (failure, resources, metadata) merged: the resources, the metadata, and
        the error every worker raises (the same on each, since each judges the same reports)."""
        failures = {r: f for r, (f, _, _) in enumerate(everyone) if f is not None}
        error: Optional[BaseException] = None
        merged_md: Dict[str, Any] = {}
        merged_res: Dict[str, int] = {}
        if failures:
            error = RuntimeError(
                "a sharded checkpoint failed on "
                + "; ".join(f"rank {r}: {f}" for r, f in sorted(failures.items()))
            )
        else:
            merged_res, file_conflicts = merge_resources([res for _, res, _ in everyone])
            merged_md, md_conflicts = merge_metadata([md for _, _, md in everyone])
            if file_conflicts:
                error = _conflict_error("file", file_conflicts)
            elif md_conflicts:
                error = _conflict_error("metadata", md_conflicts)
            else:
                try:
                    merged_md = self._check(merged_md)
                except Exception as e:
                    error = e
        return merged_res, merged_md, error

    @staticmethod
    def _raise_problems(problems: List[Optional[str]]) -> None:
        found = {r: p for r, p in enumerate(problems) if p is not None}
        if found:
            raise RuntimeError("a sharded checkpoint failed on "
                               + "; ".join(f"rank {r}: {p}" for r, p in sorted(found.items())))

    def upload(self, ckpt_dir: Optional[pathlib.Path], metadata: Dict[str, Any],
               selector: Optional[Callable[[str], bool]]) -> str:
        has_dir = self._dist.allgather(ckpt_dir is not None)
        if not any(has_dir):
            raise RuntimeError(
                "cannot call .upload(ckpt_dir=None, shard=True) from all ranks; at least one rank "
                "must have a ckpt_dir"
            )
        # Workers of one node that pass the same directory upload it once: its lowest rank does.
        # A worker that cannot read its directory says so in the exchange, so that all raise.
        ident: Any = None
        problem = None
        if ckpt_dir is not None:
            try:
                st = os.stat(ckpt_dir)
                ident = (self._dist.cross_rank, st.st_dev, st.st_ino)
            except OSError as e:
                problem = f"{type(e).__name__}: {e}"
        exchanged = self._dist.allgather((ident, problem))
        self._raise_problems([p for _, p in exchanged])
        idents = [i for i, _ in exchanged]
        mine = ident is not None and idents.index(ident) == self._dist.rank
        resources: Dict[str, int] = {}
        problem = None
        if mine:
            assert ckpt_dir is not None
            try:
                resources = _storage.list_directory(ckpt_dir, selector)
            except Exception as e:
                problem = f"{type(e).__name__}: {e}"
            resources.pop("metadata.json", None)
        exchanged = self._dist.allgather((resources, problem))
        self._raise_problems([p for _, p in exchanged])
        # Conflicts are found before anything is copied.
        _, conflicts = merge_resources([r for r, _ in exchanged])
        if conflicts:
            raise _conflict_error("file", conflicts)
        if not self._storage.direct_access:
            storage_id = self._dist.broadcast(
                _storage.new_storage_id() if self._dist.rank == 0 else None)
            src = ckpt_dir
            push = (lambda: self._storage.upload_paths(src, storage_id, resources)) if mine else None
            self._finish_bucket(storage_id, resources, metadata, None, push)
            return storage_id
        storage_id, staging = self._begin()
        failure = None
        try:
            if mine:
                assert ckpt_dir is not None
                _copy_into(ckpt_dir, staging, resources)
        except Exception as e:
            failure = f"{type(e).__name__}: {e}"
        self._finish(storage_id, staging, resources, metadata, failure)
        return storage_id

    def _finish_bucket(self, storage_id: str, resources: Dict[str, int],
                       metadata: Dict[str, Any], failure: Optional[str],
                       push: Optional[Callable[[], None]]) -> None:
        """The workers' step after writing, for a bucket: agree (conflicts, metadata), then each
        uploads its own files with ``push``, then the chief uploads metadata.json and reports.
        A failed upload anywhere removes what went up and makes every worker raise."""
        everyone = self._dist.allgather((failure, resources, metadata))
        merged_res, merged_md, error = self._judge(everyone)
        if error is not None:
            raise error  # nothing is in the bucket yet
        pushed = None
        try:
            if push is not None:
                push()
        except Exception as e:
            pushed = f"{type(e).__name__}: {e}"
        pushes = self._dist.allgather(pushed)
        done: Any = None
        if self._dist.rank == 0:
            try:
                self._raise_problems(pushes)
                merged_res.pop("metadata.json", None)
                with self._storage.store_path(storage_id) as path:
                    self._write_metadata(path, merged_md)
                self._report(storage_id, merged_res, merged_md)
            except Exception as e:
                done = f"{type(e).__name__}: {e}"
                self._storage.discard(storage_id)
        done = self._dist.broadcast(done)
        if done is not None:
            self._raise_problems(pushes)
            raise RuntimeError(f"the chief could not save the sharded checkpoint: {done}")

    @contextlib.contextmanager
    def _store_path_bucket(self, metadata: Dict[str, Any]) -> Iterator[Tuple[pathlib.Path, str]]:
        """Each worker writes into a local directory of its own; what they wrote is compared
        (a file two workers wrote is a conflict) before each uploads its own."""
        storage_id = self._dist.broadcast(
            _storage.new_storage_id() if self._dist.rank == 0 else None)
        local = self._storage.local_scratch(f"shard-{storage_id}")
        try:
            try:
                yield local, storage_id
            except BaseException as e:
                try:
                    self._finish_bucket(storage_id, {}, metadata, f"{type(e).__name__}: {e}", None)
                except Exception:
                    pass
                raise
            resources: Dict[str, int] = {}
            problem = None
            try:
                resources = _storage.list_directory(local)
                resources.pop("metadata.json", None)
            except Exception as e:
                problem = f"{type(e).__name__}: {e}"
            self._finish_bucket(
                storage_id, resources, metadata, problem,
                lambda: self._storage.upload_paths(local, storage_id, resources))
        finally:
            shutil.rmtree(local, ignore_errors=True)

    @contextlib.contextmanager
    def store_path(self, metadata: Dict[str, Any]) -> Iterator[Tuple[pathlib.Path, str]]:
        if not self._storage.direct_access:
            with self._store_path_bucket(metadata) as out:
                yield out
            return
        storage_id, staging = self._begin()
        try:
            yield staging, storage_id
        except BaseException as e:
            # Tell the others (who wait in _finish) rather than leave them waiting; this worker
            # raises its own error.
            try:
                self._finish(storage_id, staging, {}, metadata, f"{type(e).__name__}: {e}")
            except Exception:
                pass
            raise
        # Every worker wrote into the one directory, so the chief lists it once all are done: no
        # worker's files can be told from another's, as with Determined's shared_fs storage.
        self._finish(storage_id, staging, {}, metadata, None, list_staging=True)
