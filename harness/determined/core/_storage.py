"""Checkpoint storage backends: shared_fs and directory (a filesystem the task can see) here;
s3, gcs and azure (object stores) in ``_cloud`` and its backends, built by ``build``.
"""

import contextlib
import glob
import logging
import os
import pathlib
import shutil
import tempfile
import uuid
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Union

logger = logging.getLogger("determined.core")

#: Where upstream mounts a shared_fs host_path inside containers.
SHARED_FS_CONTAINER_PATH = "/determined_shared_fs"

Selector = Optional[Callable[[str], bool]]

if TYPE_CHECKING:
    from determined.core._cloud import CloudStorageManager

    #: A checkpoint storage: a filesystem directory or a bucket.
    StorageManager = Union["SharedFSStorageManager", CloudStorageManager]


class UnsupportedStorageError(NotImplementedError):
    """A checkpoint storage this harness cannot use."""


def makedirs_shared(path: pathlib.Path) -> None:
    """Make ``path`` and its missing parents as directories that every user's tasks may add to:
    mode 1777, sticky as /tmp is, so each user deletes only their own. Tasks run as their owners'
    Unix users, and shared storage holds everyone's checkpoints and TensorBoard files; a directory
    the first writer made 0755 would shut every other user out."""
    missing = []
    p = path
    while not p.exists() and p.parent != p:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            continue  # another task made it, shared as well
        os.chmod(d, 0o1777)


class SharedFSStorageManager:
    """Stores each checkpoint as the directory ``<base_path>/<storage_id>/``."""

    #: Every worker of a sharded checkpoint writes into one directory they all see.
    direct_access = True

    def __init__(self, base_path: Union[str, os.PathLike], shared: bool = False) -> None:
        self._base_path = pathlib.Path(os.fspath(base_path))
        # A cluster's storage holds every user's checkpoints: its base is made as /tmp is (see
        # makedirs_shared). One's own directory off-cluster is not.
        self._shared = shared

    @property
    def base_path(self) -> pathlib.Path:
        return self._base_path

    def _path(self, storage_id: str) -> pathlib.Path:
        if not storage_id or "/" in storage_id or storage_id in (".", ".."):
            raise ValueError(f"invalid storage_id {storage_id!r}")
        return self._base_path / storage_id

    @contextlib.contextmanager
    def store_path(self, storage_id: str) -> Iterator[pathlib.Path]:
        """Yield a fresh temporary directory next to the final location; on success it is renamed
        to ``<base>/<storage_id>`` atomically, on failure removed."""
        if self._shared:
            makedirs_shared(self._base_path)
        else:
            self._base_path.mkdir(parents=True, exist_ok=True)
        final = self._path(storage_id)
        if final.exists():
            raise FileExistsError(f"checkpoint directory {final} already exists")
        tmp = pathlib.Path(tempfile.mkdtemp(prefix=f".tmp-{storage_id}-", dir=self._base_path))
        try:
            yield tmp
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        os.chmod(tmp, 0o755)
        os.replace(tmp, final)

    def shard_staging(self, storage_id: str) -> pathlib.Path:
        """Where every worker of a sharded checkpoint writes (the same directory on every node of a
        shared filesystem) until the chief commits it as ``<base>/<storage_id>``."""
        return self._base_path / f".shard-{self._path(storage_id).name}"

    def begin_shard(self, storage_id: str) -> pathlib.Path:
        """Make the shard staging directory of ``storage_id`` (the chief does, once)."""
        if self._shared:
            makedirs_shared(self._base_path)
        else:
            self._base_path.mkdir(parents=True, exist_ok=True)
        if self._path(storage_id).exists():
            raise FileExistsError(f"checkpoint directory {self._path(storage_id)} already exists")
        staging = self.shard_staging(storage_id)
        staging.mkdir(mode=0o700)
        return staging

    def commit_shard(self, storage_id: str) -> None:
        """Make the staging directory the checkpoint ``<base>/<storage_id>``, atomically."""
        staging = self.shard_staging(storage_id)
        os.chmod(staging, 0o755)
        os.replace(staging, self._path(storage_id))

    def abort_shard(self, storage_id: str) -> None:
        shutil.rmtree(self.shard_staging(storage_id), ignore_errors=True)

    @contextlib.contextmanager
    def restore_path(self, storage_id: str, selector: Selector = None) -> Iterator[pathlib.Path]:
        path = self._path(storage_id)
        if not path.is_dir():
            raise FileNotFoundError(f"checkpoint {storage_id} not found in storage at {path}")
        # Shared filesystems need no download: the checkpoint directory is used in place.
        yield path

    def upload(
        self, src: Union[str, os.PathLike], dst: str, selector: Selector = None
    ) -> Dict[str, int]:
        """Copy the files of ``src`` into ``<base>/<dst>``; return the copied resources."""
        src_path = pathlib.Path(os.fspath(src))
        resources = list_directory(src_path, selector)
        with self.store_path(dst) as tmp:
            for rel in sorted(resources):
                if rel.endswith("/"):
                    (tmp / rel).mkdir(parents=True, exist_ok=True)
                    continue
                (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src_path / rel, tmp / rel)
        return resources

    def download(
        self, src: str, dst: Union[str, os.PathLike], selector: Selector = None
    ) -> None:
        path = self._path(src)
        if not path.is_dir():
            raise FileNotFoundError(f"checkpoint {src} not found in storage at {path}")
        dst_path = pathlib.Path(os.fspath(dst))
        dst_path.mkdir(parents=True, exist_ok=True)
        for rel in sorted(list_directory(path, selector)):
            if rel.endswith("/"):
                (dst_path / rel).mkdir(parents=True, exist_ok=True)
                continue
            (dst_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path / rel, dst_path / rel)

    def delete(self, storage_id: str, globs: Optional[List[str]] = None) -> Dict[str, int]:
        """Delete the whole checkpoint (globs None) or the files matching ``globs``; return the
        resources that remain."""
        path = self._path(storage_id)
        if not path.exists():
            return {}
        if not globs or "**/*" in globs:
            shutil.rmtree(path)
            return {}
        # Python's glob rules, as Determined applies them to every storage type: "*" stops at
        # "/", "**" spans directories, and a directory matched goes with all it holds.
        root = os.path.realpath(path)
        for g in globs:
            for hit in glob.glob(os.path.join(glob.escape(str(path)), g), recursive=True):
                if os.path.realpath(hit) == root:
                    continue
                if os.path.isdir(hit) and not os.path.islink(hit):
                    shutil.rmtree(hit, ignore_errors=True)
                elif os.path.lexists(hit):
                    os.remove(hit)
        return list_directory(path)

    def list(self, storage_id: str) -> Dict[str, int]:
        return list_directory(self._path(storage_id))


def list_directory(root: Union[str, os.PathLike], selector: Selector = None) -> Dict[str, int]:
    """Map each file under ``root`` (relative POSIX path) to its size; directories appear as
    ``"dir/"`` with size 0, as upstream reports checkpoint resources."""
    root_path = pathlib.Path(os.fspath(root))
    out: Dict[str, int] = {}
    for dirpath, dirnames, filenames in os.walk(root_path):
        dirnames.sort()
        rel_dir = pathlib.Path(dirpath).relative_to(root_path).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        for d in dirnames:
            rel = prefix + d + "/"
            if selector is None or selector(rel):
                out[rel] = 0
        for f in sorted(filenames):
            rel = prefix + f
            if selector is not None and not selector(rel):
                continue
            out[rel] = os.path.getsize(os.path.join(dirpath, f))
    if selector is not None:
        # Keep only directories that lead to selected files (or were selected themselves).
        keep = {k for k in out if not k.endswith("/")}
        for k in list(out):
            if k.endswith("/") and not any(f.startswith(k) for f in keep):
                if not selector(k):
                    del out[k]
    return out


def _shared_fs_base(config: Dict[str, Any]) -> pathlib.Path:
    host_path = config.get("host_path")
    if not host_path:
        raise ValueError("shared_fs checkpoint_storage requires host_path")
    storage_path = config.get("storage_path") or ""
    host = pathlib.Path(host_path)
    if storage_path:
        sp = pathlib.Path(storage_path)
        if sp.is_absolute():
            try:
                rel = sp.relative_to(host)
            except ValueError:
                raise ValueError(
                    f"shared_fs storage_path {storage_path} must be relative or inside host_path "
                    f"{host_path}"
                ) from None
        else:
            rel = sp
    else:
        rel = pathlib.Path()
    if host.is_dir():
        return host / rel
    # Upstream mounts host_path at container_path inside containers (Kubernetes, Docker).
    container = pathlib.Path(config.get("container_path") or SHARED_FS_CONTAINER_PATH)
    if container.is_dir():
        return container / rel
    return host / rel


def build(config: Dict[str, Any]) -> "StorageManager":
    """Build a storage manager from an experiment config's ``checkpoint_storage`` section. The
    object stores' SDKs are imported here, only for their own type."""
    kind = config.get("type")
    if kind == "shared_fs":
        return SharedFSStorageManager(_shared_fs_base(config), shared=True)
    if kind == "directory":
        path = config.get("container_path")
        if not path:
            raise ValueError("directory checkpoint_storage requires container_path")
        return SharedFSStorageManager(path, shared=True)
    temp_dir = config.get("temp_dir")
    if kind == "s3":
        from determined.core import _s3

        return _s3.S3StorageManager(
            _required(config, "s3", "bucket"),
            access_key=config.get("access_key"),
            secret_key=config.get("secret_key"),
            endpoint_url=config.get("endpoint_url"),
            prefix=config.get("prefix"),
            temp_dir=temp_dir,
        )
    if kind == "gcs":
        from determined.core import _gcs

        return _gcs.build(_required(config, "gcs", "bucket"), config.get("prefix"), temp_dir)
    if kind == "azure":
        from determined.core import _azure

        return _azure.AzureStorageManager(
            _required(config, "azure", "container"),
            connection_string=config.get("connection_string"),
            account_url=config.get("account_url"),
            credential=config.get("credential"),
            prefix=config.get("prefix"),
            temp_dir=temp_dir,
        )
    raise ValueError(f"unknown checkpoint_storage type {kind!r}")


def _required(config: Dict[str, Any], kind: str, key: str) -> str:
    value = config.get(key)
    if not value or not isinstance(value, str):
        raise ValueError(f"{kind} checkpoint_storage requires {key}")
    return value


def from_string(s: str) -> "StorageManager":
    """``checkpoint_storage="/some/dir"`` (or ``file:///some/dir``, ``s3://bucket/prefix``,
    ``gs://bucket/prefix``) as accepted by core.init()."""
    for scheme, kind in (("s3://", "s3"), ("gs://", "gcs")):
        if s.startswith(scheme):
            bucket, _, prefix = s[len(scheme):].partition("/")
            return build({"type": kind, "bucket": bucket, "prefix": prefix})
    if s.startswith("azure://") or s.startswith("ms://"):
        raise UnsupportedStorageError(
            "give azure checkpoint storage as a dictionary: {'type': 'azure', 'container': ..., "
            "'connection_string': ...}"
        )
    if s.startswith("file://"):
        s = s[len("file://"):]
    return SharedFSStorageManager(os.path.abspath(os.path.expanduser(s)))


def default_local_base() -> pathlib.Path:
    """Where off-cluster checkpoints go by default: the per-user data dir, as upstream
    (``appdirs.user_data_dir("determined")``), else a temporary directory."""
    xdg = os.environ.get("XDG_DATA_HOME")
    home = os.path.expanduser("~")
    candidates = []
    if xdg:
        candidates.append(pathlib.Path(xdg) / "determined")
    if home and home != "~":
        candidates.append(pathlib.Path(home) / ".local" / "share" / "determined")
    for c in candidates:
        try:
            c.mkdir(parents=True, exist_ok=True)
            if os.access(c, os.W_OK):
                return c
        except OSError:
            continue
    return pathlib.Path(tempfile.mkdtemp(prefix="determined-checkpoints-"))


def new_storage_id() -> str:
    return str(uuid.uuid4())
