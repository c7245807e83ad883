"""DigitsTrial: a PyTorchTrial (Determined's PyTorch Trial API) that classifies scikit-learn's
8x8 digits, which ship inside the package, so nothing is downloaded."""

from typing import Any, Dict

import torch
import torch.utils.data
from sklearn.datasets import load_digits
from torch import nn

from determined import pytorch

# Every trial validates on the same images: the split has a seed of its own.
SPLIT_SEED = 0


def datasets() -> Dict[str, torch.utils.data.TensorDataset]:
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(SPLIT_SEED))
    n_val = len(y) // 5
    val, train = perm[:n_val], perm[n_val:]
    return {"train": torch.utils.data.TensorDataset(x[train], y[train]),
            "validation": torch.utils.data.TensorDataset(x[val], y[val])}


class DigitsTrial(pytorch.PyTorchTrial):
    def __init__(self, context: pytorch.PyTorchTrialContext) -> None:
        self.context = context
        self.data = datasets()
        self.model = context.wrap_model(nn.Sequential(
            nn.Linear(64, context.get_hparam("hidden_size")),
            nn.ReLU(),
            nn.Dropout(context.get_hparam("dropout")),
            nn.Linear(context.get_hparam("hidden_size"), 10),
        ))
        self.optimizer = context.wrap_optimizer(
            torch.optim.Adam(self.model.parameters(), lr=context.get_hparam("lr")))
        # Halve the learning rate every epoch.
        self.scheduler = context.wrap_lr_scheduler(
            torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=1, gamma=0.5),
            step_mode=pytorch.LRScheduler.StepMode.STEP_EVERY_EPOCH)

    def build_training_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(self.data["train"], shuffle=True,
                                  batch_size=self.context.get_per_slot_batch_size())

    def build_validation_data_loader(self) -> pytorch.DataLoader:
        return pytorch.DataLoader(self.data["validation"],
                                  batch_size=self.context.get_per_slot_batch_size())

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Dict[str, Any]:
        x, y = batch
        loss = nn.functional.cross_entropy(self.model(x), y)
        self.context.backward(loss)
        self.context.step_optimizer(
            self.optimizer,
            clip_grads=lambda params: torch.nn.utils.clip_grad_norm_(params, 1.0))
        return {"loss": loss, "lr": self.scheduler.get_last_lr()[0]}

    def evaluate_batch(self, batch: Any, batch_idx: int) -> Dict[str, Any]:
        x, y = batch
        logits = self.model(x)
        return {
            "validation_loss": nn.functional.cross_entropy(logits, y).item(),
            "accuracy": (logits.argmax(dim=1) == y).float().mean().item(),
        }
