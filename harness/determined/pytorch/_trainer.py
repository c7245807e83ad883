"""``pytorch.init()`` and ``pytorch.Trainer``: run a PyTorchTrial on a cluster (driven by the
experiment config and the master's preemption signals) or locally (``det.get_cluster_info()`` is
None: ``Trainer.fit(max_length=...)`` with hyperparameters given to ``pytorch.init``)."""

import contextlib
import logging
import os
import random
from typing import Any, Dict, Iterator, Optional, Union

import numpy as np
import torch

import determined as det
from determined import core
from determined.pytorch import _data
from determined.pytorch._context import PyTorchTrialContext
from determined.pytorch._controller import _Controller
from determined.pytorch._trial import Batch, PyTorchTrial, TrainUnit

logger = logging.getLogger("determined.pytorch")

#: The default reporting period (Determined's ``scheduling_unit``).
DEFAULT_REPORTING_BATCHES = 100


def _set_random_seeds(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.random.manual_seed(seed)


def _torch_distributed_from_env() -> Optional[core.DistributedContext]:
    """A DistributedContext (and an initialized torch.distributed process group: nccl with
    CUDA, gloo otherwise) when launched by torchrun with several processes; else None."""
    if int(os.environ.get("WORLD_SIZE") or "1") <= 1:
        return None
    import torch.distributed as dist

    if not dist.is_initialized():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        dist.init_process_group(backend=backend)
    return core.DistributedContext.from_torch_distributed()


@contextlib.contextmanager
def init(
    *,
    hparams: Optional[Dict[str, Any]] = None,
    exp_conf: Optional[Dict[str, Any]] = None,
    distributed: Optional[core.DistributedContext] = None,
    aggregation_frequency: int = 1,
    enable_tensorboard_logging: bool = True,
) -> Iterator[PyTorchTrialContext]:
    """
    ``with pytorch.init() as train_context:`` builds the :class:`PyTorchTrialContext` (and
    the Core API context under it) that a PyTorchTrial and ``pytorch.Trainer`` use. On a
    cluster the trial's hyperparameters and experiment config are used; locally, those given
    here. Under ``determined.launch.torch_distributed`` the process group is set up for you.
    """
    info = det.get_cluster_info()
    local = info is None or info.task_type != "TRIAL"
    created_pg = False
    if distributed is None:
        import torch.distributed as dist

        was = dist.is_available() and dist.is_initialized()
        distributed = _torch_distributed_from_env()
        created_pg = distributed is not None and not was

    steps_completed = 0
    if not local:
        assert info is not None
        trial = info.trial
        if hparams is not None and hparams != trial.hparams:
            logger.warning("pytorch.init(hparams=...) differs from the trial's; using the trial's")
        hparams = trial.hparams
        exp_conf = trial._config
        trial_seed: int = trial.trial_seed
        steps_completed = trial._steps_completed
        opt = (exp_conf or {}).get("optimizations") or {}
        if opt.get("aggregation_frequency"):
            aggregation_frequency = int(opt["aggregation_frequency"])
    else:
        seed = ((exp_conf or {}).get("reproducibility") or {}).get("experiment_seed")
        trial_seed = int(seed) if seed is not None else random.randint(0, 1 << 31)
        if distributed is not None and distributed.size > 1:
            trial_seed = distributed.broadcast(trial_seed)

    _set_random_seeds(trial_seed)
    _data._set_default_seed(trial_seed)
    num_gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    try:
        with core.init(distributed=distributed) as core_context:
            context = PyTorchTrialContext(
                core_context=core_context,
                trial_seed=trial_seed,
                hparams=hparams,
                slots_per_trial=core_context.distributed.size,
                num_gpus=num_gpus,
                exp_conf=exp_conf,
                aggregation_frequency=aggregation_frequency,
                steps_completed=steps_completed,
                managed_training=not local,
                enable_tensorboard_logging=enable_tensorboard_logging,
            )
            yield context
    finally:
        if created_pg:
            import torch.distributed as dist

            if dist.is_initialized():
                dist.destroy_process_group()


def _as_unit(value: Union[TrainUnit, int, None], name: str) -> Optional[TrainUnit]:
    if value is None or isinstance(value, TrainUnit):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return Batch(value)
    raise TypeError(f"{name} must be a pytorch.Batch or pytorch.Epoch, got {value!r}")


class Trainer:
    """
    ``pytorch.Trainer(trial, context).fit(...)`` trains a PyTorchTrial: on a cluster until
    ``max_length`` (or the config's deprecated ``searcher.max_length``), reporting metrics,
    validating and checkpointing as configured, and checkpointing and returning when the master
    preempts the trial (a pause, or ASHA stopping it); locally until ``max_length``.
    """

    def __init__(self, trial: PyTorchTrial, context: PyTorchTrialContext) -> None:
        self._trial = trial
        self._context = context
        self._core = context._core
        self._info = det.get_cluster_info()
        self._local = self._info is None or self._info.task_type != "TRIAL"

    def configure_profiler(self, *args: Any, **kwargs: Any) -> None:
        """Accepted for compatibility; the PyTorch profiler integration is not supported."""
        logger.warning("Trainer.configure_profiler() is not supported by Resolute; ignoring it")

    def fit(
        self,
        checkpoint_period: Optional[TrainUnit] = None,
        validation_period: Optional[TrainUnit] = None,
        max_length: Optional[TrainUnit] = None,
        reporting_period: Optional[TrainUnit] = None,
        checkpoint_policy: Optional[str] = None,
        latest_checkpoint: Optional[str] = None,
        step_zero_validation: Optional[bool] = None,
        test_mode: bool = False,
        profiling_enabled: bool = False,
        *,
        min_validation_period: Optional[TrainUnit] = None,
        min_checkpoint_period: Optional[TrainUnit] = None,
    ) -> None:
        """
        Train. Periods are ``pytorch.Batch(n)`` or ``pytorch.Epoch(n)`` (an int means
        batches). ``checkpoint_policy`` is "best" (checkpoint after a validation that is the
        best so far), "all" or "none". ``test_mode`` trains and validates one batch.
        ``min_validation_period``/``min_checkpoint_period`` are aliases of the periods, as
        in the experiment config.
        """
        conf: Dict[str, Any] = {}
        try:
            conf = self._context.get_experiment_config() or {}
        except ValueError:
            pass
        gbs = (self._context._hparams or {}).get("global_batch_size")

        validation_period = _as_unit(validation_period or min_validation_period,
                                     "validation_period")
        checkpoint_period = _as_unit(checkpoint_period or min_checkpoint_period,
                                     "checkpoint_period")
        reporting_period = _as_unit(reporting_period, "reporting_period")
        max_length = _as_unit(max_length, "max_length")
        searcher = conf.get("searcher") or {}
        if not self._local:
            if validation_period is None:
                validation_period = TrainUnit._from_config(conf.get("min_validation_period"), gbs)
            if checkpoint_period is None:
                checkpoint_period = TrainUnit._from_config(conf.get("min_checkpoint_period"), gbs)
            if reporting_period is None and conf.get("scheduling_unit"):
                reporting_period = Batch(int(conf["scheduling_unit"]))
            if checkpoint_policy is None:
                checkpoint_policy = conf.get("checkpoint_policy")
            if step_zero_validation is None:
                step_zero_validation = bool(conf.get("perform_initial_validation", False))
            if max_length is None:
                max_length = TrainUnit._from_config(searcher.get("max_length"), gbs)
                if max_length is not None:
                    logger.warning("searcher.max_length is deprecated; pass max_length to "
                                   "Trainer.fit() instead")
        if max_length is None:
            raise ValueError("max_length must be passed to Trainer.fit()"
                             + ("" if self._local else " or set as searcher.max_length"))
        if not isinstance(max_length.value, int):
            raise ValueError("max_length must be a single length, not a schedule")
        if profiling_enabled:
            logger.warning("profiling_enabled is not supported by Resolute's Trainer; ignoring it")
        policy = checkpoint_policy or "best"
        if policy not in ("best", "all", "none"):
            raise ValueError(f"checkpoint_policy must be best, all or none, not {policy!r}")
        controller = _Controller(
            self._trial,
            self._context,
            max_length=max_length,
            validation_period=validation_period,
            checkpoint_period=checkpoint_period,
            reporting_period=reporting_period or Batch(DEFAULT_REPORTING_BATCHES),
            checkpoint_policy=policy,
            latest_checkpoint=latest_checkpoint,
            step_zero_validation=bool(step_zero_validation),
            test_mode=test_mode,
            searcher_metric=searcher.get("metric"),
            smaller_is_better=bool(searcher.get("smaller_is_better", True)),
            local_training=self._local,
        )
        controller.run()
