"""Checkpoint storage in object stores (s3, gcs, azure): what the three backends share.

A checkpoint ``<storage_id>`` is the objects ``<prefix>/<storage_id>/<relative path>`` of a bucket
(``<storage_id>/<relative path>`` without a prefix), one per file, plus an empty object
``<prefix>/<storage_id>/<dir>/`` per directory, as Determined lays them out, so checkpoints either
one wrote are found by the other. A backend supplies five primitives on object names (put a file,
put an empty object, get a file, list a prefix, delete names); everything else (store_path,
restore_path, selectors, delete with globs, sharded uploads) is written once here on top of them.

Nothing here imports a cloud SDK: each backend imports its own, only when it is built, and says
which package is missing when it cannot.
"""

import concurrent.futures
import contextlib
import glob
import logging
import os
import pathlib
import posixpath
import shutil
import tempfile
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

logger = logging.getLogger("determined.core")

Selector = Optional[Callable[[str], bool]]

#: Files at least this large go up in parts (multipart, blocks, resumable sessions) and come down
#: in ranges; smaller ones in one request.
MULTIPART_THRESHOLD = 64 * 1024 * 1024
#: The size of one part of such a file.
PART_SIZE = 8 * 1024 * 1024
#: How many files (and parts of one large file) move at once.
CONCURRENCY = 10


class StorageError(RuntimeError):
    """An object store refused or failed an operation: names the storage type, the bucket and the
    cause (a bad credential, a missing bucket, an unreachable endpoint)."""

    def __init__(self, kind: str, bucket: str, cause: str, noun: str = "bucket") -> None:
        super().__init__(f"{kind} checkpoint storage, {noun} {bucket!r}: {cause}")
        self.kind = kind
        self.bucket = bucket
        self.cause = cause
        self.noun = noun

    def __reduce__(self) -> Any:
        # Workers pass errors to each other pickled.
        return (StorageError, (self.kind, self.bucket, self.cause, self.noun))


class CheckpointNotFoundError(FileNotFoundError):
    """The bucket holds no object of the checkpoint."""


def missing_package(kind: str, module: str, package: str, debian: str) -> ImportError:
    return ImportError(
        f"{kind} checkpoint storage needs the Python module {module!r}, which this task's Python "
        f"lacks: install {package} (pip install {package}, or Debian's {debian})"
    )


def normalize_prefix(prefix: Optional[str]) -> str:
    """``prefix`` without leading or trailing slashes; ``..`` is refused, as Determined does."""
    if not prefix:
        return ""
    if prefix == ".." or prefix.startswith("../") or prefix.endswith("/..") or "/../" in prefix:
        raise ValueError(f"checkpoint storage prefix {prefix!r} must not contain '..'")
    out = posixpath.normpath(prefix).strip("/")
    return "" if out == "." else out


def _check_id(storage_id: str) -> str:
    if not storage_id or "/" in storage_id or storage_id in (".", ".."):
        raise ValueError(f"invalid storage_id {storage_id!r}")
    return storage_id


def with_directories(names: Dict[str, int]) -> Dict[str, int]:
    """``names`` with every directory that leads to one of them, as ``"dir/"`` of size 0."""
    out = dict(names)
    for name in names:
        parts = name.rstrip("/").split("/")[:-1]
        for i in range(1, len(parts) + 1):
            out.setdefault("/".join(parts[:i]) + "/", 0)
    return out


def remaining_after_globs(resources: Dict[str, int], globs: List[str]) -> Dict[str, int]:
    """The resources that deleting ``globs`` leaves, with Python's ``glob.glob(recursive=True)``
    rules (``*`` stops at ``/``, ``**`` spans directories, a matched directory goes with all it
    holds), as Determined applies them to every storage type: the names are laid out as empty
    files in a scratch directory and globbed there."""
    resources = with_directories(resources)
    scratch = tempfile.mkdtemp(prefix="det-globs-")
    try:
        root = pathlib.Path(scratch, "c")
        root.mkdir()
        for name in resources:
            path = root.joinpath(name)
            if name.endswith("/"):
                path.mkdir(parents=True, exist_ok=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()
        for g in globs:
            for hit in glob.glob(os.path.join(glob.escape(str(root)), g), recursive=True):
                if os.path.realpath(hit) == os.path.realpath(root):
                    shutil.rmtree(root)
                    root.mkdir()
                elif os.path.isdir(hit):
                    shutil.rmtree(hit)
                elif os.path.exists(hit):
                    os.remove(hit)
        left = set()
        for dirpath, dirnames, filenames in os.walk(root):
            rel = pathlib.Path(dirpath).relative_to(root).as_posix()
            pre = "" if rel == "." else rel + "/"
            left.update(pre + d + "/" for d in dirnames)
            left.update(pre + f for f in filenames)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {k: v for k, v in resources.items() if k in left}


class CloudStorageManager:
    """Checkpoints as objects of one bucket. Subclasses implement the object primitives
    (``_put_file``, ``_put_empty``, ``_get_file``, ``_list``, ``_delete``) and ``_translate``,
    which turns an SDK's exception into a :class:`StorageError` (or returns None to let it be)."""

    #: Workers of a sharded checkpoint each upload their own files: there is no directory they
    #: all see, so conflicts are found by comparing what they list.
    direct_access = False
    kind = "cloud"
    #: What the store calls a bucket, in messages.
    noun = "bucket"

    def __init__(self, bucket: str, prefix: Optional[str], temp_dir: Optional[str]) -> None:
        if not bucket:
            raise ValueError(f"{self.kind} checkpoint_storage requires a bucket")
        self.bucket = bucket
        self.prefix = normalize_prefix(prefix)
        self._base_path = pathlib.Path(temp_dir or tempfile.gettempdir())

    @property
    def base_path(self) -> pathlib.Path:
        """A local directory for the task's scratch files (checkpoints on their way up or down)."""
        return self._base_path

    def describe(self) -> str:
        """``s3://bucket/prefix``: where this manager keeps checkpoints, for logs and errors."""
        scheme = {"s3": "s3", "gcs": "gs", "azure": "azure"}.get(self.kind, self.kind)
        return f"{scheme}://{self.bucket}/{self.prefix}".rstrip("/")

    def key(self, *parts: str) -> str:
        """The object name of ``parts`` under the prefix."""
        return "/".join(p for p in (self.prefix,) + parts if p)

    def _checkpoint_prefix(self, storage_id: str) -> str:
        return self.key(_check_id(storage_id)) + "/"

    # --- primitives, per backend --------------------------------------------------------------

    def _put_file(self, path: str, key: str, size: int) -> None:
        raise NotImplementedError

    def _put_empty(self, key: str) -> None:
        raise NotImplementedError

    def _get_file(self, key: str, path: str, size: int) -> None:
        raise NotImplementedError

    def _list(self, prefix: str) -> Dict[str, int]:
        raise NotImplementedError

    def _delete(self, keys: List[str]) -> None:
        raise NotImplementedError

    def _translate(self, e: BaseException, what: str) -> Optional[StorageError]:
        return None

    def _error(self, cause: str) -> StorageError:
        return StorageError(self.kind, self.bucket, cause, self.noun)

    def _call(self, what: str, fn: Callable[..., object], *args: object) -> object:
        """Run one primitive, turning the SDK's errors into a StorageError that names the bucket
        (the SDK's traceback is left out: its message is in ours)."""
        try:
            return fn(*args)
        except StorageError:
            raise
        except Exception as e:
            err = self._translate(e, what)
            if err is None:
                raise
        raise err

    def _probe(self) -> None:
        """One cheap request that fails as every later one would: wrong credentials, a missing
        bucket, an unreachable endpoint."""
        self._list(self.key("det-access-check") + "/")

    def check_access(self) -> None:
        """Raise a StorageError naming the bucket and the cause unless the bucket can be read;
        a trial calls it at start, not after hours of training at its first checkpoint."""
        self._call("check access", self._probe)

    # --- files --------------------------------------------------------------------------------

    def upload_paths(self, src: Union[str, os.PathLike], storage_id: str,
                     resources: Dict[str, int]) -> None:
        """Upload the files (and directories, as empty objects) ``resources`` names from ``src``
        into checkpoint ``storage_id``; several at a time, large files in parts."""
        src = os.fspath(src)
        base = self._checkpoint_prefix(storage_id)
        logger.info(f"uploading checkpoint {storage_id} to {self.describe()}")
        jobs: List[Tuple[str, Callable[..., object], Tuple[object, ...]]] = []
        for rel in sorted(resources):
            key = base + rel
            if rel.endswith("/"):
                jobs.append((f"upload {key}", self._put_empty, (key,)))
            else:
                path = os.path.join(src, rel)
                jobs.append((f"upload {key}", self._put_file, (path, key, os.path.getsize(path))))
        self._run_all(jobs)

    def _release(self) -> None:
        """Close what the worker threads of one batch of transfers opened (a backend's hook)."""

    def _run_all(self, jobs: List[Tuple[str, Callable[..., object], Tuple[object, ...]]]) -> None:
        try:
            self._run_jobs(jobs)
        finally:
            self._release()

    def _run_jobs(self, jobs: List[Tuple[str, Callable[..., object], Tuple[object, ...]]]) -> None:
        if len(jobs) <= 1:
            for what, fn, args in jobs:
                self._call(what, fn, *args)
            return
        with concurrent.futures.ThreadPoolExecutor(CONCURRENCY) as pool:
            futures = [pool.submit(self._call, what, fn, *args) for what, fn, args in jobs]
            first: Optional[BaseException] = None
            for f in futures:
                try:
                    f.result()
                except BaseException as e:
                    if first is None:
                        first = e
                        for other in futures:
                            other.cancel()
            if first is not None:
                raise first

    def upload(self, src: Union[str, os.PathLike], dst: str,
               selector: Selector = None) -> Dict[str, int]:
        """Upload the files of ``src`` as checkpoint ``dst``; return the uploaded resources."""
        from determined.core import _storage

        resources = _storage.list_directory(src, selector)
        self.upload_paths(src, dst, resources)
        return resources

    def list(self, storage_id: str) -> Dict[str, int]:
        """The resources of checkpoint ``storage_id``: relative names and sizes, directories as
        ``"dir/"``; empty when the bucket holds none."""
        base = self._checkpoint_prefix(storage_id)
        objects = self._call(f"list {base}", self._list, base)
        assert isinstance(objects, dict)
        out = {k[len(base):]: v for k, v in objects.items() if k != base}
        return with_directories(out)

    def download(self, src: str, dst: Union[str, os.PathLike], selector: Selector = None) -> None:
        """Download checkpoint ``src`` (the files ``selector`` picks) into ``dst``."""
        base = self._checkpoint_prefix(src)
        objects = self._call(f"list {base}", self._list, base)
        assert isinstance(objects, dict)
        if not objects:
            raise CheckpointNotFoundError(
                f"checkpoint {src} not found in {self.kind} checkpoint storage at "
                f"{self.describe()}/{src}/"
            )
        dst = os.fspath(dst)
        os.makedirs(dst, exist_ok=True)
        logger.info(f"downloading checkpoint {src} from {self.describe()}")
        jobs: List[Tuple[str, Callable[..., object], Tuple[object, ...]]] = []
        for key, size in sorted(objects.items()):
            rel = key[len(base):]
            if not rel or (selector is not None and not selector(rel)):
                continue
            parts = [p for p in rel.split("/") if p]
            if any(p in (".", "..") for p in parts):
                raise self._error(f"refusing object {key!r}: it names a path outside the checkpoint")
            target = os.path.join(dst, *parts)
            if rel.endswith("/"):
                os.makedirs(target, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            jobs.append((f"download {key}", self._get_file, (key, target, size)))
        self._run_all(jobs)

    def delete(self, storage_id: str, globs: Optional[List[str]] = None) -> Dict[str, int]:
        """Delete the whole checkpoint (``globs`` None, empty or holding ``**/*``) or the files
        and directories ``globs`` match; return the resources that remain."""
        base = self._checkpoint_prefix(storage_id)
        objects = self._call(f"list {base}", self._list, base)
        assert isinstance(objects, dict)
        remaining: Dict[str, int] = {}
        if globs and "**/*" not in globs:
            rel = {k[len(base):]: v for k, v in objects.items() if k != base}
            remaining = remaining_after_globs(rel, globs)
        doomed = sorted(k for k in objects if k == base or k[len(base):] not in remaining)
        logger.info(f"deleting {len(doomed)} objects of checkpoint {storage_id} from "
                    f"{self.describe()}")
        if doomed:
            self._call(f"delete {base}", self._delete, doomed)
        return remaining

    # --- what CheckpointContext uses ----------------------------------------------------------

    def _scratch(self, what: str) -> pathlib.Path:
        self._base_path.mkdir(parents=True, exist_ok=True)
        return pathlib.Path(tempfile.mkdtemp(prefix=f"det-{what}-", dir=self._base_path))

    @contextlib.contextmanager
    def store_path(self, storage_id: str) -> Iterator[pathlib.Path]:
        """Yield a local scratch directory; on success its files are uploaded as checkpoint
        ``storage_id``; in any case it is removed."""
        _check_id(storage_id)
        tmp = self._scratch(f"store-{storage_id}")
        try:
            yield tmp
            from determined.core import _storage

            try:
                self.upload_paths(tmp, storage_id, _storage.list_directory(tmp))
            except BaseException:
                self.discard(storage_id)
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def discard(self, storage_id: str) -> None:
        """Delete what a failed upload left of checkpoint ``storage_id``, if it can."""
        try:
            self.delete(storage_id)
        except Exception as e:
            logger.warning(f"could not remove the partial checkpoint {storage_id}: {e}")

    @contextlib.contextmanager
    def restore_path(self, storage_id: str, selector: Selector = None) -> Iterator[pathlib.Path]:
        """Download checkpoint ``storage_id`` into a scratch directory, yield it, remove it."""
        tmp = self._scratch(f"restore-{_check_id(storage_id)}")
        try:
            self.download(storage_id, tmp, selector)
            yield tmp
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def local_scratch(self, what: str) -> pathlib.Path:
        """A fresh local directory under the scratch base (a shard's files before upload)."""
        return self._scratch(what)

    def upload_tensorboard_files(self, files: List[Tuple[pathlib.Path, str]]) -> None:
        """Upload TensorBoard files: each local path to its name under the prefix (Determined's
        ``<cluster>/tensorboard/experiment/<id>/trial/<id>/...``)."""
        jobs: List[Tuple[str, Callable[..., object], Tuple[object, ...]]] = []
        for path, name in files:
            key = self.key(name)
            jobs.append((f"upload {key}", self._put_file, (str(path), key, path.stat().st_size)))
        self._run_all(jobs)

    def list_prefix(self, name: str) -> Dict[str, int]:
        """Every object under ``<prefix>/<name>/`` by its name relative to the prefix."""
        base = self.key(name.strip("/")) + "/"
        objects = self._call(f"list {base}", self._list, base)
        assert isinstance(objects, dict)
        cut = len(self.key()) + 1 if self.prefix else 0
        return {k[cut:]: v for k, v in objects.items()}


def split_container(container: str) -> Tuple[str, str]:
    """Azure's ``container`` may carry a path (``ckpts/team``): the container and the prefix."""
    name, _, rest = container.strip("/").partition("/")
    return name, rest

