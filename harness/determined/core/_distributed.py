import logging
import os
import pickle
import socket
import struct
import time
from typing import Any, List, Optional

logger = logging.getLogger("determined.core")

#: How long workers keep trying to reach the chief, and the chief waits for workers.
CONNECT_TIMEOUT = 300.0


def _send(sock: socket.socket, obj: Any) -> None:
    data = pickle.dumps(obj)
    sock.sendall(struct.pack("!Q", len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionError("a distributed worker closed its connection")
        buf += chunk
    return bytes(buf)


def _recv(sock: socket.socket) -> Any:
    (n,) = struct.unpack("!Q", _recv_exact(sock, 8))
    return pickle.loads(_recv_exact(sock, n))


class _Hub:
    """Star-shaped object exchange over TCP: the chief (rank 0) listens, every other worker
    connects once and sends its rank. Collectives must be called in step by all workers."""

    def __init__(self, rank: int, size: int, chief_ip: str, port: int, bind: str = "0.0.0.0") -> None:
        self.rank = rank
        self.size = size
        self._peers: List[Optional[socket.socket]] = [None] * size
        self._sock: Optional[socket.socket] = None
        self._listener: Optional[socket.socket] = None
        if rank == 0:
            lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            lst.bind((bind, port))
            lst.listen(size)
            self._listener = lst
        else:
            deadline = time.monotonic() + CONNECT_TIMEOUT
            while True:
                try:
                    s = socket.create_connection((chief_ip, port), timeout=10)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            s.settimeout(None)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            _send(s, rank)
            self._sock = s

    def _accept_all(self) -> None:
        if self._listener is None or all(p is not None for p in self._peers[1:]):
            return
        self._listener.settimeout(CONNECT_TIMEOUT)
        while any(p is None for p in self._peers[1:]):
            conn, _ = self._listener.accept()
            conn.settimeout(None)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            r = _recv(conn)
            self._peers[r] = conn
        self._listener.close()
        self._listener = None

    def gather(self, obj: Any) -> Optional[List[Any]]:
        if self.rank == 0:
            self._accept_all()
            out = [obj]
            for p in self._peers[1:]:
                assert p is not None
                out.append(_recv(p))
            return out
        assert self._sock is not None
        _send(self._sock, obj)
        return None

    def broadcast(self, obj: Any) -> Any:
        if self.rank == 0:
            self._accept_all()
            for p in self._peers[1:]:
                assert p is not None
                _send(p, obj)
            return obj
        assert self._sock is not None
        return _recv(self._sock)

    def close(self) -> None:
        for s in [self._sock, self._listener] + self._peers:
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass


class DistributedContext:
    """
    ``DistributedContext`` describes how this worker fits into a distributed job: its ``rank`` in
    the whole job, ``local_rank`` on its node, ``cross_rank`` (the node's rank) and the matching
    sizes. It offers ``gather``/``allgather``/``broadcast`` (and ``*_local``) of Python objects.

    In Resolute's harness every worker exchanges objects with the chief (rank 0), which listens
    on ``DET_DIST_PORT`` (default 12360 + port_offset) at ``chief_ip``; on several nodes that is
    the chief container's address (``DET_CHIEF_IP``, set by the rendezvous of a multi-pod
    allocation). The ``*_local`` collectives then act among the workers of one node.
    """

    def __init__(
        self,
        *,
        rank: int,
        size: int,
        local_rank: int,
        local_size: int,
        cross_rank: int,
        cross_size: int,
        chief_ip: Optional[str] = None,
        pub_port: int = 12360,
        pull_port: int = 12365,
        port_offset: int = 0,
        force_tcp: bool = False,
    ) -> None:
        self.rank = rank
        self.size = size
        self.local_rank = local_rank
        self.local_size = local_size
        self.cross_rank = cross_rank
        self.cross_size = cross_size
        if not (0 <= rank < size):
            raise ValueError(f"rank must be in [0, size); got rank={rank}, size={size}")
        if not (0 <= local_rank < local_size):
            raise ValueError(
                f"local_rank must be in [0, local_size); got {local_rank}, {local_size}"
            )
        if not (0 <= cross_rank < cross_size):
            raise ValueError(
                f"cross_rank must be in [0, cross_size); got {cross_rank}, {cross_size}"
            )
        if size > 1 and chief_ip is None:
            chief_ip = os.environ.get("DET_CHIEF_IP")
        self._chief_ip = chief_ip
        self._pub_port = pub_port + port_offset
        self._pull_port = pull_port + port_offset
        self._closed = False
        self._hub: Optional[_Hub] = None
        if size > 1:
            if cross_size > 1 and not chief_ip:
                raise ValueError("chief_ip (or DET_CHIEF_IP) is required for workers on several nodes")
            port = int(os.environ.get("DET_DIST_PORT") or self._pub_port)
            # On several nodes the chief listens on its own address only, so that chiefs of other
            # allocations on the same host (each with its own address) can share the port.
            bind = (chief_ip or "") if cross_size > 1 else "0.0.0.0"
            self._hub = _Hub(rank, size, chief_ip or "127.0.0.1", port, bind=bind)

    # Upstream-compatible getters.
    def get_rank(self) -> int:
        return self.rank

    def get_size(self) -> int:
        return self.size

    def get_local_rank(self) -> int:
        return self.local_rank

    def get_local_size(self) -> int:
        return self.local_size

    def get_cross_rank(self) -> int:
        return self.cross_rank

    def get_cross_size(self) -> int:
        return self.cross_size

    def close(self) -> None:
        self._closed = True
        if self._hub is not None:
            self._hub.close()
            self._hub = None

    def _get_hub(self, op: str) -> Optional[_Hub]:
        if self.size == 1:
            return None
        if self._hub is None:
            raise RuntimeError(f"DistributedContext.{op}() called after close()")
        return self._hub

    def _node_mates(self, hub: _Hub, stuff: Any) -> List[Any]:
        """Every worker's stuff on this node, by local rank (all workers must call it)."""
        everyone = hub.broadcast(hub.gather((self.cross_rank, self.local_rank, stuff)))
        mine = sorted((lr, x) for cr, lr, x in everyone if cr == self.cross_rank)
        return [x for _, x in mine]

    # With a single node, "local" and global collectives are the same; on several, the local
    # ones go through the chief too and each worker keeps its node's part.
    def gather(self, stuff: Any) -> Optional[List]:
        """Gather ``stuff`` from every worker to the chief: a list on rank 0, None elsewhere."""
        hub = self._get_hub("gather")
        return [stuff] if hub is None else hub.gather(stuff)

    def gather_local(self, stuff: Any) -> Optional[List]:
        """Gather ``stuff`` from every worker on this node to the local chief."""
        hub = self._get_hub("gather_local")
        if hub is None:
            return [stuff]
        if self.cross_size == 1:
            return hub.gather(stuff)
        mates = self._node_mates(hub, stuff)
        return mates if self.local_rank == 0 else None

    def allgather(self, stuff: Any) -> List:
        """Gather ``stuff`` from every worker to every worker."""
        hub = self._get_hub("allgather")
        return [stuff] if hub is None else hub.broadcast(hub.gather(stuff))

    def allgather_local(self, stuff: Any) -> List:
        hub = self._get_hub("allgather_local")
        if hub is None:
            return [stuff]
        if self.cross_size == 1:
            return hub.broadcast(hub.gather(stuff))
        return self._node_mates(hub, stuff)

    def broadcast(self, stuff: Any) -> Any:
        """Return the chief's ``stuff`` on every worker."""
        hub = self._get_hub("broadcast")
        return stuff if hub is None else hub.broadcast(stuff)

    def broadcast_local(self, stuff: Any = None) -> Any:
        """Return the local chief's ``stuff`` on every worker of this node."""
        hub = self._get_hub("broadcast_local")
        if hub is None:
            return stuff
        if self.cross_size == 1:
            return hub.broadcast(stuff)
        return self._node_mates(hub, stuff)[0]

    @classmethod
    def from_torch_distributed(cls, chief_ip: Optional[str] = None) -> "DistributedContext":
        """
        Build a ``DistributedContext`` from the environment ``torch.distributed.run`` (torchrun)
        sets: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE.
        Raises KeyError when they are missing, as upstream does.
        """
        rank = int(os.environ["RANK"])
        size = int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ["LOCAL_RANK"])
        local_size = int(os.environ["LOCAL_WORLD_SIZE"])
        cross_rank = int(os.environ["GROUP_RANK"])
        cross_size = int(os.environ["GROUP_WORLD_SIZE"])
        return cls(
            rank=rank,
            size=size,
            local_rank=local_rank,
            local_size=local_size,
            cross_rank=cross_rank,
            cross_size=cross_size,
            chief_ip=chief_ip or os.environ.get("DET_CHIEF_IP") or os.environ.get("MASTER_ADDR"),
        )

    @classmethod
    def from_deepspeed(cls, chief_ip: Optional[str] = None) -> "DistributedContext":
        """Build from the environment DeepSpeed's launcher sets (OMPI_* or torch-style vars)."""
        env = os.environ
        if "OMPI_COMM_WORLD_RANK" in env:
            rank = int(env["OMPI_COMM_WORLD_RANK"])
            size = int(env["OMPI_COMM_WORLD_SIZE"])
            local_rank = int(env["OMPI_COMM_WORLD_LOCAL_RANK"])
            local_size = int(env["OMPI_COMM_WORLD_LOCAL_SIZE"])
            cross_rank = int(env.get("OMPI_COMM_WORLD_NODE_RANK", rank // max(local_size, 1)))
            cross_size = max(1, size // max(local_size, 1))
        else:
            rank = int(env["RANK"])
            size = int(env["WORLD_SIZE"])
            local_rank = int(env["LOCAL_RANK"])
            local_size = int(env.get("LOCAL_WORLD_SIZE", size))
            cross_rank = int(env.get("GROUP_RANK", rank // max(local_size, 1)))
            cross_size = int(env.get("GROUP_WORLD_SIZE", max(1, size // max(local_size, 1))))
        return cls(
            rank=rank,
            size=size,
            local_rank=local_rank,
            local_size=local_size,
            cross_rank=cross_rank,
            cross_size=cross_size,
            chief_ip=chief_ip or env.get("DET_CHIEF_IP") or env.get("MASTER_ADDR"),
        )

    @classmethod
    def from_horovod(cls, hvd: Any, chief_ip: Optional[str] = None) -> "DistributedContext":
        """Build from an initialized horovod module."""
        return cls(
            rank=hvd.rank(),
            size=hvd.size(),
            local_rank=hvd.local_rank(),
            local_size=hvd.local_size(),
            cross_rank=hvd.cross_rank(),
            cross_size=hvd.cross_size(),
            chief_ip=chief_ip,
        )


class DummyDistributedContext(DistributedContext):
    """A single-process DistributedContext (rank 0 of 1)."""

    def __init__(self) -> None:
        super().__init__(rank=0, size=1, local_rank=0, local_size=1, cross_rank=0, cross_size=1)
