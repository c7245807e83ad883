"""``determined.estimator`` is not supported by Resolute: importing it raises
:class:`determined._unsupported.UnsupportedIntegrationError` (an ``ImportError``)."""

from determined import _unsupported

_unsupported.refuse(
    "determined.estimator",
    "Determined's TensorFlow Estimator integration: EstimatorTrial, removed from Determined "
    "itself before 0.38",
    "Train with the Core API (determined.core) or the PyTorch Trial API (determined.pytorch) "
    "instead.",
)
