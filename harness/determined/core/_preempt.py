import enum
import logging
import threading
import time
from typing import Any, Optional

from determined import _session
from determined.core._distributed import DistributedContext

logger = logging.getLogger("determined.core")


class PreemptMode(enum.Enum):
    """
    How ``should_preempt()`` must be called. ``WorkersAskChief`` (default): every worker calls it
    in step; the chief asks the master and broadcasts the answer. ``ChiefOnly``: only the chief
    may call it. ``WorkersAskMaster``: every worker asks the master on its own.
    """

    WorkersAskChief = "WORKERS_ASK_CHIEF"
    ChiefOnly = "CHIEF_ONLY"
    WorkersAskMaster = "WORKERS_ASK_MASTER"


class _PreemptionWatcher(threading.Thread):
    """Long-polls the master for this allocation's preemption signal in the background.

    The first call uses ``timeout_seconds=0`` for a quick initial answer; later calls block up to
    ``LONGPOLL_SECONDS``. ``should_preempt()`` waits only for that initial answer.
    """

    LONGPOLL_SECONDS = 60
    # If the master answers "no" much faster than the long-poll window (a master that does not
    # hold the request), don't spin.
    MIN_POLL_INTERVAL = 0.5
    ERROR_RETRY_SECONDS = 10.0

    def __init__(self, session: _session.Session, allocation_id: str) -> None:
        super().__init__(daemon=True, name="PreemptionWatcher")
        self._session = session
        self._allocation_id = allocation_id
        self._should_preempt: Optional[bool] = None
        self._should_quit = threading.Event()
        self._cond = threading.Condition()

    def _get_preemption(self, longpoll: int) -> bool:
        r = self._session.get(
            f"/api/v1/allocations/{self._allocation_id}/signals/preemption",
            params={"timeout_seconds": str(longpoll)},
            timeout=longpoll + 10,
            max_retries=0,
        )
        return (r.json() or {}).get("preempt") is True

    def run(self) -> None:
        try:
            first = self._get_preemption(0)
        except Exception as e:
            logger.warning(f"failure during initial preemption API check (continuing): {e}")
            first = False
        with self._cond:
            self._should_preempt = first
            self._cond.notify_all()
        while not self._should_preempt and not self._should_quit.is_set():
            start = time.monotonic()
            try:
                if self._get_preemption(self.LONGPOLL_SECONDS):
                    self._should_preempt = True
                    break
            except Exception as e:
                logger.warning(f"failure communicating with preemption API (retrying): {e}")
                self._should_quit.wait(self.ERROR_RETRY_SECONDS)
                continue
            elapsed = time.monotonic() - start
            if elapsed < self.MIN_POLL_INTERVAL:
                self._should_quit.wait(self.MIN_POLL_INTERVAL - elapsed)

    def close(self) -> None:
        # The thread is a daemon blocked in a long-poll; it exits after its current request.
        self._should_quit.set()

    def should_preempt(self) -> bool:
        if self._should_preempt is not None:
            return self._should_preempt
        with self._cond:
            while self._should_preempt is None:
                self._cond.wait()
            return self._should_preempt


class PreemptContext:
    """
    ``PreemptContext`` tells the training script when the master wants it to stop (a user paused
    the experiment, or the scheduler needs the slots): checkpoint, then exit.
    """

    def __init__(
        self,
        session: _session.Session,
        allocation_id: str,
        dist: DistributedContext,
        preempt_mode: PreemptMode = PreemptMode.WorkersAskChief,
    ) -> None:
        self._session = session
        self._allocation_id = allocation_id
        self._dist = dist
        self._preempt_mode = PreemptMode(preempt_mode)
        self._watcher: Optional[_PreemptionWatcher] = None
        if dist.rank == 0 or self._preempt_mode == PreemptMode.WorkersAskMaster:
            self._watcher = _PreemptionWatcher(session, allocation_id)
        self._started = False
        self._ack_sent = False

    def start(self) -> "PreemptContext":
        if self._started:
            raise RuntimeError("you cannot call PreemptContext.start() multiple times")
        self._started = True
        if self._watcher is not None:
            self._watcher.start()
        return self

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.close()

    def __enter__(self) -> "PreemptContext":
        return self.start()

    def __exit__(self, *_: Any) -> None:
        self.close()

    def should_preempt(self, auto_ack: bool = True) -> bool:
        """
        Return True if the task should save its state and exit. With ``auto_ack`` (default) the
        first True also acknowledges the signal to the master, so the trial is resumed later
        rather than treated as finished.
        """
        if not self._started:
            raise RuntimeError(
                "you cannot call PreemptContext.should_preempt() before PreemptContext.start()"
            )
        if self._watcher is not None:
            out = self._watcher.should_preempt()
            if auto_ack and out and not self._ack_sent:
                self.acknowledge_preemption_signal()
            if self._preempt_mode == PreemptMode.WorkersAskChief:
                self._dist.broadcast(out)
        else:
            if self._preempt_mode == PreemptMode.ChiefOnly:
                raise RuntimeError(
                    "PreemptContext was configured with preempt_mode=ChiefOnly but "
                    ".should_preempt() was called from non-chief worker of "
                    f"rank={self._dist.rank}"
                )
            out = bool(self._dist.broadcast(None))
        logger.debug(f"should_preempt() -> {out}")
        return out

    def acknowledge_preemption_signal(self) -> None:
        """Tell the master the task received the preemption signal and will exit to be resumed
        later (called automatically by ``should_preempt(auto_ack=True)``)."""
        logger.debug("acknowledge_preemption_signal()")
        self._session.post(f"/api/v1/allocations/{self._allocation_id}/signals/ack_preemption")
        self._ack_sent = True


class DummyPreemptContext(PreemptContext):
    """Off-cluster: ``should_preempt()`` is always False."""

    def __init__(
        self,
        dist: DistributedContext,
        preempt_mode: PreemptMode = PreemptMode.WorkersAskChief,
    ) -> None:
        self._dist = dist
        self._preempt_mode = PreemptMode(preempt_mode)
        self._watcher = None
        self._started = False
        self._ack_sent = False

    def start(self) -> "PreemptContext":
        if self._started:
            raise RuntimeError("you cannot call PreemptContext.start() multiple times")
        self._started = True
        return self

    def close(self) -> None:
        pass

    def should_preempt(self, auto_ack: bool = True) -> bool:
        if not self._started:
            raise RuntimeError(
                "you cannot call PreemptContext.should_preempt() before PreemptContext.start()"
            )
        if self._dist.rank == 0:
            if self._preempt_mode == PreemptMode.WorkersAskChief:
                self._dist.broadcast(False)
        else:
            if self._preempt_mode == PreemptMode.ChiefOnly:
                raise RuntimeError(
                    "PreemptContext was configured with preempt_mode=ChiefOnly but "
                    ".should_preempt() was called from non-chief worker of "
                    f"rank={self._dist.rank}"
                )
            if self._preempt_mode == PreemptMode.WorkersAskChief:
                self._dist.broadcast(None)
        return False

    def acknowledge_preemption_signal(self) -> None:
        pass
