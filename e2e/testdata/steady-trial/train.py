"""A steady Core API trial for the database-outage tests: it reports
training metrics at every one of `max_steps` steps (`step_seconds` each),
validates and checkpoints every `checkpoint_every` steps, and resumes from
its latest checkpoint. It prints each step once the master stored it."""

import json
import os
import time

import determined as det


def main(core_context):
    info = det.get_cluster_info()
    hp = info.trial.hparams
    step = 0
    if info.latest_checkpoint is not None:
        with core_context.checkpoint.restore_path(info.latest_checkpoint) as path:
            with open(os.path.join(path, "state.json")) as f:
                step = json.load(f)["step"]
    while step < hp["max_steps"]:
        time.sleep(hp["step_seconds"])
        step += 1
        core_context.train.report_training_metrics(step, {"loss": 1.0 / step})
        if step % hp["checkpoint_every"] == 0:
            core_context.train.report_validation_metrics(step, {"loss": 1.0 / step})
            with core_context.checkpoint.store_path({"steps_completed": step}) as (path, _):
                with open(os.path.join(path, "state.json"), "w") as f:
                    json.dump({"step": step}, f)
        print("stored step", step, flush=True)


if __name__ == "__main__":
    with det.core.init() as core_context:
        main(core_context)
