"""Classify scikit-learn's 8x8 digits with a small PyTorch MLP, using Determined's Core API.

On a cluster:  det experiment create adaptive.yaml .
Off-cluster:   python3 train.py   (metrics are logged, checkpoints go to ~/.local/share/determined)
"""

import json
import logging
import os

import torch
from torch import nn

import determined as det
from model import build_model, evaluate, load_data

REPORT_EVERY = 20  # batches between training-metric reports
# Batches between validations (each followed by a checkpoint). adaptive.yaml's ASHA rungs sit at
# 640/4**2 = 40, 160 and 640 batches, so every rung boundary gets a validation on time.
VALIDATE_EVERY = 40

# What `python3 train.py` uses off-cluster, where there is no trial to get hyperparameters from.
DEFAULT_HPARAMS = {"lr": 0.003, "hidden_size": 64, "dropout": 0.1, "batch_size": 32, "max_steps": 640}


def batch_indices(n, batch_size, seed, step):
    """The example indices of step `step`. Each epoch is a permutation seeded by (seed, epoch), so
    a trial that resumes from a checkpoint sees exactly the batches it would have seen."""
    per_epoch = n // batch_size  # the last partial batch of an epoch is dropped
    epoch, i = divmod(step, per_epoch)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed * 1_000_003 + epoch))
    return perm[i * batch_size : (i + 1) * batch_size]


def save(path, model, optimizer, steps_completed, trial_id, hparams):
    torch.save(model.state_dict(), os.path.join(path, "model.pt"))
    torch.save(optimizer.state_dict(), os.path.join(path, "optimizer.pt"))
    # The RNG state makes dropout after a resume identical to an uninterrupted run.
    torch.save(torch.get_rng_state(), os.path.join(path, "rng.pt"))
    # hparams let load_best.py rebuild the architecture without the experiment config.
    with open(os.path.join(path, "state.json"), "w") as f:
        json.dump({"steps_completed": steps_completed, "trial_id": trial_id, "hparams": hparams}, f)


def load(path, model, optimizer, trial_id):
    """Restore a checkpoint into model (and optimizer); return the steps already completed."""
    with open(os.path.join(path, "state.json")) as f:
        state = json.load(f)
    model.load_state_dict(torch.load(os.path.join(path, "model.pt"), map_location="cpu"))
    if state["trial_id"] != trial_id:
        # Another trial's checkpoint (a warm start): take its weights only. Its optimizer state
        # would carry its learning rate, and this trial counts its steps from zero.
        return 0
    optimizer.load_state_dict(torch.load(os.path.join(path, "optimizer.pt"), map_location="cpu"))
    torch.set_rng_state(torch.load(os.path.join(path, "rng.pt")))
    return state["steps_completed"]


def main(core_context, info):
    hparams = info.trial.hparams if info else DEFAULT_HPARAMS
    seed = info.trial.trial_seed if info else 0
    trial_id = info.trial.trial_id if info else None
    batch_size = int(hparams["batch_size"])
    # EXAMPLE_MAX_STEPS shortens the run for smoke tests; normally the const hparam decides.
    max_steps = int(os.environ.get("EXAMPLE_MAX_STEPS") or hparams["max_steps"])

    # A tiny model gains nothing from many threads, and several trials may share a few cores.
    torch.set_num_threads(1)
    torch.manual_seed(seed)  # weight init and dropout follow the trial seed
    (x_train, y_train), (x_val, y_val) = load_data()
    model = build_model(hparams)
    optimizer = torch.optim.Adam(model.parameters(), lr=float(hparams["lr"]))
    steps_completed = 0

    # After a pause, a preemption or a restart the master names the trial's latest checkpoint.
    if info and info.latest_checkpoint:
        with core_context.checkpoint.restore_path(info.latest_checkpoint) as path:
            steps_completed = load(path, model, optimizer, trial_id)
        logging.info(f"resumed from {info.latest_checkpoint} at step {steps_completed}")

    model.train()
    losses = []
    for step in range(steps_completed, max_steps):
        idx = batch_indices(len(y_train), batch_size, seed, step)
        loss = nn.functional.cross_entropy(model(x_train[idx]), y_train[idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        steps_completed = step + 1
        if steps_completed % REPORT_EVERY == 0:
            core_context.train.report_training_metrics(
                steps_completed=steps_completed, metrics={"loss": sum(losses) / len(losses)}
            )
            losses = []
        if steps_completed % VALIDATE_EVERY == 0 or steps_completed == max_steps:
            val_loss, accuracy = evaluate(model, x_val, y_val)
            # `batches` is the time metric adaptive.yaml's ASHA reads (searcher.time_metric).
            core_context.train.report_validation_metrics(
                steps_completed=steps_completed,
                metrics={"validation_loss": val_loss, "accuracy": accuracy, "batches": steps_completed},
            )
            core_context.train.report_progress(steps_completed / max_steps)
            with core_context.checkpoint.store_path({"steps_completed": steps_completed}) as (
                path,
                _uuid,
            ):
                save(path, model, optimizer, steps_completed, trial_id, hparams)
            # Checking right after a checkpoint means a pause loses no work. ASHA also stops
            # trials this way when they do not make the next rung.
            if core_context.preempt.should_preempt():
                logging.info(f"preempted at step {steps_completed}; exiting to resume later")
                return


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format=det.LOG_FORMAT)
    info = det.get_cluster_info()  # None off-cluster
    with det.core.init() as core_context:
        main(core_context, info)
