"""Determined's Core API: ``det.core.init()`` and the contexts it builds."""

from determined.core._distributed import DistributedContext, DummyDistributedContext
from determined.core._train import (
    DummyTrainContext,
    EarlyExitReason,
    TensorboardMode,
    TrainContext,
)
from determined.core._checkpoint import CheckpointContext, DownloadMode, DummyCheckpointContext
from determined.core._preempt import DummyPreemptContext, PreemptContext, PreemptMode
from determined.core._profiler import DummyProfilerContext, ProfilerContext
from determined.core._searcher import (
    DummySearcherContext,
    DummySearcherOperation,
    SearcherContext,
    SearcherContextMissing,
    SearcherMode,
    SearcherOperation,
    Unit,
    _parse_searcher_max_length,
    _parse_searcher_units,
)
from determined.core._context import Context, _dummy_init, init

__all__ = [
    "CheckpointContext",
    "Context",
    "DistributedContext",
    "DownloadMode",
    "DummyCheckpointContext",
    "DummyDistributedContext",
    "DummyPreemptContext",
    "DummyProfilerContext",
    "DummySearcherContext",
    "DummySearcherOperation",
    "DummyTrainContext",
    "EarlyExitReason",
    "PreemptContext",
    "PreemptMode",
    "ProfilerContext",
    "SearcherContext",
    "SearcherContextMissing",
    "SearcherMode",
    "SearcherOperation",
    "TensorboardMode",
    "TrainContext",
    "Unit",
    "init",
]
