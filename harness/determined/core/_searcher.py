"""The searcher operations API (deprecated upstream in 0.38; kept for old scripts).

As in Determined 0.38, nothing is fetched from the master: when the experiment config has
``searcher.max_length`` the chief fabricates a single operation of that length.
"""

import enum
import logging
import warnings
from typing import Any, Iterator, Optional

from determined import _session
from determined.core._distributed import DistributedContext

logger = logging.getLogger("determined.core")

_DEPRECATED = (
    "SearcherContext.operations() was deprecated in Determined 0.38.0 and will be removed in a "
    "future version.  Instead, you should set your training length directly in your training "
    "code."
)

_MISSING = (
    "SearcherContext was not created because your experiment config does not have the "
    "searcher.max_length set.  Both the searcher.max_length and the SearcherContext are "
    "deprecated.  Instead, you should specify your training length directly in your training "
    "code and avoid all calls to core_context.searcher."
)


class Unit(enum.Enum):
    EPOCHS = "EPOCHS"
    RECORDS = "RECORDS"
    BATCHES = "BATCHES"


def _parse_searcher_max_length(config: dict) -> Optional[int]:
    searcher = config.get("searcher") or {}
    max_length = searcher.get("max_length")
    if max_length is None:
        return None
    if isinstance(max_length, bool):
        raise ValueError(f"invalid searcher.max_length {max_length!r}")
    if isinstance(max_length, int):
        return max_length
    if isinstance(max_length, dict) and len(max_length) == 1:
        value = next(iter(max_length.values()))
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    raise ValueError(f"invalid searcher.max_length {max_length!r}")


def _parse_searcher_units(config: dict) -> Optional[Unit]:
    searcher = config.get("searcher") or {}
    names = {"records": Unit.RECORDS, "epochs": Unit.EPOCHS, "batches": Unit.BATCHES}
    if "unit" in searcher:
        return names.get(searcher["unit"])
    max_length = searcher.get("max_length")
    if isinstance(max_length, dict) and len(max_length) == 1:
        return names.get(next(iter(max_length)))
    return None


class SearcherMode(enum.Enum):
    WorkersAskChief = "WORKERS_ASK_CHIEF"
    ChiefOnly = "CHEIF_ONLY"  # sic, as upstream


class SearcherOperation:
    """One train-then-validate request: train until ``length`` (absolute, in the configured
    units), report progress along the way, then ``report_completed(metric)``."""

    def __init__(
        self,
        session: Optional[_session.Session],
        trial_id: Optional[int],
        length: int,
        is_chief: bool,
    ) -> None:
        self._session = session
        self._trial_id = trial_id
        self._length = length
        self._is_chief = is_chief
        self._completed = False

    @property
    def length(self) -> int:
        return self._length

    def report_progress(self, length: float) -> None:
        """Report progress in the op's units; sent to the master as a fraction of ``length``."""
        if not self._is_chief:
            raise RuntimeError("you must only call op.report_progress() from the chief worker")
        if self._completed and length != self._length:
            raise RuntimeError("you must not call op.report_progress() after op.report_completed()")
        progress = min(1.0, max(0.0, float(length) / self._length)) if self._length else 1.0
        logger.debug(f"op.report_progress({length})")
        if self._session is None:
            logger.info(f"progress report: {length}/{self._length}")
            return
        self._session.post(
            f"/api/v1/trials/{self._trial_id}/progress",
            json={"progress": progress, "is_raw": True},
        )

    def report_completed(self, searcher_metric: Any) -> None:
        """Mark the op done (the searcher reads validation metrics instead, as in 0.38)."""
        if not self._is_chief:
            raise RuntimeError("you must only call op.report_completed() from the chief worker")
        if self._completed:
            raise RuntimeError("you may only call op.report_completed() once")
        self._completed = True
        logger.info(f"SearcherOperation Complete: searcher_metric={searcher_metric}")


class SearcherContext:
    """Yields the single searcher operation of ``searcher.max_length`` (deprecated API)."""

    def __init__(
        self,
        session: Optional[_session.Session],
        dist: DistributedContext,
        trial_id: Optional[int],
        max_length: int,
        units: Optional[Unit] = None,
    ) -> None:
        self._session = session
        self._dist = dist
        self._trial_id = trial_id
        self._length = max_length
        self._units = units

    def operations(
        self,
        searcher_mode: SearcherMode = SearcherMode.WorkersAskChief,
        auto_ack: bool = True,
    ) -> Iterator[SearcherOperation]:
        warnings.warn(_DEPRECATED, FutureWarning, stacklevel=2)
        yield from self._operations(searcher_mode)

    def _operations(
        self, searcher_mode: SearcherMode = SearcherMode.WorkersAskChief
    ) -> Iterator[SearcherOperation]:
        searcher_mode = SearcherMode(searcher_mode)
        if self._dist.rank == 0:
            op = SearcherOperation(self._session, self._trial_id, self._length, True)
            if searcher_mode == SearcherMode.WorkersAskChief:
                self._dist.broadcast(op.length)
            yield op
            if not op._completed:
                raise RuntimeError("you must call op.report_completed() on each operation")
            if searcher_mode == SearcherMode.WorkersAskChief:
                self._dist.broadcast(None)
        else:
            if searcher_mode != SearcherMode.WorkersAskChief:
                raise RuntimeError(
                    "you cannot call searcher.operations(searcher_mode=ChiefOnly) from a "
                    "non-chief worker."
                )
            while True:
                length = self._dist.broadcast(None)
                if length is None:
                    break
                yield SearcherOperation(self._session, self._trial_id, length, False)

    def acknowledge_out_of_ops(self) -> None:
        pass

    def get_configured_units(self) -> Optional[Unit]:
        return self._units


class DummySearcherOperation(SearcherOperation):
    """An op whose progress and completion are only logged (off-cluster)."""

    def __init__(self, length: int, is_chief: bool) -> None:
        super().__init__(None, None, length, is_chief)


class DummySearcherContext(SearcherContext):
    """Off-cluster: a single op of ``length`` (default 1) whose reports are only logged."""

    def __init__(self, dist: DistributedContext, length: int = 1) -> None:
        super().__init__(None, dist, None, length, Unit.EPOCHS)

    def get_configured_units(self) -> Optional[Unit]:
        return Unit.EPOCHS


class SearcherContextMissing(SearcherContext):
    """Stands in when the config has no ``searcher.max_length``: every use raises."""

    def __init__(self) -> None:
        pass

    def operations(
        self,
        searcher_mode: SearcherMode = SearcherMode.WorkersAskChief,
        auto_ack: bool = True,
    ) -> Iterator[SearcherOperation]:
        raise ValueError(_MISSING)

    def _operations(
        self, searcher_mode: SearcherMode = SearcherMode.WorkersAskChief
    ) -> Iterator[SearcherOperation]:
        raise ValueError(_MISSING)

    def acknowledge_out_of_ops(self) -> None:
        raise ValueError(_MISSING)

    def get_configured_units(self) -> Optional[Unit]:
        raise ValueError(_MISSING)
