"""Run as a trial by walk.py: the SDK inside a task, with no stored login and no user token,
signs in with the task's allocation token, which reads the task's own trial and nothing else."""

import determined as det
from determined.common.api import errors
from determined.experimental import client

info = det.get_cluster_info()
assert info is not None and info.trial is not None
t = client.get_trial(info.trial.trial_id)
assert t.experiment_id == info.trial.experiment_id, (t.experiment_id, info.trial.experiment_id)
assert t.hparams == info.trial.hparams, (t.hparams, info.trial.hparams)
try:
    client.list_experiments()
    raise AssertionError("the allocation token listed experiments")
except errors.UnauthenticatedException as e:
    print("as expected, beyond its own trial:", e)
with det.core.init() as core_context:
    core_context.train.report_validation_metrics(steps_completed=1, metrics={"validation_loss": 1.0})
print("in-task SDK ok")
