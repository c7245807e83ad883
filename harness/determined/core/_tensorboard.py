"""TensorBoard files of a trial whose checkpoint storage is a bucket.

The trial writes them under a local directory of its own (``$TMPDIR/tensorboard-<allocation>-
<rank>-XXXX``, made fresh and private: Determined's fixed ``/tmp/tensorboard-<allocation>-<rank>``
could be made first by another user of the machine, or by another master's task of the same name); ``sync`` uploads the files that are new or changed since the last sync to
``<prefix>/<cluster_id>/tensorboard/experiment/<experiment_id>/trial/<trial_id>/<path>``, the
layout Determined uses and the master's TensorBoards read. With shared_fs or directory storage the
trial writes into storage directly and none of this is needed.
"""

import logging
import os
import pathlib
import tempfile
import threading
from typing import Callable, Dict, List, Tuple

from determined.core import _cloud

logger = logging.getLogger("determined.core")

PathSelector = Callable[[pathlib.Path], bool]
Mangler = Callable[[pathlib.Path, int], pathlib.Path]


def sync_path(cluster_id: str, experiment_id: int, trial_id: int) -> str:
    """Where a trial's TensorBoard files go, under the storage's prefix."""
    return f"{cluster_id}/tensorboard/experiment/{experiment_id}/trial/{trial_id}"


def local_path(allocation_id: str, rank: int) -> pathlib.Path:
    """A new directory, mode 0700, for a trial's worker to write TensorBoard files into."""
    return pathlib.Path(tempfile.mkdtemp(prefix=f"tensorboard-{allocation_id}-{rank}-"))


class TensorboardUploader:
    """Uploads a local TensorBoard directory's new and changed files to a bucket."""

    def __init__(self, storage: _cloud.CloudStorageManager, local_dir: pathlib.Path,
                 remote_dir: str) -> None:
        self.storage = storage
        self.local_dir = local_dir
        self.remote_dir = remote_dir.strip("/")
        self._synced: Dict[pathlib.Path, Tuple[int, int]] = {}
        self._lock = threading.Lock()

    def sync(self, selector: PathSelector = lambda _: True,
             mangler: Mangler = lambda p, __: p, rank: int = 0) -> List[str]:
        """Upload what changed since the last sync; return the object names written (relative
        to the storage's prefix). ``selector`` takes a file's absolute path; ``mangler`` maps a
        file's path relative to the directory (and the rank) to its name in the bucket."""
        with self._lock:
            if not self.local_dir.is_dir():
                return []
            todo: List[Tuple[pathlib.Path, str]] = []
            stamps: Dict[pathlib.Path, Tuple[int, int]] = {}
            for path in sorted(self.local_dir.rglob("*")):
                if not path.is_file() or not selector(path):
                    continue
                st = path.stat()
                stamp = (st.st_size, st.st_mtime_ns)
                if self._synced.get(path) == stamp:
                    continue
                rel = mangler(path.relative_to(self.local_dir), rank)
                name = f"{self.remote_dir}/{pathlib.PurePath(rel).as_posix()}"
                todo.append((path, name))
                stamps[path] = stamp
            if not todo:
                return []
            logger.debug(f"uploading {len(todo)} TensorBoard files to {self.storage.describe()}/"
                         f"{self.remote_dir}")
            self.storage.upload_tensorboard_files(todo)
            self._synced.update(stamps)
            return [name for _, name in todo]

    def sync_quietly(self) -> None:
        """``sync`` after a report: a failure is logged (the trial goes on training) and tried
        again at the next report."""
        try:
            self.sync()
        except Exception as e:
            logger.warning(f"could not upload TensorBoard files: {e}")


def for_trial(storage: _cloud.CloudStorageManager, cluster_id: str, experiment_id: int,
              trial_id: int, allocation_id: str, rank: int) -> TensorboardUploader:
    """The uploader of one worker of a trial."""
    local = local_path(allocation_id or str(os.getpid()), rank)
    return TensorboardUploader(storage, local, sync_path(cluster_id, experiment_id, trial_id))
