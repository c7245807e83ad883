"""
``python3 -m determined.launch.torch_distributed [--] SCRIPT [ARGS...]``

Minimal launch layer for legacy configs. On a single container:

- one slot (or none): runs the script directly, with the torchrun-style environment
  (RANK=0, WORLD_SIZE=1, LOCAL_RANK=0, ...) set so ``DistributedContext.from_torch_distributed()``
  works;
- several slots: execs ``python3 -m torch.distributed.run --nnodes=1 --nproc_per_node=N`` on
  the script (PyTorch must be installed), with free ports for torch's rendezvous and for
  ``DistributedContext``'s object exchange (``DET_DIST_PORT``).

Multi-container (multi-node) launches are not supported by this harness yet.
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
    nproc = 1
    if info is not None:
        if len(info.container_addrs) > 1:
            print("determined.launch.torch_distributed: multi-node launches are not supported "
                  "by Resolute's harness yet", file=sys.stderr)
            return 1
        nproc = max(1, len(info.slot_ids))

    cmd = _command(args)
    if nproc == 1:
        env = dict(os.environ)
        env.update({
            "RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0", "LOCAL_WORLD_SIZE": "1",
            "GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1",
            "MASTER_ADDR": env.get("MASTER_ADDR", "127.0.0.1"),
            "MASTER_PORT": env.get("MASTER_PORT") or str(_free_port()),
        })
        os.execvpe(cmd[0], cmd, env)

    # Port for DistributedContext's own object exchange between the workers.
    os.environ.setdefault("DET_DIST_PORT", str(_free_port()))
    os.environ.setdefault("DET_CHIEF_IP", "127.0.0.1")
    torchrun = [
        sys.executable, "-m", "torch.distributed.run",
        "--nnodes=1", f"--nproc_per_node={nproc}",
        "--master_addr=127.0.0.1", f"--master_port={_free_port()}",
    ]
    if cmd[0] == sys.executable:
        full = torchrun + cmd[1:]
    else:
        full = torchrun + ["--no-python"] + cmd
    os.execvp(full[0], full)
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
