"""The data and the model, shared by train.py and load_best.py."""

import torch
from sklearn.datasets import load_digits
from torch import nn

# The train/validation split has a seed of its own, not the trial's: every trial of a search
# then validates on the same images (so ASHA compares like with like), and load_best.py can
# rebuild the validation set of any checkpoint.
SPLIT_SEED = 0
VAL_FRACTION = 0.2


def load_data():
    """scikit-learn's digits (1797 8x8 grey images, 10 classes), which ships inside the package:
    no download. Returns ((x_train, y_train), (x_val, y_val))."""
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0  # pixels are 0..16
    y = torch.tensor(digits.target, dtype=torch.long)
    perm = torch.randperm(len(y), generator=torch.Generator().manual_seed(SPLIT_SEED))
    n_val = int(len(y) * VAL_FRACTION)
    val, train = perm[:n_val], perm[n_val:]
    return (x[train], y[train]), (x[val], y[val])


def build_model(hparams):
    """An MLP: 64 pixels -> hidden_size -> 10 classes."""
    hidden = int(hparams["hidden_size"])
    return nn.Sequential(
        nn.Linear(64, hidden),
        nn.ReLU(),
        nn.Dropout(float(hparams["dropout"])),
        nn.Linear(hidden, 10),
    )


@torch.no_grad()
def evaluate(model, x, y):
    """Mean cross-entropy loss and accuracy of `model` on (x, y)."""
    model.eval()
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, y).item()
    accuracy = (logits.argmax(dim=1) == y).float().mean().item()
    model.train()
    return loss, accuracy
