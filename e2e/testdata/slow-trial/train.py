"""A slow Core API trial for the master-restart test: it trains for
`max_steps` steps of `step_seconds` each, validates (with `batches`) every
`validate_every` steps, checkpoints after each validation, resumes from the
latest checkpoint, and stops when preempted."""

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
    print("slow trial starting at step", step)
    while step < hp["max_steps"]:
        time.sleep(hp["step_seconds"])
        step += 1
        if step % hp["validate_every"] == 0:
            loss = hp["x"] + 1.0 / step
            core_context.train.report_validation_metrics(step, {"loss": loss, "batches": step})
            with core_context.checkpoint.store_path({"steps_completed": step}) as (path, _):
                with open(os.path.join(path, "state.json"), "w") as f:
                    json.dump({"step": step}, f)
            if core_context.preempt.should_preempt():
                return


if __name__ == "__main__":
    # Several slots (a gang of pods on Kubernetes) still train in one
    # process: the chief's.
    distributed = None
    if len(det.get_cluster_info().slot_ids) > 1:
        distributed = det.core.DummyDistributedContext()
    with det.core.init(distributed=distributed) as core_context:
        main(core_context)
