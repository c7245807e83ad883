"""``determined.keras`` is not supported by Resolute yet: importing it raises
:class:`determined._unsupported.UnsupportedIntegrationError` (an ``ImportError``)."""

from determined import _unsupported

_unsupported.refuse(
    "determined.keras",
    "Determined's Keras integration: TFKerasTrial, DeterminedCallback",
    "TensorFlow cannot be tested on Resolute's build machines; train with the Core API "
    "(determined.core) or the PyTorch Trial API (determined.pytorch) instead.",
)
