"""``PyTorchTrial`` (what users subclass) and the training lengths ``Batch`` and ``Epoch``."""

import abc
import sys
from collections import abc as col_abc
from typing import Any, Dict, Optional, Union

import torch
import torch.utils.data

from determined import core
from determined.pytorch import _data
from determined.pytorch._callback import PyTorchCallback
from determined.pytorch._context import PyTorchTrialContext
from determined.pytorch._reducer import Reducer


class InvalidExperimentException(Exception):
    """The trial cannot be trained as written (e.g. no model was wrapped)."""


class TrainUnit:
    """A training length or period: an int is a period (``Batch(100)``: every 100 batches);
    a container is a schedule (``Batch([1, 5, 10])``: after batches 1, 5 and 10)."""

    def __init__(self, value: Union[int, col_abc.Container]) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"

    def __eq__(self, other: Any) -> bool:
        return type(self) is type(other) and self.value == other.value

    def should_stop(self, step_num: int) -> bool:
        """Whether a boundary falls at ``step_num`` (batches or epochs completed)."""
        if isinstance(self.value, int):
            if self.value < 1:
                return True
            return step_num > 0 and step_num % self.value == 0
        return step_num in self.value

    @staticmethod
    def _from_values(batches: Optional[int] = None, records: Optional[int] = None,
                     epochs: Optional[int] = None,
                     global_batch_size: Optional[int] = None) -> "TrainUnit":
        if sum(x is not None for x in (batches, records, epochs)) != 1:
            raise ValueError(f"invalid length: batches={batches} records={records} epochs={epochs}")
        if batches is not None:
            return Batch(batches if batches >= 1 else sys.maxsize)
        if records is not None:
            if not global_batch_size:
                raise ValueError("a length in records needs the global_batch_size hyperparameter")
            return Batch._from_records(records if records >= 1 else sys.maxsize, global_batch_size)
        assert epochs is not None
        return Epoch(epochs if epochs >= 1 else sys.maxsize)

    @staticmethod
    def _from_config(length: Any, global_batch_size: Optional[int]) -> Optional["TrainUnit"]:
        """A length from an experiment config: ``{batches: N}``, ``{epochs: N}``,
        ``{records: N}``, or a bare int (batches)."""
        if length is None:
            return None
        if isinstance(length, int) and not isinstance(length, bool):
            return Batch(length)
        if isinstance(length, dict) and len(length) == 1:
            (unit, n), = length.items()
            if unit in ("batches", "records", "epochs"):
                return TrainUnit._from_values(global_batch_size=global_batch_size,
                                              **{unit: int(n)})
        raise ValueError(f"invalid length {length!r}")

    def _to_searcher_unit(self) -> core.Unit:
        return core.Unit.BATCHES if isinstance(self, Batch) else core.Unit.EPOCHS


class Epoch(TrainUnit):
    """A length in epochs (``Epoch(1)``)."""


class Batch(TrainUnit):
    """A length in batches (``Batch(100)``)."""

    @staticmethod
    def _from_records(records: int, global_batch_size: int) -> "Batch":
        return Batch(max(records // global_batch_size, 1))


class PyTorchTrial(abc.ABC):
    """
    Subclass ``PyTorchTrial`` to train with Determined's PyTorch Trial API:

    - ``__init__(self, context)``: build models, optimizers and LR schedulers and wrap them with
      the context's ``wrap_model``, ``wrap_optimizer`` and ``wrap_lr_scheduler``;
    - ``build_training_data_loader`` / ``build_validation_data_loader``: return a
      ``pytorch.DataLoader``;
    - ``train_batch``: forward, ``context.backward(loss)``, ``context.step_optimizer(opt)``,
      return a dict of metrics (or the loss tensor);
    - ``evaluate_batch`` (per batch, reduced by ``evaluation_reducer()``) or
      ``evaluate_full_dataset`` (chief only): return a dict of metrics.
    """

    @abc.abstractmethod
    def __init__(self, context: PyTorchTrialContext) -> None:
        pass

    @abc.abstractmethod
    def train_batch(self, batch: _data.TorchData, epoch_idx: int,
                    batch_idx: int) -> Union[torch.Tensor, Dict[str, Any]]:
        pass

    @abc.abstractmethod
    def build_training_data_loader(self) -> _data.DataLoader:
        pass

    @abc.abstractmethod
    def build_validation_data_loader(self) -> _data.DataLoader:
        pass

    def build_callbacks(self) -> Dict[str, PyTorchCallback]:
        """Callbacks by name (the name keys their state in checkpoints)."""
        return {}

    def evaluate_batch(self, batch: _data.TorchData, batch_idx: int) -> Dict[str, Any]:
        """Metrics of one validation batch, reduced over all batches of all ranks by
        ``evaluation_reducer()``. Define this or ``evaluate_full_dataset``."""
        raise NotImplementedError

    def evaluation_reducer(self) -> Union[Reducer, Dict[str, Reducer]]:
        """The reducer of every ``evaluate_batch`` metric, or one per metric name."""
        return Reducer.AVG

    def evaluate_full_dataset(self, data_loader: torch.utils.data.DataLoader) -> Dict[str, Any]:
        """Metrics of the whole validation set, computed on the chief only."""
        raise NotImplementedError

    def get_batch_length(self, batch: Any) -> int:
        """The number of records in a batch."""
        return _data.data_length(batch)


def _is_overridden(obj: Any, name: str) -> bool:
    return getattr(type(obj), name) is not getattr(PyTorchTrial, name)
