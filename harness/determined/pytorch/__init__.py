"""Determined's PyTorch Trial API (``from determined import pytorch``): subclass
``PyTorchTrial``, then

.. code:: python

    with pytorch.init() as train_context:
        trial = MyTrial(train_context)
        pytorch.Trainer(trial, train_context).fit(max_length=pytorch.Epoch(1))

On a cluster the Trainer reports metrics, validates, checkpoints in Determined's layout, and
stops when the master preempts the trial; locally (no cluster) the same script trains on its own.
This package imports torch; ``import determined`` does not import it.
"""

from determined.pytorch._data import DataLoader, TorchData, data_length, to_device
from determined.pytorch._reducer import MetricReducer, Reducer
from determined.pytorch._lr_scheduler import LRScheduler
from determined.pytorch._callback import PyTorchCallback
from determined.pytorch._context import PyTorchTrialContext
from determined.pytorch._trial import (
    Batch,
    Epoch,
    InvalidExperimentException,
    PyTorchTrial,
    TrainUnit,
)
from determined.pytorch._controller import ShouldExit
from determined.pytorch._trainer import Trainer, init
from determined.pytorch._load import load_trial_from_checkpoint_path

__all__ = [
    "Batch",
    "DataLoader",
    "Epoch",
    "InvalidExperimentException",
    "LRScheduler",
    "MetricReducer",
    "PyTorchCallback",
    "PyTorchTrial",
    "PyTorchTrialContext",
    "Reducer",
    "ShouldExit",
    "TorchData",
    "TrainUnit",
    "Trainer",
    "data_length",
    "init",
    "load_trial_from_checkpoint_path",
    "to_device",
]
