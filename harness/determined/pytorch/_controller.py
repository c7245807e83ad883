"""The Trainer's training loop: trains a PyTorchTrial in periods that end at boundaries
(reporting, validation, checkpoint, the end of training), checks for preemption at each, and
saves and restores checkpoints in Determined's layout:

- ``state_dict.pth``: ``models_state_dict``, ``optimizers_state_dict``,
  ``lr_schedulers_state_dict``, ``callbacks``, ``rng_state`` (and ``scaler_state_dict``);
- ``trial_state.pkl``: the loop's position (a pickled dict: trial_id, last_ckpt, step_id,
  last_val, batches_trained, epochs_trained);
- ``load_data.json``: what ``load_trial_from_checkpoint_path`` needs to rebuild the trial;
- ``code/``: the model definition (on a cluster);
- ``metadata.json``: written by the Core API.
"""

import contextlib
import enum
import inspect
import json
import logging
import os
import pathlib
import pickle
import random
import shutil
import sys
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.utils.data

import determined as det
from determined import core
from determined.pytorch import _data, _reducer
from determined.pytorch._callback import PyTorchCallback
from determined.pytorch._context import PyTorchTrialContext
from determined.pytorch._lr_scheduler import LRScheduler
from determined.pytorch._trial import (
    Batch,
    Epoch,
    InvalidExperimentException,
    PyTorchTrial,
    TrainUnit,
    _is_overridden,
)

logger = logging.getLogger("determined.pytorch")

#: Files larger than this in all are not copied into a checkpoint's code/ directory.
CODE_LIMIT = 96 << 20


class _Boundary(enum.Enum):
    TRAIN = "TRAIN"
    REPORT = "REPORT"
    VALIDATE = "VALIDATE"
    CHECKPOINT = "CHECKPOINT"


class ShouldExit(Exception):
    """Leaves the training loop (preempted, or stop requested)."""

    def __init__(self, skip_exit_checkpoint: bool = False) -> None:
        super().__init__()
        self.skip_exit_checkpoint = skip_exit_checkpoint


class _TrialState:
    def __init__(self, trial_id: int = 0, last_ckpt: int = 0, step_id: int = 0,
                 last_val: int = 0, batches_trained: int = 0, epochs_trained: int = 0) -> None:
        self.trial_id = trial_id
        self.last_ckpt = last_ckpt
        self.step_id = step_id
        self.last_val = last_val
        self.batches_trained = batches_trained
        self.epochs_trained = epochs_trained


def _to_python(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        return value.item() if value.numel() == 1 else value.numpy().tolist()
    if isinstance(value, np.ndarray):
        return value.item() if value.size == 1 else value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _metrics_to_python(metrics: Dict[str, Any]) -> Dict[str, Any]:
    return {k: _to_python(v) for k, v in metrics.items()}


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class _Controller:
    def __init__(
        self,
        trial: PyTorchTrial,
        context: PyTorchTrialContext,
        *,
        max_length: TrainUnit,
        validation_period: Optional[TrainUnit],
        checkpoint_period: Optional[TrainUnit],
        reporting_period: TrainUnit,
        checkpoint_policy: str,
        latest_checkpoint: Optional[str],
        step_zero_validation: bool,
        test_mode: bool,
        searcher_metric: Optional[str],
        smaller_is_better: bool,
        local_training: bool,
    ) -> None:
        if not isinstance(trial, PyTorchTrial):
            raise TypeError("pytorch.Trainer needs a PyTorchTrial")
        self.trial = trial
        self.context = context
        self.core = context._core
        self.dist = context.distributed
        self.is_chief = self.dist.rank == 0
        self.max_length = max_length
        self.local_training = local_training
        self.test_mode = test_mode
        self.checkpoint_policy = checkpoint_policy
        self.latest_checkpoint = latest_checkpoint
        self.step_zero_validation = step_zero_validation
        self.searcher_metric = searcher_metric
        self.smaller_is_better = smaller_is_better
        self.boundaries: List[Tuple[_Boundary, TrainUnit]] = [(_Boundary.REPORT, reporting_period)]
        if validation_period is not None:
            self.boundaries.append((_Boundary.VALIDATE, validation_period))
        if checkpoint_period is not None:
            self.boundaries.append((_Boundary.CHECKPOINT, checkpoint_period))
        info = self.core.info
        self.trial_id = 0 if local_training or info is None else info.trial.trial_id
        self.state = _TrialState(trial_id=self.trial_id)

        if not context.models:
            raise InvalidExperimentException(
                "Must have at least one model; wrap your model with context.wrap_model()")
        if not context.optimizers:
            raise InvalidExperimentException(
                "Must have at least one optimizer; wrap it with context.wrap_optimizer()")
        self.eval_batch = _is_overridden(trial, "evaluate_batch")
        if self.eval_batch == _is_overridden(trial, "evaluate_full_dataset"):
            raise InvalidExperimentException(
                "Please define exactly one of: `evaluate_batch()` or `evaluate_full_dataset()`.")
        self.eval_takes_idx = "batch_idx" in inspect.signature(trial.evaluate_batch).parameters
        self.callbacks: Dict[str, PyTorchCallback] = trial.build_callbacks()
        self.val_from_previous_run: Optional[int] = None
        if not local_training:
            try:
                self.val_from_previous_run = self.core.train._get_last_validation()
            except Exception as e:  # an older master, or none: nothing to skip
                logger.debug(f"no last validation from the master: {e}")

    # ---- setup ----

    def _loader(self, built: Any, what: str, repeat: bool, skip: int, sharded: bool) -> Any:
        if isinstance(built, _data.DataLoader):
            replicas, rank = (self.dist.size, self.dist.rank) if sharded else (1, 0)
            return built.get_data_loader(repeat=repeat, skip=skip, num_replicas=replicas,
                                         rank=rank)
        if not self.context.experimental._data_repro_checks_disabled:
            raise RuntimeError(
                f"{what}() must return a determined.pytorch.DataLoader, got "
                f"{type(built).__name__}; to use another loader (neither sharded nor resumed "
                "mid-epoch), call context.experimental.disable_dataset_reproducibility_checks()")
        return built

    def _set_data_loaders(self, skip: int) -> None:
        self.training_loader = self._loader(self.trial.build_training_data_loader(),
                                            "build_training_data_loader", True, skip, True)
        try:
            epoch_len = len(self.training_loader)
        except TypeError:
            epoch_len = sys.maxsize
        self.context._epoch_len = self.dist.broadcast(epoch_len)
        self.validation_loader = None
        val = self.trial.build_validation_data_loader()
        if self.eval_batch:
            self.validation_loader = self._loader(val, "build_validation_data_loader", False, 0,
                                                  True)
        elif self.is_chief:
            self.validation_loader = self._loader(val, "build_validation_data_loader", False, 0,
                                                  False)

    def run(self) -> None:
        with contextlib.ExitStack() as stack:
            for cb in self.callbacks.values():
                cb.on_trial_startup(self.context._steps_completed, self.latest_checkpoint)
                stack.callback(cb.on_trial_shutdown)
            if self.latest_checkpoint is not None:
                logger.info(f"Restoring trial from checkpoint {self.latest_checkpoint}")
                with self.core.checkpoint.restore_path(self.latest_checkpoint) as path:
                    self._load_trial_state(path)
                    self._start_iterator(stack)
                    self._load(path)
            else:
                self._start_iterator(stack)
            for cb in self.callbacks.values():
                cb.on_training_start()
            self._run()

    def _start_iterator(self, stack: contextlib.ExitStack) -> None:
        # Made before the checkpoint's RNG state is restored, as in the run that wrote it.
        skip = self.state.batches_trained
        self._set_data_loaders(skip)
        self._iter = iter(self.training_loader)
        self._enumerator = enumerate(self._iter, start=skip)

        def cleanup() -> None:
            del self._iter
            del self._enumerator

        stack.callback(cleanup)

    # ---- the loop ----

    def _run(self) -> None:
        try:
            if (self.step_zero_validation and self.val_from_previous_run is None
                    and self.state.batches_trained == 0):
                self._validate()
            while self._remaining() > 0:
                reached = self._train_period()
                if _Boundary.TRAIN in reached or _Boundary.REPORT in reached:
                    self._report_progress()
                for kind in reached:
                    if kind == _Boundary.VALIDATE and not self._validation_is_current():
                        self._validate()
                    elif kind == _Boundary.CHECKPOINT and not self._checkpoint_is_current():
                        self._checkpoint(already_exiting=False)
                if self.test_mode:
                    break
                self._check_stop()
            if not self._validation_is_current():
                self._validate()
            if not self._checkpoint_is_current():
                self._checkpoint(already_exiting=False)
        except ShouldExit as e:
            if not e.skip_exit_checkpoint and not self._checkpoint_is_current():
                self._checkpoint(already_exiting=True)
        except det.InvalidHP:
            if not self._checkpoint_is_current():
                self._checkpoint(already_exiting=True)
            raise

    def _remaining(self) -> int:
        assert isinstance(self.max_length.value, int), "max_length must be a single length"
        done = (self.state.batches_trained if isinstance(self.max_length, Batch)
                else self.state.epochs_trained)
        return self.max_length.value - done

    def _check_stop(self) -> None:
        if self.core.preempt.should_preempt():
            logger.info("preempted: checkpointing and exiting")
            raise ShouldExit()
        if self.dist.size > 1:
            stop = any(self.dist.allgather(self.context.get_stop_requested()))
        else:
            stop = self.context.get_stop_requested()
        if stop:
            raise ShouldExit()

    def _checkpoint_is_current(self) -> bool:
        return self.state.last_ckpt == self.state.batches_trained

    def _validation_is_current(self) -> bool:
        return self.state.last_val == self.state.batches_trained

    def _train_period(self) -> List[_Boundary]:
        if self.is_chief:
            self.core.train.set_status("training")
        for m in self.context.models:
            m.train()
        self.context._reset_reducers()
        epoch_len = self.context._epoch_len
        assert epoch_len
        metrics: List[Dict[str, Any]] = []
        reached: List[_Boundary] = []
        for batch_idx, batch in self._enumerator:
            epoch_idx, in_epoch = divmod(batch_idx, epoch_len)
            self.context._current_batch_idx = batch_idx
            if in_epoch == 0:
                for cb in self.callbacks.values():
                    cb.on_training_epoch_start(epoch_idx)
            metrics.append(self._train_batch(batch, epoch_idx, batch_idx))
            self.state.batches_trained += 1
            self.core.profiler._batches_completed(self.state.batches_trained)
            epoch_end = in_epoch == epoch_len - 1
            if epoch_end:
                for cb in self.callbacks.values():
                    cb.on_training_epoch_end(epoch_idx)
                self.state.epochs_trained += 1
            if self._remaining() <= 0 or self.test_mode:
                reached.append(_Boundary.TRAIN)
            for kind, unit in self.boundaries:
                if isinstance(unit, Epoch):
                    if epoch_end and unit.should_stop(self.state.epochs_trained):
                        reached.append(kind)
                elif unit.should_stop(self.state.batches_trained):
                    reached.append(kind)
            if reached:
                break
        self._report_training(metrics)
        return reached

    def _train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        ctx = self.context
        if ctx.experimental._auto_to_device:
            batch = ctx.to_device(batch)
        with ctx._autocast():
            out = self.trial.train_batch(batch=batch, epoch_idx=epoch_idx, batch_idx=batch_idx)
        if ctx._scaler is not None and ctx.experimental._auto_amp and \
                ctx._should_communicate_and_update():
            ctx._scaler.update()
        if isinstance(out, torch.Tensor):
            out = {"loss": out}
        if not isinstance(out, dict):
            raise TypeError(f"train_batch() must return a dict or a tensor, got {type(out)}")
        for sched in ctx.lr_schedulers:
            self._auto_step_lr_scheduler(batch_idx, sched)
        return _metrics_to_python(out)

    def _auto_step_lr_scheduler(self, batch_idx: int, sched: LRScheduler) -> None:
        ctx = self.context
        if not ctx._should_communicate_and_update():
            return
        agg, freq = ctx._aggregation_frequency, sched._frequency
        mode = sched._step_mode
        if mode == LRScheduler.StepMode.STEP_EVERY_BATCH:
            for i in range(batch_idx - agg + 1, batch_idx + 1):
                if (i + 1) % freq == 0:
                    sched.step()
        elif mode == LRScheduler.StepMode.STEP_EVERY_OPTIMIZER_STEP:
            if ((batch_idx + 1) // agg) % freq == 0:
                sched.step()
        elif mode == LRScheduler.StepMode.STEP_EVERY_EPOCH:
            epoch_len = ctx._epoch_len
            assert epoch_len
            # Step for every epoch that ends before the next optimizer step.
            for e in range(batch_idx // epoch_len, (batch_idx + agg) // epoch_len):
                if (e + 1) % freq == 0:
                    sched.step()

    def _report_training(self, per_batch: List[Dict[str, Any]]) -> None:
        if self.dist.size > 1:
            gathered = self.dist.gather(per_batch)
            if gathered is not None:
                per_batch = []
                for i in range(max(len(g) for g in gathered)):
                    rows = [g[i] for g in gathered if i < len(g)]
                    merged: Dict[str, Any] = {}
                    for k in rows[0]:
                        vals = [r.get(k) for r in rows]
                        merged[k] = (float(np.mean(vals)) if all(_is_number(v) for v in vals)
                                     else vals[0])
                    per_batch.append(merged)
        custom = _reducer._reduce_custom(self.context._reducers, self.dist.gather, True)
        avg: Optional[Dict[str, Any]] = None
        if self.is_chief:
            avg = {}
            keys = {k for row in per_batch for k in row}
            for k in sorted(keys):
                vals = [row[k] for row in per_batch if k in row]
                if vals and all(_is_number(v) for v in vals):
                    avg[k] = float(np.mean(vals))
            avg.update(_metrics_to_python(custom))
            avg.setdefault("batches", self.state.batches_trained)
            avg.setdefault("epochs", self.state.epochs_trained)
            self.core.train.report_training_metrics(
                steps_completed=self.state.batches_trained, metrics=avg, batch_metrics=per_batch)
        if self.callbacks:
            avg, per_batch = self.dist.broadcast((avg, per_batch))
            for cb in self.callbacks.values():
                cb.on_training_workload_end(avg_metrics=avg or {}, batch_metrics=per_batch)

    def _report_progress(self) -> None:
        if not self.is_chief or self.local_training:
            return
        total = self.max_length.value
        assert isinstance(total, int)
        if isinstance(self.max_length, Batch):
            done = float(self.state.batches_trained)
        else:
            done = self.state.batches_trained / float(self.context._epoch_len or 1)
        self.core.train.report_progress(max(0.0, min(1.0, done / total)) if total > 0 else 1.0)

    # ---- validation ----

    def _reduce_batches(self, batch_metrics: List[Dict[str, Any]]) -> Dict[str, Any]:
        if not batch_metrics:
            raise RuntimeError("validation_loader is empty.")
        keys = list(batch_metrics[0].keys())
        for m in batch_metrics:
            if list(m.keys()) != keys and set(m.keys()) != set(keys):
                raise ValueError("Validation metric names must match across all batches of "
                                 f"data: {keys} != {list(m.keys())}.")
        spec = self.trial.evaluation_reducer()
        out: Dict[str, Any] = {}
        for k in keys:
            red = spec.get(k, _reducer.Reducer.AVG) if isinstance(spec, dict) else spec
            if not isinstance(red, _reducer.Reducer):
                raise TypeError(f"evaluation_reducer() must give Reducers, got {red!r}")
            out[k] = _reducer._reduce(red, [m[k] for m in batch_metrics])
        return out

    @torch.no_grad()
    def _validate(self) -> Dict[str, Any]:
        if self.is_chief:
            self.core.train.set_status("validating")
        self.context._reset_reducers()
        for m in self.context.models:
            m.eval()
        for cb in self.callbacks.values():
            cb.on_validation_start()
        metrics: Dict[str, Any] = {}
        if self.eval_batch:
            for cb in self.callbacks.values():
                cb.on_validation_epoch_start()
            batch_metrics = []
            assert self.validation_loader is not None
            for idx, batch in enumerate(self.validation_loader):
                if self.context.experimental._auto_to_device:
                    batch = self.context.to_device(batch)
                if self.eval_takes_idx:
                    out = self.trial.evaluate_batch(batch=batch, batch_idx=idx)
                else:
                    out = self.trial.evaluate_batch(batch=batch)  # type: ignore[call-arg]
                if not isinstance(out, dict):
                    raise TypeError(f"evaluate_batch() must return a dict, got {type(out)}")
                batch_metrics.append(_metrics_to_python(out))
                if self.test_mode:
                    break
            for cb in self.callbacks.values():
                cb.on_validation_epoch_end(batch_metrics)
            gathered = self.dist.gather(batch_metrics)
            if gathered is not None:
                metrics = self._reduce_batches([m for g in gathered for m in g])
        elif self.is_chief:
            out = self.trial.evaluate_full_dataset(data_loader=self.validation_loader)
            if not isinstance(out, dict):
                raise TypeError(f"evaluate_full_dataset() must return a dict, got {type(out)}")
            metrics = _metrics_to_python(out)
        custom = _reducer._reduce_custom(self.context._reducers, self.dist.gather, False)
        if self.is_chief:
            metrics.update(_metrics_to_python(custom))
            # Determined 0.38 reports the training length with every validation, for ASHA's
            # time_metric.
            metrics.setdefault("batches", self.state.batches_trained)
            metrics.setdefault("epochs", self.state.epochs_trained)
        if self.dist.size > 1:
            metrics = self.dist.broadcast(metrics)
        for cb in self.callbacks.values():
            cb.on_validation_end(metrics)
        self.state.last_val = self.state.batches_trained

        should_checkpoint = False
        if self.is_chief:
            searcher_value = None
            if self.searcher_metric and not self.local_training:
                if self.searcher_metric not in metrics:
                    raise RuntimeError(
                        f"Search method is configured to use metric '{self.searcher_metric}' but "
                        f"model definition returned validation metrics {list(metrics.keys())}. "
                        "The metric used by the search method must be one of the validation "
                        "metrics returned by the model definition.")
                searcher_value = metrics[self.searcher_metric]
            best_before = None
            if self.checkpoint_policy == "best" and searcher_value is not None:
                best_before = self.core.train.get_experiment_best_validation()
            self.core.train.report_validation_metrics(self.state.batches_trained, metrics)
            if not self._checkpoint_is_current():
                if self.checkpoint_policy == "all":
                    should_checkpoint = True
                elif self.checkpoint_policy == "best" and searcher_value is not None:
                    should_checkpoint = best_before is None or (
                        searcher_value < best_before if self.smaller_is_better
                        else searcher_value > best_before)
        if self.dist.size > 1:
            should_checkpoint = self.dist.broadcast(should_checkpoint)
        if should_checkpoint:
            self._checkpoint(already_exiting=False)
        return metrics

    # ---- checkpoints ----

    def _checkpoint(self, already_exiting: bool) -> None:
        if self.is_chief:
            self.core.train.set_status("checkpointing")
        self.state.last_ckpt = self.state.batches_trained
        try:
            uuid = ""
            if self.is_chief:
                metadata = {
                    "determined_version": det.__version__,
                    "steps_completed": self.state.batches_trained,
                    "framework": f"torch-{torch.__version__}",
                    "format": "pickle",
                }
                with self.core.checkpoint.store_path(metadata) as (path, storage_id):
                    self._save(path)
                    uuid = storage_id
            if self.dist.size > 1:
                uuid = self.dist.broadcast(uuid)
            for cb in self.callbacks.values():
                cb.on_checkpoint_upload_end(uuid=uuid)
        except det.InvalidHP:
            if not already_exiting:
                self.core.train.report_early_exit(core.EarlyExitReason.INVALID_HP)
                raise ShouldExit(skip_exit_checkpoint=True)
            raise

    def _save(self, path: pathlib.Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        if not self.local_training:
            _write_user_code(path / "code")
        rng_state: Dict[str, Any] = {
            "cpu_rng_state": torch.random.get_rng_state(),
            "np_rng_state": np.random.get_state(),
            "random_rng_state": random.getstate(),
        }
        if torch.cuda.device_count():
            rng_state["gpu_rng_state"] = torch.cuda.get_rng_state(self.dist.local_rank)
        ctx = self.context
        checkpoint: Dict[str, Any] = {
            "models_state_dict": [m.state_dict() for m in ctx.models],
            "optimizers_state_dict": [o.state_dict() for o in ctx.optimizers],
            "lr_schedulers_state_dict": [s.state_dict() for s in ctx.lr_schedulers],
            "callbacks": {name: cb.state_dict() for name, cb in self.callbacks.items()},
            "rng_state": rng_state,
        }
        if ctx._scaler is not None:
            checkpoint["scaler_state_dict"] = ctx._scaler.state_dict()
        for cb in self.callbacks.values():
            cb.on_checkpoint_save_start(checkpoint)
        torch.save(checkpoint, str(path / "state_dict.pth"))
        with (path / "trial_state.pkl").open("wb") as f:
            pickle.dump(vars(self.state), f)
        try:
            exp_conf: Optional[Dict[str, Any]] = ctx.get_experiment_config()
        except ValueError:
            exp_conf = None
        try:
            hparams: Optional[Dict[str, Any]] = ctx.get_hparams()
        except ValueError:
            hparams = None
        load_data = {
            "trial_type": "PyTorchTrial",
            "experiment_config": exp_conf,
            "hparams": hparams,
            "trial_cls_spec": _trial_cls_spec(type(self.trial)),
            "is_trainer": True,
        }
        with (path / "load_data.json").open("w") as f2:
            json.dump(load_data, f2)
        for cb in self.callbacks.values():
            cb.on_checkpoint_end(str(path))
            cb.on_checkpoint_write_end(str(path))

    def _load_trial_state(self, path: pathlib.Path) -> None:
        state: Optional[Dict[str, Any]] = None
        p = path / "trial_state.pkl"
        if p.exists():
            with p.open("rb") as f:
                state = pickle.load(f)
        elif (path / "workload_sequencer.pkl").exists():
            # Checkpoints from before the Trainer API.
            with (path / "workload_sequencer.pkl").open("rb") as f:
                old = pickle.load(f)
            state = {"trial_id": old.get("trial_id"), "last_ckpt": old.get("last_ckpt", 0),
                     "last_val": old.get("last_val", 0), "step_id": old.get("step_id", 0),
                     "batches_trained": old.get("steps_completed", 0), "epochs_trained": 0}
        if not state or state.get("trial_id") != self.trial_id:
            # Another trial's checkpoint (or none): keep the weights, start counting afresh.
            self.state = _TrialState(trial_id=self.trial_id)
            return
        self.state = _TrialState(**{k: state[k] for k in vars(_TrialState()) if k in state})
        if self.state.batches_trained == self.val_from_previous_run:
            self.state.last_val = self.state.batches_trained

    def _load(self, path: pathlib.Path) -> None:
        checkpoint = None
        for rel in (["state_dict.pth"], ["determined", "state_dict.pth"],
                    ["pedl", "state_dict.pth"], ["checkpoint.pt"]):
            p = path.joinpath(*rel)
            if p.exists():
                checkpoint = torch.load(str(p), map_location="cpu")
                break
        if not isinstance(checkpoint, dict):
            return
        for cb in self.callbacks.values():
            cb.on_checkpoint_load_start(checkpoint)
        _load_state_dicts(self.context, checkpoint)
        rng = checkpoint.get("rng_state")
        if rng:
            np.random.set_state(rng["np_rng_state"])
            random.setstate(rng["random_rng_state"])
            torch.random.set_rng_state(rng["cpu_rng_state"])
            if torch.cuda.device_count() and "gpu_rng_state" in rng:
                torch.cuda.set_rng_state(rng["gpu_rng_state"], device=self.dist.local_rank)
        else:
            logger.warning("The checkpoint has no random state to restore.")
        states = checkpoint.get("callbacks", {})
        for name, cb in self.callbacks.items():
            if name in states:
                cb.load_state_dict(states[name])


def _trial_cls_spec(cls: type) -> str:
    """``module:Class``; a class defined in the script being run (``python3 train.py``) is
    named by the script's module (``train``), which the checkpoint's code/ holds."""
    module = cls.__module__
    if module == "__main__":
        script = pathlib.Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
        if script is not None and script.suffix == ".py":
            module = script.stem
    return f"{module}:{cls.__qualname__}"


def _fit_prefix(model: torch.nn.Module, sd: Dict[str, Any]) -> Dict[str, Any]:
    """A state dict saved from a DistributedDataParallel model has keys prefixed "module.";
    make ``sd`` match ``model`` either way."""
    is_ddp = isinstance(model, torch.nn.parallel.DistributedDataParallel)
    has = bool(sd) and all(k.startswith("module.") for k in sd)
    if is_ddp and not has:
        return type(sd)((("module." + k), v) for k, v in sd.items())
    if not is_ddp and has:
        return type(sd)((k[len("module."):], v) for k, v in sd.items())
    return sd


def _load_state_dicts(ctx: PyTorchTrialContext, checkpoint: Dict[str, Any]) -> None:
    if "model_state_dict" in checkpoint:
        ctx.models[0].load_state_dict(_fit_prefix(ctx.models[0], checkpoint["model_state_dict"]))
    else:
        for model, sd in zip(ctx.models, checkpoint.get("models_state_dict", [])):
            model.load_state_dict(_fit_prefix(model, sd))
    if "optimizer_state_dict" in checkpoint:
        ctx.optimizers[0].load_state_dict(checkpoint["optimizer_state_dict"])
    else:
        for opt, sd in zip(ctx.optimizers, checkpoint.get("optimizers_state_dict", [])):
            opt.load_state_dict(sd)
    if "lr_scheduler" in checkpoint:
        ctx.lr_schedulers[0].load_state_dict(checkpoint["lr_scheduler"])
    else:
        for sched, sd in zip(ctx.lr_schedulers, checkpoint.get("lr_schedulers_state_dict", [])):
            sched.load_state_dict(sd)
    if "scaler_state_dict" in checkpoint and ctx._scaler is not None:
        ctx._scaler.load_state_dict(checkpoint["scaler_state_dict"])


def _write_user_code(dst: pathlib.Path) -> None:
    """Copy the model definition (the task's working directory) into ``dst``, leaving out
    __pycache__ and stopping at CODE_LIMIT bytes in all."""
    src = pathlib.Path(os.getcwd())
    total = 0
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", ".git"))
        rel = pathlib.Path(root).relative_to(src)
        for name in sorted(files):
            p = pathlib.Path(root) / name
            if p.is_symlink() or not p.is_file():
                continue
            size = p.stat().st_size
            if total + size > CODE_LIMIT:
                logger.warning(f"code/ in the checkpoint leaves out {rel / name} and the rest: "
                               f"the model definition is over {CODE_LIMIT >> 20} MiB")
                return
            total += size
            (dst / rel).mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, dst / rel / name)
    dst.mkdir(parents=True, exist_ok=True)


__all__ = ["ShouldExit", "_Controller", "_load_state_dicts"]
