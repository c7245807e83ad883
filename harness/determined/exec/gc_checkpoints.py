"""The entrypoint of a CHECKPOINT_GC task whose checkpoints are in a bucket.

``python3 -m determined.exec.gc_checkpoints UUID...`` deletes each checkpoint's objects
through the harness's own storage code (boto3, the Azure SDK, GCS), from the storage the
master hands it with its secrets in ``DET_CHECKPOINT_STORAGE`` (the experiment's
``checkpoint_storage`` as JSON). It runs as a local process or in a Kubernetes GC pod;
it exits non-zero, naming the bucket and the cause, when a deletion fails, so the master
keeps those checkpoints for the next collection.
"""

import json
import os
import sys
from typing import List

from determined.core import _storage


def main(argv: List[str]) -> int:
    raw = os.environ.get("DET_CHECKPOINT_STORAGE")
    if not raw:
        print("DET_CHECKPOINT_STORAGE is not set: no storage to delete from", file=sys.stderr)
        return 2
    manager = _storage.build(json.loads(raw))
    failed = 0
    for uuid in argv:
        try:
            manager.delete(uuid)
        except Exception as e:  # each checkpoint on its own: the others may still go
            print(f"checkpoint {uuid}: {e}", file=sys.stderr)
            failed += 1
            continue
        print(f"deleted checkpoint {uuid}")
    print(f"deleted {len(argv) - failed} of {len(argv)} checkpoints")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
