"""Fit y = a*x + b with minibatch SGD in pure standard-library Python, using Determined's Core API.

On a cluster:  det experiment create const.yaml .
Off-cluster:   python3 train.py   (metrics are logged, checkpoints go to ~/.local/share/determined)
"""

import json
import logging
import os
import random

import determined as det

# The line every trial tries to recover, and the noise on its samples: a perfect fit has a
# validation_loss (mean squared error) of about NOISE**2 = 0.01.
TRUE_A, TRUE_B, NOISE = 2.0, -1.0, 0.1
VAL_SIZE = 100
REPORT_EVERY = 10  # batches between training-metric reports
# Batches between validations (each followed by a checkpoint). adaptive.yaml's ASHA rungs sit at
# 400/4**2 = 25, 100 and 400 batches, so every rung boundary gets a validation on time.
VALIDATE_EVERY = 25

# What `python3 train.py` uses off-cluster, where there is no trial to get hyperparameters from.
DEFAULT_HPARAMS = {"lr": 0.1, "batch_size": 16, "max_steps": 400, "train_size": 200}


def make_data(n, rng):
    xs = [rng.uniform(-1.0, 1.0) for _ in range(n)]
    return [(x, TRUE_A * x + TRUE_B + rng.gauss(0.0, NOISE)) for x in xs]


def get_batch(train, batch_size, seed, step):
    """The batch of step `step`. Each epoch is a shuffle seeded by (seed, epoch), so a trial that
    resumes from a checkpoint sees exactly the batches it would have seen without the pause."""
    per_epoch = len(train) // batch_size  # the last partial batch of an epoch is dropped
    epoch, i = divmod(step, per_epoch)
    order = list(range(len(train)))
    random.Random(seed * 1_000_003 + epoch).shuffle(order)  # recomputed per step: cheap at this size
    return [train[j] for j in order[i * batch_size : (i + 1) * batch_size]]


def mse(model, data):
    return sum((model["a"] * x + model["b"] - y) ** 2 for x, y in data) / len(data)


def sgd_step(model, batch, lr):
    """One SGD update on the mean squared error; returns the batch loss before the update."""
    errors = [(model["a"] * x + model["b"] - y, x) for x, y in batch]
    n = len(batch)
    model["a"] -= lr * 2.0 / n * sum(e * x for e, x in errors)
    model["b"] -= lr * 2.0 / n * sum(e for e, _ in errors)
    return sum(e * e for e, _ in errors) / n


def save_state(path, model, steps_completed, trial_id):
    with open(os.path.join(path, "model.json"), "w") as f:
        json.dump({"model": model, "steps_completed": steps_completed, "trial_id": trial_id}, f)


def load_state(path, trial_id):
    with open(os.path.join(path, "model.json")) as f:
        state = json.load(f)
    # A checkpoint of another trial (e.g. a warm start with searcher.source_trial_id) gives us its
    # weights, but this trial's step count starts over.
    steps = state["steps_completed"] if state["trial_id"] == trial_id else 0
    return state["model"], steps


def main(core_context, info):
    hparams = info.trial.hparams if info else DEFAULT_HPARAMS
    seed = info.trial.trial_seed if info else 0
    trial_id = info.trial.trial_id if info else None
    lr, batch_size = float(hparams["lr"]), int(hparams["batch_size"])
    train_size = int(hparams["train_size"])
    # EXAMPLE_MAX_STEPS shortens the run for smoke tests; normally the const hparam decides.
    max_steps = int(os.environ.get("EXAMPLE_MAX_STEPS") or hparams["max_steps"])

    # The documented invalid combination: a batch larger than the training set would never
    # complete. InvalidHP (inside `with det.core.init()`) ends the trial cleanly and tells the
    # searcher to try other hyperparameters instead of counting an error.
    if batch_size > train_size:
        raise det.InvalidHP(f"batch_size {batch_size} > train_size {train_size}")

    rng = random.Random(seed)  # the data, like everything random here, follows the trial seed
    train, val = make_data(train_size, rng), make_data(VAL_SIZE, rng)
    model, steps_completed = {"a": 0.0, "b": 0.0}, 0

    # After a pause, a preemption or a restart the master names the trial's latest checkpoint.
    if info and info.latest_checkpoint:
        with core_context.checkpoint.restore_path(info.latest_checkpoint) as path:
            model, steps_completed = load_state(path, trial_id)
        logging.info(f"resumed from {info.latest_checkpoint} at step {steps_completed}")

    losses = []
    for step in range(steps_completed, max_steps):
        losses.append(sgd_step(model, get_batch(train, batch_size, seed, step), lr))
        steps_completed = step + 1
        if steps_completed % REPORT_EVERY == 0:
            core_context.train.report_training_metrics(
                steps_completed=steps_completed, metrics={"loss": sum(losses) / len(losses)}
            )
            losses = []
        if steps_completed % VALIDATE_EVERY == 0 or steps_completed == max_steps:
            # `batches` is the time metric adaptive.yaml's ASHA reads (searcher.time_metric).
            core_context.train.report_validation_metrics(
                steps_completed=steps_completed,
                metrics={"validation_loss": mse(model, val), "batches": steps_completed, **model},
            )
            core_context.train.report_progress(steps_completed / max_steps)
            with core_context.checkpoint.store_path({"steps_completed": steps_completed}) as (
                path,
                _uuid,
            ):
                save_state(path, model, steps_completed, trial_id)
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
