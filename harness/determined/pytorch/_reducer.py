"""Metric reducers: how per-batch values, and the values of several ranks, become one metric."""

import abc
import enum
from typing import Any, Callable, Dict, List, Optional, Union

import numpy as np


class Reducer(enum.Enum):
    """Built-in reducers for ``evaluation_reducer()``: the average (over batches), the sum, the
    maximum or the minimum of a metric's per-batch values."""

    AVG = 1
    SUM = 2
    MAX = 3
    MIN = 4


def _reduce(reducer: Reducer, values: List[Any]) -> Any:
    if not values:
        return None
    arr = np.asarray(values, dtype=np.float64)
    if reducer == Reducer.AVG:
        out = np.mean(arr, axis=0)
    elif reducer == Reducer.SUM:
        out = np.sum(arr, axis=0)
    elif reducer == Reducer.MAX:
        out = np.max(arr, axis=0)
    elif reducer == Reducer.MIN:
        out = np.min(arr, axis=0)
    else:
        raise ValueError(f"unknown reducer {reducer}")
    return out.item() if out.ndim == 0 else out.tolist()


class MetricReducer(abc.ABC):
    """
    A custom reducer, wrapped with ``context.wrap_reducer()``. Each rank accumulates what it
    saw (``update`` is yours to define and call); at the end of a training period or validation
    the Trainer calls ``per_slot_reduce()`` on every rank, gathers the results on the chief and
    calls ``cross_slot_reduce(per_slot_metrics)`` there. ``reset()`` starts a new period.
    """

    @abc.abstractmethod
    def reset(self) -> None:
        pass

    @abc.abstractmethod
    def per_slot_reduce(self) -> Any:
        pass

    @abc.abstractmethod
    def cross_slot_reduce(self, per_slot_metrics: List) -> Any:
        pass


class _SimpleReducer(MetricReducer):
    """Wraps a plain function of a list of values: ``update(value)`` collects, the function
    reduces every value of every rank."""

    def __init__(self, fn: Callable[[List[Any]], Any]) -> None:
        self._fn = fn
        self._values: List[Any] = []

    def update(self, *values: Any) -> None:
        self._values.extend(values)

    def reset(self) -> None:
        self._values = []

    def per_slot_reduce(self) -> Any:
        return self._values

    def cross_slot_reduce(self, per_slot_metrics: List) -> Any:
        return self._fn([v for slot in per_slot_metrics for v in slot])


class _WrappedReducer:
    def __init__(self, reducer: MetricReducer, name: Optional[str], for_training: bool,
                 for_validation: bool) -> None:
        self.reducer = reducer
        self.name = name
        self.for_training = for_training
        self.for_validation = for_validation


def _reduce_custom(wrapped: List[_WrappedReducer], gather: Callable[[Any], Optional[List]],
                   for_training: bool) -> Dict[str, Any]:
    """Reduce the custom reducers of one kind; every rank must call it (``gather`` is the
    distributed gather); the result is meaningful on the chief only."""
    out: Dict[str, Any] = {}
    mine = [w for w in wrapped if (w.for_training if for_training else w.for_validation)]
    if not mine:
        return out
    gathered = gather([w.reducer.per_slot_reduce() for w in mine])
    if gathered is None:
        return out
    for i, w in enumerate(mine):
        value = w.reducer.cross_slot_reduce([slot[i] for slot in gathered])
        if w.name is not None:
            out[w.name] = value
        elif isinstance(value, dict):
            out.update(value)
        else:
            raise ValueError(
                "a reducer wrapped without a name must return a dict of metrics from "
                f"cross_slot_reduce(), got {type(value).__name__}"
            )
    return out


ReducerArg = Union[Reducer, Dict[str, Reducer]]
