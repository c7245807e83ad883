"""``determined.pytorch.deepspeed`` is not supported by Resolute yet: importing it raises
:class:`determined._unsupported.UnsupportedIntegrationError` (an ``ImportError``)."""

from determined import _unsupported

_unsupported.refuse(
    "determined.pytorch.deepspeed",
    "Determined's DeepSpeed integration: DeepSpeedTrial, DeepSpeedTrialContext",
    "DeepSpeed cannot be tested on Resolute's build machines; use PyTorchTrial "
    "(determined.pytorch) with determined.launch.torch_distributed, or the Core API, instead.",
)
