"""Train DigitsTrial with pytorch.Trainer, on a cluster or locally, with the same code.

On a cluster:  det experiment create const.yaml .
Locally:       python3 train.py --batches 80
"""

import argparse
import logging

import determined as det
from determined import pytorch
from model_def import DigitsTrial

# Locally there is no trial to take hyperparameters from.
LOCAL_HPARAMS = {"global_batch_size": 32, "lr": 0.01, "hidden_size": 64, "dropout": 0.1}


def run(max_length: pytorch.TrainUnit) -> None:
    info = det.get_cluster_info()
    hparams = LOCAL_HPARAMS if info is None else info.trial.hparams
    latest_checkpoint = None if info is None else info.latest_checkpoint
    with pytorch.init(hparams=hparams) as train_context:
        trial = DigitsTrial(train_context)
        pytorch.Trainer(trial, train_context).fit(
            max_length=max_length,
            latest_checkpoint=latest_checkpoint,
            validation_period=pytorch.Batch(40),
            reporting_period=pytorch.Batch(20),
        )


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format=det.LOG_FORMAT)
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--batches", type=int)
    group.add_argument("--epochs", type=int)
    args = parser.parse_args()
    run(pytorch.Epoch(args.epochs) if args.epochs else pytorch.Batch(args.batches or 160))
