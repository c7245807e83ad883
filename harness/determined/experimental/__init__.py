"""Determined's ``determined.experimental``: the Python SDK (``client`` and the classes it
returns). ``from determined.experimental import client`` is the usual way in."""

from determined.common.experimental import (
    Checkpoint,
    CheckpointOrderBy,
    CheckpointSortBy,
    CheckpointState,
    Determined,
    DownloadMode,
    Experiment,
    ExperimentOrderBy,
    ExperimentReference,
    ExperimentSortBy,
    ExperimentState,
    LogLevel,
    Model,
    ModelOrderBy,
    ModelSortBy,
    ModelVersion,
    OrderBy,
    Project,
    TrainingMetrics,
    Trial,
    TrialMetrics,
    TrialOrderBy,
    TrialReference,
    TrialSortBy,
    TrialState,
    User,
    ValidationMetrics,
    Workspace,
)
from determined.experimental import client  # noqa: E402
