"""The Python SDK's walk against a real master (run by e2e/sdk_test.go).

Environment: DET_MASTER, XDG_CONFIG_HOME (where `det user login admin` left its login),
EXAMPLE (the core-api-stdlib directory), STORAGE (the master's checkpoint storage directory),
WORK (a scratch directory). It prints one "ok <step>" line per step and exits 0 when all pass.
"""

import hashlib
import os
import pathlib
import sys

from determined.common.api import errors
from determined.experimental import client
from determined.experimental import Determined


def ok(step: str) -> None:
    print("ok", step, flush=True)


def tree(root: pathlib.Path) -> dict:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


example = pathlib.Path(os.environ["EXAMPLE"])
storage = pathlib.Path(os.environ["STORAGE"])
work = pathlib.Path(os.environ["WORK"])

# No client.login(): the login `det user login admin` stored is used.
assert client.whoami().username == "admin", client.whoami()
ok("shared login from det")

config = {
    "name": "sdk-walk",
    "entrypoint": "python3 train.py",
    "hyperparameters": {"lr": 0.1, "batch_size": 16, "max_steps": 50, "train_size": 200},
    "searcher": {"name": "single", "metric": "validation_loss", "smaller_is_better": True},
}
exp = client.create_experiment(config=config, model_dir=str(example))
assert isinstance(exp, client.Experiment) and exp.id > 0
ok(f"create_experiment {exp.id}")

state = exp.wait(interval=0.5)
assert state == client.ExperimentState.COMPLETED, state
ok("wait COMPLETED")

again = client.get_experiment(exp.id)
assert again.id == exp.id and again.name == "sdk-walk" and again.config["searcher"]["metric"] == "validation_loss"
assert again.state == client.ExperimentState.COMPLETED
assert exp.id in [e.id for e in client.list_experiments()]
assert exp.id in [e.id for e in client.list_experiments(states=[client.ExperimentState.COMPLETED])]
assert exp.id not in [e.id for e in client.list_experiments(states=[client.ExperimentState.ACTIVE])]
ok("get_experiment, list_experiments")

trials = exp.list_trials()
assert len(trials) == 1, trials
t = trials[0]
assert t.hparams["max_steps"] == 50 and t.state == client.TrialState.COMPLETED, (t.hparams, t.state)
training = list(t.iter_metrics("training"))
validation = list(t.iter_metrics("validation"))
assert training and validation, (training, validation)
steps = [m.steps_completed for m in validation]
assert steps == sorted(steps) and steps[-1] == 50, steps
assert all("validation_loss" in m.metrics for m in validation), validation[0]
assert all(m.group == "training" and "loss" in m.metrics for m in training), training[0]
assert validation[-1].trial_id == t.id and validation[-1].end_time is not None
legacy = list(t.stream_validation_metrics())
assert [m.total_batches for m in legacy] == steps
ok(f"list_trials, iter_metrics ({len(training)} training, {len(validation)} validation reports)")

best = exp.top_checkpoint()
listed = exp.list_checkpoints()
assert listed and listed[0].uuid == best.uuid
losses = [c.training.validation_metrics["avgMetrics"]["validation_loss"] for c in listed]
assert losses == sorted(losses), losses
assert best.state == client.CheckpointState.COMPLETED
assert t.top_checkpoint().uuid == best.uuid
assert best.training.trial_id == t.id and best.training.experiment_id == exp.id
assert best.training.hparams["lr"] == 0.1
ok(f"top_checkpoint {best.uuid} (validation_loss {losses[0]:.4f})")

path = best.download(str(work / "via-master"))
got = tree(pathlib.Path(path))
want = tree(storage / best.uuid)
assert want, f"nothing in {storage / best.uuid}"
assert {k: v for k, v in got.items() if k != "metadata.json"} == {k: v for k, v in want.items() if k != "metadata.json"}, (got, want)
assert set(best.resources) == set(want) - {"metadata.json"}, (best.resources, want)
assert "metadata.json" in got
direct = best.download(str(work / "direct"), mode=client.DownloadMode.DIRECT)
assert tree(pathlib.Path(direct)) == got
default = pathlib.Path(best.download())
assert default == pathlib.Path("checkpoints", best.uuid) and tree(default) == got
assert again.config["checkpoint_storage"]["type"] == "shared_fs", again.config["checkpoint_storage"]
ok(f"download ({len(got)} files, same as storage)")

# The other storage the master reads: a directory (as a mounted volume would be).
directory = pathlib.Path(os.environ["DIRECTORY_STORAGE"])
dir_config = dict(config, name="sdk-walk-directory",
                  checkpoint_storage={"type": "directory", "container_path": str(directory)})
exp3 = client.create_experiment(config=dir_config, model_dir=str(example))
assert exp3.wait(interval=0.5) == client.ExperimentState.COMPLETED
best3 = exp3.top_checkpoint()
got3 = tree(pathlib.Path(best3.download(str(work / "directory"))))
want3 = tree(directory / best3.uuid)
assert want3 and {k: v for k, v in got3.items() if k != "metadata.json"} == {
    k: v for k, v in want3.items() if k != "metadata.json"}, (got3, want3)
ok("download from directory storage")

model_name = f"sdk-walk-model-{exp.id}"
model = client.create_model(model_name, description="from the SDK", metadata={"k": "v"})
assert model.name == model_name and model.metadata == {"k": "v"}
assert model.get_version() is None
v1 = model.register_version(best.uuid)
assert v1.model_version == 1 and v1.checkpoint.uuid == best.uuid, v1
assert model.get_version().model_version == 1
assert model.get_version(1).checkpoint.uuid == best.uuid
versions = model.get_versions()
assert [v.model_version for v in versions] == [1], versions
assert model_name in [m.name for m in client.list_models()]
assert client.get_model(model_name).model_id == model.model_id
assert client.get_model(model.model_id).name == model_name
ok("create_model, register_version, get_version(s), list_models")

try:
    client.get_experiment(987654)
    raise AssertionError("a missing experiment was found")
except errors.NotFoundException as e:
    assert e.status_code == 404 and isinstance(e, errors.APIException)
try:
    client.get_model("no-such-model")
    raise AssertionError("a missing model was found")
except errors.NotFoundException:
    pass
ok("NotFoundException")

# A second experiment: pause, activate, kill, archive.
long_config = dict(config, name="sdk-walk-long")
long_config["hyperparameters"] = dict(config["hyperparameters"], max_steps=100000)
exp2 = client.create_experiment(config=long_config, model_dir=str(example))
exp2.pause()
exp2.reload()
assert exp2.state == client.ExperimentState.PAUSED, exp2.state
try:
    exp2.wait(interval=0.2)
    raise AssertionError("wait returned for a paused experiment")
except ValueError:
    pass
exp2.activate()
exp2.reload()
assert exp2.state == client.ExperimentState.ACTIVE, exp2.state
exp2.kill()
end = exp2.wait(interval=0.5)
assert end in (client.ExperimentState.CANCELED, client.ExperimentState.ERROR), end
exp2.archive()
exp2.reload()
assert exp2.archived
ok(f"pause, activate, kill ({end.name}), archive")

# Users, workspaces and projects.
assert "carol" in [u.username for u in client.list_users()]
carol = client.get_user_by_name("carol")
assert carol.admin is False and carol.active and client.get_user_by_id(carol.user_id).username == "carol"
ws = client.create_workspace(f"sdk-walk-ws-{exp.id}")
project = ws.create_project("line-fits", description="from the SDK")
exp.move_to_project(ws.name, "line-fits")
assert client.get_experiment(exp.id).project_id == project.id
assert [e.id for e in client.list_experiments(project_id=project.id)] == [exp.id]
assert ws.name in [w.name for w in client.list_workspaces()]
assert client.get_workspace(ws.name).get_project("line-fits").id == project.id
ok("users, workspaces, projects")

# Inside a task: the trial of in-task/in_task.py uses the SDK with its allocation token.
in_task = dict(config, name="sdk-walk-in-task", entrypoint="python3 in_task.py")
exp4 = client.create_experiment(config=in_task, model_dir=str(pathlib.Path(__file__).parent / "in-task"))
end4 = exp4.wait(interval=0.5)
logs = list(exp4.list_trials()[0].iter_logs())
assert end4 == client.ExperimentState.COMPLETED and "in-task SDK ok" in logs, (end4, logs)
ok("inside a task")

# Wrong password: refused, and a right one is stored for det.
try:
    Determined(os.environ["DET_MASTER"], "carol", "not-her-password")
    raise AssertionError("a wrong password was accepted")
except errors.InvalidCredentialsException as e:
    assert isinstance(e, errors.UnauthenticatedException) and isinstance(e, errors.ForbiddenException)
d = Determined(os.environ["DET_MASTER"], "carol", os.environ["CAROL_PASSWORD"])
assert d.whoami().username == "carol"
ok("wrong password refused, right one stored")
sys.exit(0)
