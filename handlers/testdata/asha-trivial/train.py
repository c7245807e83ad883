"""A trivial trial for the ASHA benchmark: it validates at each rung target
(`batches` = 4, 16, 64) with a loss drawn from its hyperparameter, and stops
as soon as the searcher stops it (the preemption signal)."""

import time

import determined as det


def main(core_context):
    hp = det.get_cluster_info().trial.hparams
    for batches in (4, 16, 64):
        core_context.train.report_validation_metrics(batches, {"loss": hp["x"] / batches, "batches": batches})
        deadline = time.time() + 1.0
        while time.time() < deadline:
            if core_context.preempt.should_preempt():
                return
            time.sleep(0.02)


if __name__ == "__main__":
    with det.core.init() as core_context:
        main(core_context)
