"""``PyTorchTrialContext``: what a PyTorchTrial uses to wrap its models, optimizers, schedulers
and reducers, run backward passes and step optimizers (with gradient aggregation, clipping and
automatic mixed precision), and read its hyperparameters and config."""

import contextlib
import logging
import pathlib
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

import torch
import torch.nn as nn

from determined import core
from determined.pytorch import _data
from determined.pytorch._lr_scheduler import LRScheduler
from determined.pytorch._reducer import MetricReducer, _SimpleReducer, _WrappedReducer

logger = logging.getLogger("determined.pytorch")


class _Experimental:
    """``context.experimental``: optional behaviours."""

    def __init__(self, context: "PyTorchTrialContext") -> None:
        self._context = context
        self._auto_amp = False
        self._auto_to_device = True
        self._data_repro_checks_disabled = False

    def use_amp(self) -> None:
        """Automatic mixed precision with ``torch.cuda.amp``: each ``train_batch`` runs under
        autocast, losses are scaled and optimizers stepped through a GradScaler. Without CUDA
        this does nothing (a warning says so)."""
        if not torch.cuda.is_available():
            logger.warning("use_amp(): CUDA is not available; training in full precision")
            return
        self._context.wrap_scaler(torch.cuda.amp.GradScaler())
        self._auto_amp = True

    def disable_auto_to_device(self) -> None:
        """Leave batches where the data loader put them."""
        self._auto_to_device = False

    def disable_dataset_reproducibility_checks(self) -> None:
        """Allow a plain ``torch.utils.data.DataLoader`` from the build_*_data_loader methods
        (it is neither sharded nor resumed mid-epoch)."""
        self._data_repro_checks_disabled = True


class PyTorchTrialContext:
    """
    Made by ``pytorch.init()``; passed to your ``PyTorchTrial``'s constructor.

    Wrap every model, optimizer and LR scheduler you train, so that the Trainer moves them to
    the device, distributes them, and saves and restores them in checkpoints.
    """

    def __init__(
        self,
        core_context: core.Context,
        trial_seed: Optional[int],
        hparams: Optional[Dict[str, Any]],
        slots_per_trial: int,
        num_gpus: int,
        exp_conf: Optional[Dict[str, Any]],
        aggregation_frequency: int,
        steps_completed: int,
        managed_training: bool,
        debug_enabled: bool = False,
        enable_tensorboard_logging: bool = True,
    ) -> None:
        self._core = core_context
        self.distributed = core_context.distributed
        self._trial_seed = trial_seed
        self._hparams = hparams
        self._slots_per_trial = slots_per_trial
        self._num_gpus = num_gpus
        self._exp_conf = exp_conf
        self._aggregation_frequency = max(1, int(aggregation_frequency))
        self._steps_completed = steps_completed
        self._managed_training = managed_training
        self._debug_enabled = debug_enabled
        self._enable_tensorboard_logging = enable_tensorboard_logging

        if torch.cuda.is_available() and num_gpus > 0:
            self.device = torch.device("cuda", self.distributed.local_rank)
            torch.cuda.set_device(self.device)
        else:
            self.device = torch.device("cpu")

        self.models: List[nn.Module] = []
        self.optimizers: List[torch.optim.Optimizer] = []
        self.lr_schedulers: List[LRScheduler] = []
        self._scaler: Optional[Any] = None
        self._reducers: List[_WrappedReducer] = []
        self._main_model: Optional[nn.Module] = None
        self._current_batch_idx: Optional[int] = None
        self._epoch_len: Optional[int] = None
        self._stop_requested = False
        self._last_backward_batch_idx: Optional[int] = None
        self._loss_scaled = False
        self.experimental = _Experimental(self)

    # ---- configuration ----

    def get_hparams(self) -> Dict[str, Any]:
        """All hyperparameters of this trial."""
        if self._hparams is None:
            raise ValueError(
                "the trial has no hyperparameters: pass hparams to pytorch.init() when training "
                "locally"
            )
        return self._hparams

    def get_hparam(self, name: str) -> Any:
        """One hyperparameter; raises ValueError when it does not exist."""
        hparams = self.get_hparams()
        if name not in hparams:
            raise ValueError(
                f"Could not find name '{name}' in experiment hyperparameters. Please check your "
                "experiment configuration 'hyperparameters' section."
            )
        return hparams[name]

    def get_experiment_config(self) -> Dict[str, Any]:
        """The experiment configuration (on a cluster, or as passed to pytorch.init())."""
        if self._exp_conf is None:
            raise ValueError(
                "there is no experiment config: pass exp_conf to pytorch.init() when training "
                "locally"
            )
        return self._exp_conf

    def get_data_config(self) -> Dict[str, Any]:
        """The ``data`` section of the experiment configuration ({} without one)."""
        if self._exp_conf is None:
            return {}
        return self._exp_conf.get("data") or {}

    def get_global_batch_size(self) -> int:
        """The ``global_batch_size`` hyperparameter."""
        if self._hparams is None or "global_batch_size" not in self._hparams:
            raise ValueError(
                "get_global_batch_size() needs a global_batch_size hyperparameter; set one, or "
                "use a batch size of your own"
            )
        return int(self._hparams["global_batch_size"])

    def get_per_slot_batch_size(self) -> int:
        """The global batch size divided among the ranks."""
        gbs = self.get_global_batch_size()
        size = self.distributed.size
        if gbs < size:
            raise ValueError(f"global_batch_size {gbs} is smaller than the {size} slots")
        if gbs % size:
            logger.warning(
                f"global_batch_size {gbs} is not divisible by {size} slots; each slot takes "
                f"{gbs // size}"
            )
        return gbs // size

    def get_trial_id(self) -> int:
        info = self._core.info
        if info is None or info.task_type != "TRIAL":
            raise ValueError("there is no trial ID when training locally")
        return info.trial.trial_id

    def get_experiment_id(self) -> int:
        info = self._core.info
        if info is None or info.task_type != "TRIAL":
            raise ValueError("there is no experiment ID when training locally")
        return info.trial.experiment_id

    def get_trial_seed(self) -> Optional[int]:
        return self._trial_seed

    def get_stop_requested(self) -> bool:
        """Whether the trial asked to stop (``set_stop_requested(True)``)."""
        return self._stop_requested

    def set_stop_requested(self, stop_requested: bool) -> None:
        """Ask the Trainer to checkpoint and end the trial at the next boundary."""
        self._stop_requested = bool(stop_requested)

    def get_enable_tensorboard_logging(self) -> bool:
        return self._enable_tensorboard_logging

    def get_tensorboard_path(self) -> pathlib.Path:
        return self._core.train.get_tensorboard_path()

    def get_tensorboard_writer(self) -> Any:
        from torch.utils.tensorboard import SummaryWriter  # needs the tensorboard package

        if not hasattr(self, "_tb_writer"):
            self._tb_writer = SummaryWriter(str(self.get_tensorboard_path()))
        return self._tb_writer

    # ---- the training loop's position ----

    def current_train_batch(self) -> int:
        """The index of the batch being trained (the number of batches trained before it)."""
        if self._current_batch_idx is None:
            raise RuntimeError("current_train_batch() is only known once training has started")
        return self._current_batch_idx

    def is_epoch_start(self) -> bool:
        """Whether the current batch is the first of an epoch."""
        if self._current_batch_idx is None or not self._epoch_len:
            raise RuntimeError("is_epoch_start() is only known during training")
        return self._current_batch_idx % self._epoch_len == 0

    def is_epoch_end(self) -> bool:
        """Whether the current batch is the last of an epoch."""
        if self._current_batch_idx is None or not self._epoch_len:
            raise RuntimeError("is_epoch_end() is only known during training")
        return self._current_batch_idx % self._epoch_len == self._epoch_len - 1

    def _should_communicate_and_update(self) -> bool:
        if self._current_batch_idx is None:
            return True
        return (self._current_batch_idx + 1) % self._aggregation_frequency == 0

    # ---- wrapping ----

    def to_device(self, data: Any) -> Any:
        return _data.to_device(data, self.device)

    def wrap_model(self, model: nn.Module) -> nn.Module:
        """Move ``model`` to this rank's device and, with several ranks, wrap it in
        DistributedDataParallel (gradients are averaged across ranks)."""
        model = model.to(self.device)
        if self.distributed.size > 1:
            import torch.distributed as dist

            if not dist.is_initialized():
                raise RuntimeError(
                    "distributed training needs torch.distributed: launch with "
                    "python3 -m determined.launch.torch_distributed"
                )
            device_ids = [self.device.index] if self.device.type == "cuda" else None
            model = nn.parallel.DistributedDataParallel(model, device_ids=device_ids)
        if self._main_model is None:
            self._main_model = model
        self.models.append(model)
        return model

    def wrap_optimizer(
        self,
        optimizer: torch.optim.Optimizer,
        backward_passes_per_step: int = 1,
        fp16_compression: bool = False,
        average_aggregated_gradients: bool = True,
    ) -> torch.optim.Optimizer:
        """Register ``optimizer`` (saved in checkpoints, stepped by ``step_optimizer``)."""
        if backward_passes_per_step != 1:
            raise ValueError("backward_passes_per_step must be 1 with torch DDP")
        self._average_aggregated_gradients = average_aggregated_gradients
        self.optimizers.append(optimizer)
        return optimizer

    def wrap_lr_scheduler(
        self,
        lr_scheduler: torch.optim.lr_scheduler._LRScheduler,
        step_mode: LRScheduler.StepMode,
        frequency: int = 1,
    ) -> LRScheduler:
        """Register an LR scheduler, stepped by the Trainer according to ``step_mode``."""
        wrapped = LRScheduler(lr_scheduler, step_mode, frequency)
        self.lr_schedulers.append(wrapped)
        return wrapped

    def wrap_scaler(self, scaler: Any) -> Any:
        """Register a ``torch.cuda.amp.GradScaler``, saved in checkpoints; pass it to
        ``backward(..)`` and ``step_optimizer(.., scaler=)`` or use ``experimental.use_amp()``."""
        self._scaler = scaler
        return scaler

    def wrap_reducer(
        self,
        reducer: Union[Callable, MetricReducer],
        name: Optional[str] = None,
        for_training: bool = True,
        for_validation: bool = True,
    ) -> MetricReducer:
        """Register a reducer whose result becomes metric ``name`` (or, without a name, the
        dict of metrics it returns). A plain function of a list of values is wrapped so that
        its ``update(value)`` collects values on every rank."""
        if not isinstance(reducer, MetricReducer):
            if not callable(reducer):
                raise TypeError("reducer must be a MetricReducer or a function of a list")
            reducer = _SimpleReducer(reducer)
        self._reducers.append(_WrappedReducer(reducer, name, for_training, for_validation))
        return reducer

    def _reset_reducers(self) -> None:
        for w in self._reducers:
            w.reducer.reset()

    reset_reducers = _reset_reducers

    # ---- backward and optimizer steps ----

    @contextlib.contextmanager
    def _no_sync(self) -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for m in self.models:
                if isinstance(m, nn.parallel.DistributedDataParallel):
                    stack.enter_context(m.no_sync())
            yield

    def backward(
        self,
        loss: torch.Tensor,
        gradient: Optional[torch.Tensor] = None,
        retain_graph: bool = False,
        create_graph: bool = False,
    ) -> None:
        """``loss.backward()``, scaled for mixed precision and divided by the aggregation
        frequency; with several ranks, gradients are averaged only on the batch that steps
        the optimizer."""
        if self._aggregation_frequency > 1 and getattr(self, "_average_aggregated_gradients",
                                                        True):
            loss = loss / self._aggregation_frequency
        if self._scaler is not None and self.experimental._auto_amp:
            loss = self._scaler.scale(loss)
        if self._should_communicate_and_update():
            loss.backward(gradient=gradient, retain_graph=retain_graph, create_graph=create_graph)
        else:
            with self._no_sync():
                loss.backward(gradient=gradient, retain_graph=retain_graph,
                              create_graph=create_graph)

    def step_optimizer(
        self,
        optimizer: torch.optim.Optimizer,
        clip_grads: Optional[Callable[[Iterator], None]] = None,
        auto_zero_grads: bool = True,
        scaler: Optional[Any] = None,
    ) -> None:
        """Step ``optimizer`` on the last batch of each aggregation window (every batch by
        default): clip the gradients with ``clip_grads(params)`` first, zero them after."""
        if optimizer not in self.optimizers:
            raise ValueError("step_optimizer() needs an optimizer wrapped by wrap_optimizer()")
        if not self._should_communicate_and_update():
            return
        scaler = scaler or (self._scaler if self.experimental._auto_amp else None)
        if clip_grads is not None:
            if scaler is not None:
                scaler.unscale_(optimizer)
            clip_grads(p for group in optimizer.param_groups for p in group["params"])
        if scaler is not None:
            scaler.step(optimizer)
        else:
            optimizer.step()
        if auto_zero_grads:
            optimizer.zero_grad()

    @contextlib.contextmanager
    def _autocast(self) -> Iterator[None]:
        if self._scaler is not None and self.experimental._auto_amp:
            with torch.cuda.amp.autocast():
                yield
        else:
            yield

    def configure_apex_amp(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "apex is not supported by Resolute's harness; use context.experimental.use_amp() "
            "(torch.cuda.amp) instead"
        )
