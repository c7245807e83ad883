"""``python3 -m determined.launch.horovod`` is not supported by Resolute (Horovod is deprecated in
Determined 0.38): run as a launch layer it says so and exits 1; imported it raises
:class:`determined._unsupported.UnsupportedIntegrationError` (an ``ImportError``)."""

from determined import _unsupported

_unsupported.refuse(
    "determined.launch.horovod",
    "Determined's Horovod launch layer, deprecated in Determined 0.38",
    "Use python3 -m determined.launch.torch_distributed as the entrypoint instead.",
    main=__name__ == "__main__",
)
