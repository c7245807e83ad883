"""The entrypoint of a TensorBoard task over experiments whose checkpoint storage is a bucket.

``python3 -m determined.exec.tensorboard tensorboard ARGS...`` syncs the TensorBoard files of
each source in ``DET_TENSORBOARD_SOURCES`` (JSON: a list of ``{"storage": checkpoint_storage,
"path": "<cluster>/tensorboard/experiment/<id>[/trial/<id>]", "dir": local directory}``, handed
over by the master with the storage's secrets) into its directory, starts the command, and syncs
again every ``DET_TENSORBOARD_SYNC_SECONDS`` (default 10) while it runs, fetching only files that
are new or whose size changed, as trials keep appending to their event files. It exits with the
command's status and passes SIGTERM on to it.
"""

import json
import os
import signal
import subprocess
import sys
import threading
from typing import Any, Dict, List

from determined.core import _storage


class _Source:
    def __init__(self, spec: Dict[str, Any]) -> None:
        self.manager = _storage.build(spec["storage"])
        self.path = spec["path"].strip("/")
        self.dir = spec["dir"]
        self.sizes: Dict[str, int] = {}

    def sync(self) -> int:
        """Fetch what is new or changed; return how many files."""
        os.makedirs(self.dir, exist_ok=True)
        base = self.path + "/"
        n = 0
        for name, size in sorted(self.manager.list_prefix(self.path).items()):
            rel = name[len(base):] if name.startswith(base) else ""
            parts = [p for p in rel.split("/") if p]
            if not parts or rel.endswith("/") or any(p in (".", "..") for p in parts):
                continue
            if self.sizes.get(rel) == size:
                continue
            target = os.path.join(self.dir, *parts)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            self.manager._get_file(self.manager.key(name), target, size)
            self.sizes[rel] = size
            n += 1
        return n


def _sync_all(sources: List[_Source]) -> None:
    for s in sources:
        try:
            n = s.sync()
            if n:
                print(f"synced {n} TensorBoard files of {s.path} from {s.manager.describe()}", flush=True)
        except Exception as e:  # the next round tries again; TensorBoard keeps what it has
            print(f"TensorBoard sync of {s.path}: {e}", file=sys.stderr, flush=True)


def main(argv: List[str]) -> int:
    if not argv:
        print("usage: python3 -m determined.exec.tensorboard COMMAND...", file=sys.stderr)
        return 2
    sources = [_Source(s) for s in json.loads(os.environ.get("DET_TENSORBOARD_SOURCES") or "[]")]
    every = float(os.environ.get("DET_TENSORBOARD_SYNC_SECONDS") or 10)
    _sync_all(sources)
    proc = subprocess.Popen(argv)
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every):
            _sync_all(sources)

    threading.Thread(target=loop, daemon=True).start()
    code = proc.wait()
    stop.set()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
