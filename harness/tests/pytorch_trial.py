"""A small PyTorchTrial for the harness's tests: a linear classifier on synthetic data (made
here, deterministic), with knobs in its hyperparameters. Also a script: ``python3
pytorch_trial.py BATCHES`` trains it with pytorch.Trainer, as a task would."""

import logging
import sys
from typing import Any, Dict, List

import torch
import torch.utils.data
from torch import nn

import determined as det
from determined import pytorch


def dataset(n: int, seed: int) -> torch.utils.data.TensorDataset:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 8, generator=g)
    w = torch.arange(8, dtype=torch.float32).reshape(8, 1) / 8 - 0.4
    y = ((x @ w).squeeze(1) > 0).long()
    return torch.utils.data.TensorDataset(x, y)


class SumReducer(pytorch.MetricReducer):
    """Counts records seen, per rank then across ranks."""

    def __init__(self) -> None:
        self.n = 0

    def reset(self) -> None:
        self.n = 0

    def update(self, n: int) -> None:
        self.n += n

    def per_slot_reduce(self) -> Any:
        return self.n

    def cross_slot_reduce(self, per_slot_metrics: List) -> Any:
        return sum(per_slot_metrics)


class LinearTrial(pytorch.PyTorchTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.context = context
        hp = context.get_hparams()
        self.model = context.wrap_model(nn.Sequential(nn.Linear(8, 16), nn.ReLU(),
                                                      nn.Dropout(hp.get("dropout", 0.2)),
                                                      nn.Linear(16, 2)))
        self.opt = context.wrap_optimizer(torch.optim.SGD(self.model.parameters(),
                                                          lr=hp.get("lr", 0.1)))
        mode = hp.get("step_mode")
        self.sched = None
        if mode:
            self.sched = context.wrap_lr_scheduler(
                torch.optim.lr_scheduler.StepLR(self.opt, step_size=1, gamma=0.5),
                step_mode=pytorch.LRScheduler.StepMode[mode])
        self.records = context.wrap_reducer(SumReducer(), name="records_seen")
        self.max_loss = context.wrap_reducer(max, name="max_batch_loss", for_validation=False)
        self.clip = hp.get("clip")

    def build_training_data_loader(self) -> pytorch.DataLoader:
        hp = self.context.get_hparams()
        return pytorch.DataLoader(dataset(hp.get("train_size", 256), 1),
                                  batch_size=self.context.get_per_slot_batch_size(),
                                  shuffle=hp.get("shuffle", True))

    def build_validation_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(dataset(64, 2), batch_size=self.context.get_per_slot_batch_size())

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        x, y = batch
        loss = nn.functional.cross_entropy(self.model(x), y)
        self.context.backward(loss)
        clip = None
        if self.clip:
            clip = lambda params: torch.nn.utils.clip_grad_norm_(params, self.clip)  # noqa: E731
        self.context.step_optimizer(self.opt, clip_grads=clip)
        self.records.update(len(x))
        self.max_loss.update(loss.item())
        out = {"loss": loss}
        if self.sched is not None:
            out["lr"] = self.sched.get_last_lr()[0]
        return out

    def evaluate_batch(self, batch: Any, batch_idx: int) -> Dict[str, Any]:
        x, y = batch
        out = self.model(x)
        self.records.update(len(x))
        return {
            "validation_loss": nn.functional.cross_entropy(out, y).item(),
            "accuracy": (out.argmax(1) == y).float().mean().item(),
            "worst": nn.functional.cross_entropy(out, y).item(),
            "n": len(x),
        }

    def evaluation_reducer(self) -> Dict[str, pytorch.Reducer]:
        return {"validation_loss": pytorch.Reducer.AVG, "accuracy": pytorch.Reducer.AVG,
                "worst": pytorch.Reducer.MAX, "n": pytorch.Reducer.SUM}


class FullDatasetTrial(LinearTrial):
    evaluate_batch = pytorch.PyTorchTrial.evaluate_batch  # type: ignore[assignment]

    def evaluate_full_dataset(self, data_loader: Any) -> Dict[str, Any]:
        n = sum(len(x) for x, _ in data_loader)
        return {"validation_loss": 1.0 / n, "n": n}


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format=det.LOG_FORMAT)
    info = det.get_cluster_info()
    with pytorch.init(hparams={"global_batch_size": 16}) as ctx:
        trial = LinearTrial(ctx)
        pytorch.Trainer(trial, ctx).fit(
            max_length=pytorch.Batch(int(sys.argv[1])),
            validation_period=pytorch.Batch(int(sys.argv[2]) if len(sys.argv) > 2 else 8),
            latest_checkpoint=info.latest_checkpoint if info else None,
            reporting_period=pytorch.Batch(4),
        )
