"""
``python3 -m determined.exec.harness [--trial] module:Class``

Runs a trial class named by the experiment's entrypoint in the form Determined used before 0.38
(``entrypoint: model_def:MNistTrial``): imports it from the working directory (the model
definition) and trains it with ``pytorch.Trainer`` for the config's ``searcher.max_length``,
resuming from the trial's latest checkpoint. The master runs this for such entrypoints, under
``determined.launch.torch_distributed`` when the trial has several slots.
"""

import logging
import sys
from typing import List

import determined as det


def main(argv: List[str]) -> int:
    args = [a for a in argv if a != "--trial"]
    if len(args) != 1 or ":" not in args[0]:
        print("usage: python3 -m determined.exec.harness [--trial] module:Class", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format=det.LOG_FORMAT)
    from determined import pytorch
    from determined.pytorch import _load

    trial_cls = _load._load_class(args[0])
    info = det.get_cluster_info()
    with pytorch.init() as context:
        trial = _load._instantiate(trial_cls, context)
        pytorch.Trainer(trial, context).fit(
            latest_checkpoint=info.latest_checkpoint if info is not None else None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
