"""``python3 -m determined.launch.deepspeed`` is not supported by Resolute yet: run as a launch
layer it says so and exits 1; imported it raises
:class:`determined._unsupported.UnsupportedIntegrationError` (an ``ImportError``)."""

from determined import _unsupported

_unsupported.refuse(
    "determined.launch.deepspeed",
    "Determined's DeepSpeed launch layer",
    "Use python3 -m determined.launch.torch_distributed as the entrypoint instead.",
    main=__name__ == "__main__",
)
