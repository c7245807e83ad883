"""Resolute's implementation of Determined's Python Core API (``import determined as det``).

Standard library only; shipped into every task by the Resolute master. Training scripts written
for Determined's Core API run unchanged:

.. code:: python

    import determined as det

    with det.core.init() as core_context:
        core_context.train.report_training_metrics(steps_completed=10, metrics={"loss": 0.5})
"""

__version__ = "0.38.1+resolute"

#: The log format to use so that the WebUI can filter task logs by level.
LOG_FORMAT = "%(levelname)s: [%(process)s] %(name)s: %(message)s"


class InvalidHP(Exception):
    """
    Raise ``InvalidHP`` from inside ``with det.core.init() as core_context:`` when the chosen
    hyperparameters cannot work. The context reports an early exit (INVALID_HP) to the master and
    the process exits with status 0, so the searcher moves on instead of counting a failure.
    """

    def __init__(self, msg: str = "InvalidHP") -> None:
        super().__init__(msg)


from determined._info import ClusterInfo, RendezvousInfo, TrialInfo, get_cluster_info  # noqa: E402
from determined import core  # noqa: E402

__all__ = [
    "LOG_FORMAT",
    "InvalidHP",
    "ClusterInfo",
    "RendezvousInfo",
    "TrialInfo",
    "get_cluster_info",
    "core",
    "__version__",
]
