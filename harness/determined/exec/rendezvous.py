"""
``python3 -m determined.exec.rendezvous -- COMMAND [ARGS...]``

Run in every pod of a multi-pod allocation (Kubernetes) before the task: the pod posts its
address (``DET_KUBERNETES_POD_IP``), its index (``RESOLUTE_POD_INDEX``, 0 for the chief) and
its slot count to the master and waits until all ``DET_KUBERNETES_JOB_PARALLELISM`` pods have.
It then runs COMMAND with ``DET_CONTAINER_ADDRS`` (every pod's address, by index) and
``DET_CONTAINER_RANK`` set, which ``det.get_cluster_info()`` reads as ``container_addrs`` and
``container_rank``, and ``DET_CHIEF_IP`` (the chief pod's address).
"""

import json
import os
import sys
import time
from typing import List

from determined import _session

#: How long a pod waits for the others before giving up (they are scheduled as a gang, so
#: they normally start within seconds of each other).
WAIT_SECONDS = 1800


def _slot_count(raw: str) -> int:
    try:
        ids = json.loads(raw or "[]")
    except ValueError:
        return 0
    return len(ids) if isinstance(ids, list) else 0


def main(argv: List[str]) -> int:
    if "--" in argv:
        argv = argv[argv.index("--") + 1 :]
    if not argv:
        print("usage: python3 -m determined.exec.rendezvous -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    env = os.environ
    size = int(env.get("DET_KUBERNETES_JOB_PARALLELISM") or "1")
    rank = int(env.get("RESOLUTE_POD_INDEX") or "0")
    addr = env.get("DET_KUBERNETES_POD_IP") or "127.0.0.1"
    if size > 1:
        session = _session.Session(env["DET_MASTER"], env.get("DET_SESSION_TOKEN", ""))
        path = f"/api/v1/allocations/{env['DET_ALLOCATION_ID']}/rendezvous"
        body = {"rank": rank, "size": size, "addr": addr, "slots": _slot_count(env.get("DET_SLOT_IDS", ""))}
        print(f"rendezvous: pod {rank} of {size} at {addr}, waiting for the others", flush=True)
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            out = session.post(path, json=body, params={"timeout_seconds": 60}, timeout=90).json()
            if out.get("ready"):
                break
            if time.monotonic() > deadline:
                print(f"rendezvous: the other pods did not arrive within {WAIT_SECONDS} s",
                      file=sys.stderr, flush=True)
                return 1
        addrs = [str(a) for a in out["container_addrs"]]
        env["DET_CONTAINER_ADDRS"] = ",".join(addrs)
        env["DET_CONTAINER_RANK"] = str(rank)
        env["DET_CHIEF_IP"] = addrs[0]
        print(f"rendezvous: all {size} pods ready; the chief is at {addrs[0]}", flush=True)
    os.execvp(argv[0], argv)
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
