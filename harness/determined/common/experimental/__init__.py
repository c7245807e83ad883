"""The Python SDK's classes; use them through ``determined.experimental.client``."""

from determined.common.experimental._util import OrderBy
from determined.common.experimental.checkpoint import (
    Checkpoint,
    CheckpointOrderBy,
    CheckpointSortBy,
    CheckpointState,
    DownloadMode,
)
from determined.common.experimental.determined import Determined
from determined.common.experimental.experiment import (
    Experiment,
    ExperimentOrderBy,
    ExperimentReference,
    ExperimentSortBy,
    ExperimentState,
)
from determined.common.experimental.metrics import TrainingMetrics, TrialMetrics, ValidationMetrics
from determined.common.experimental.model import Model, ModelOrderBy, ModelSortBy, ModelVersion
from determined.common.experimental.trial import (
    LogLevel,
    Trial,
    TrialOrderBy,
    TrialReference,
    TrialSortBy,
    TrialState,
)
from determined.common.experimental.user import User
from determined.common.experimental.workspace import Project, Workspace
