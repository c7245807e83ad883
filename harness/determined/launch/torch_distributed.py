"""
``python3 -m determined.launch.torch_distributed [--] SCRIPT [ARGS...]``

Minimal launch layer for legacy configs. On a single container:

- one slot (or none): runs the script directly, with the torchrun-style environment
  (RANK=0, WORLD_SIZE=1, LOCAL_RANK=0, ...) set so ``DistributedContext.from_torch_distributed()``
  works;
- several slots: execs torchrun (``determined.launch._torchrun``, ``torch.distributed.run`` made to
  work on Python 3.11) with ``--nnodes=1 --nproc_per_node=N`` on
  the script (PyTorch must be installed), with free ports for torch's rendezvous and for
  ``DistributedContext``'s object exchange (``DET_DIST_PORT``).

On several containers (the pods of a Kubernetes allocation, which met at the master's rendezvous
first: ``det.get_cluster_info().container_addrs``), every container execs
``torch.distributed.run --nnodes=<containers> --node_rank=<its rank>`` with the chief container
as ``--master_addr``. The ports must agree without talking, so they are fixed there: torch's on
``DET_C10D_PORT`` (default 29400) and ``DistributedContext``'s on ``DET_DIST_PORT`` (default
12360), both on the chief's address.
"""

import os
import socket
import sys
from typing import List

import determined as det


def _free_port() -> int:
    # Several allocations may share one machine (Resolute's local resource manager), so fixed
    # ports (upstream's 29400/12360) could collide; ask the kernel for free ones.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _command(script: List[str]) -> List[str]:
    if script and script[0].endswith(".py"):
        return [sys.executable] + script
    return script


def main(argv: List[str]) -> int:
    args = list(argv)
    # Upstream options that carry a value, accepted and ignored here.
    valued = {"--trial"}
    while args and args[0].startswith("-") and args[0] != "--":
        opt = args.pop(0)
        if opt in valued and args:
            args.pop(0)
    if args and args[0] == "--":
        args.pop(0)
    if not args:
        print("usage: python3 -m determined.launch.torch_distributed [--] SCRIPT [ARGS...]",
              file=sys.stderr)
        return 2

    info = det.get_cluster_info()
    nproc, nnodes, node_rank, chief = 1, 1, 0, "127.0.0.1"
    if info is not None:
        nproc = max(1, len(info.slot_ids))
        nnodes = max(1, len(info.container_addrs))
        node_rank = info.container_rank
        chief = info.container_addrs[0] if nnodes > 1 else chief

    cmd = _command(args)
    if nproc == 1 and nnodes == 1:
        env = dict(os.environ)
        env.update({
            "RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
            "GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1",
            "MASTER_ADDR": env.get("MASTER_ADDR", "127.0.0.1"),
            "MASTER_PORT": env.get("MASTER_PORT") or str(_free_port()),
        })
        os.execvpe(cmd[0], cmd, env)

    if nnodes > 1:
        os.environ["DET_CHIEF_IP"] = chief
        os.environ.setdefault("DET_DIST_PORT", "12360")
        nodes = [f"--nnodes={nnodes}", f"--node_rank={node_rank}",
                 f"--master_addr={chief}", f"--master_port={os.environ.get('DET_C10D_PORT') or 29400}"]
    else:
        # Port for DistributedContext's own object exchange between the workers.
        os.environ.setdefault("DET_DIST_PORT", str(_free_port()))
        os.environ.setdefault("DET_CHIEF_IP", "127.0.0.1")
        nodes = ["--nnodes=1", "--master_addr=127.0.0.1", f"--master_port={_free_port()}"]
    # torch.distributed.run, fixed for torch releases that fail under Python 3.11.
    torchrun = [sys.executable, "-m", "determined.launch._torchrun"] + nodes + [f"--nproc_per_node={nproc}"]
    if cmd[0] == sys.executable:
        full = torchrun + cmd[1:]
    else:
        # torch 1.13 knows only --no_python; later releases take both spellings.
        full = torchrun + ["--no_python"] + cmd
    os.execvp(full[0], full)
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
