"""``determined.transformers`` is not supported by Resolute yet: importing it raises
:class:`determined._unsupported.UnsupportedIntegrationError` (an ``ImportError``)."""

from determined import _unsupported

_unsupported.refuse(
    "determined.transformers",
    "Determined's Hugging Face integration: DetCallback",
    "Report metrics and checkpoints from a Trainer callback of your own through the Core API "
    "(determined.core) instead.",
)
