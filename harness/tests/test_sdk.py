"""The Python SDK (determined.experimental.client) against the fake master: how the master's
error answers become Determined's exceptions, logins shared with det through auth.json, the
login inside a task, and what create_experiment and Checkpoint.download send and write."""

import email.parser
import email.policy
import io
import json
import os
import shutil
import socket
import stat
import tarfile
import tempfile
import unittest
from typing import Any, Dict, Tuple
from unittest import mock

from determined import _info
from determined.common import context
from determined.common.api import authentication, errors
from determined.common.experimental import checkpoint as ckpt_mod
from determined.experimental import Determined, client

from tests.fake_master import FakeMaster, Request
from tests.helpers import TOKEN, clean_environ, trial_env

PASSWORDS = {"alice": "alice-pw", "bob": "bob-pw"}


class SDKTestCase(unittest.TestCase):
    """A fake master with users alice and bob, and an empty config dir (XDG_CONFIG_HOME),
    outside any task."""

    def setUp(self) -> None:
        self.master = FakeMaster()
        self.addCleanup(self.master.close)
        self.tmp = tempfile.mkdtemp(prefix="sdk-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.config_home = os.path.join(self.tmp, "config")
        self.auth_json = os.path.join(self.config_home, "resolute", "auth.json")
        self.env({})
        p = mock.patch.object(_info, "INFO_DIR", os.path.join(self.tmp, "no-info"))
        p.start()
        self.addCleanup(p.stop)
        self.tokens: Dict[str, str] = {}  # live token -> user
        self.master.route("POST", r"/api/v1/auth/login", self._login)
        self.master.route("GET", r"/api/v1/me", self._me)

    def env(self, extra: Dict[str, str]) -> None:
        env = clean_environ()
        env.update({"XDG_CONFIG_HOME": self.config_home, "HOME": self.tmp})
        env.update(extra)
        p = mock.patch.dict(os.environ, env, clear=True)
        p.start()
        self.addCleanup(p.stop)
        _info._reset_cluster_info()
        self.addCleanup(_info._reset_cluster_info)

    def _login(self, req: Request) -> Tuple[int, Any]:
        b = req.body or {}
        if b.get("isHashed"):
            return 400, {"error": {"code": "invalid", "message": "isHashed: send false"}}
        if PASSWORDS.get(b.get("username")) != b.get("password"):
            return 401, {"error": {"code": "unauthorized", "message": "invalid credentials"}}
        token = f"tok-{b['username']}-{len(self.tokens)}"
        self.tokens[token] = b["username"]
        return 200, {"token": token, "user": {"username": b["username"]}}

    def _me(self, req: Request) -> Tuple[int, Any]:
        auth = req.headers.get("authorization", "")
        user = self.tokens.get(auth[len("Bearer "):]) if auth.startswith("Bearer ") else None
        if user is None:
            return 401, {"error": {"code": "unauthorized", "message": "not signed in"}}
        return 200, {"user": {"username": user}}

    def store(self) -> Dict[str, Any]:
        with open(self.auth_json) as f:
            return json.load(f)

    def write_store(self, masters: Dict[str, Any]) -> None:
        os.makedirs(os.path.dirname(self.auth_json), mode=0o700, exist_ok=True)
        with open(self.auth_json, "w") as f:
            json.dump({"version": 1, "masters": masters}, f)

    def login_alice(self) -> Determined:
        return Determined(self.master.url, "alice", "alice-pw")


class TestErrors(SDKTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.d = self.login_alice()

    def answer(self, path: str, status: int, message: str) -> None:
        self.master.route("GET", path, lambda req: (status, {"error": {"code": "x", "message": message}}))

    def test_a_404_is_a_not_found_exception_carrying_the_masters_message(self) -> None:
        self.answer(r"/api/v1/experiments/5", 404, "experiment 5 not found")
        with self.assertRaises(errors.NotFoundException) as cm:
            self.d.get_experiment(5)
        e = cm.exception
        self.assertIsInstance(e, errors.APIException)
        self.assertIsInstance(e, errors.BadRequestException)
        self.assertEqual(e.status_code, 404)
        self.assertIn("experiment 5 not found", str(e))
        self.assertEqual(e.response_error, {"code": "x", "message": "experiment 5 not found"})

    def test_a_401_is_an_unauthenticated_exception_and_not_an_api_exception(self) -> None:
        self.answer(r"/api/v1/experiments/5", 401, "not signed in")
        with self.assertRaises(errors.UnauthenticatedException) as cm:
            self.d.get_experiment(5)
        self.assertNotIsInstance(cm.exception, errors.APIException)
        self.assertEqual(cm.exception.status_code, 401)

    def test_a_403_is_a_forbidden_exception(self) -> None:
        self.answer(r"/api/v1/models/m", 403, "only its owner may do this")
        with self.assertRaises(errors.ForbiddenException) as cm:
            self.d.get_model("m")
        self.assertIn("only its owner may do this", str(cm.exception))
        self.assertEqual(cm.exception.status_code, 403)

    def test_other_statuses_are_api_exceptions_with_their_status(self) -> None:
        for status in (400, 409, 500):
            self.master.route("POST", r"/api/v1/models",
                              lambda req, s=status: (s, {"error": {"code": "x", "message": f"said {s}"}}))
            with self.assertRaises(errors.APIException) as cm:
                self.d.create_model("m")
            self.assertNotIsInstance(cm.exception, errors.NotFoundException)
            self.assertEqual(cm.exception.status_code, status)
            self.assertIn(f"said {status}", str(cm.exception))

    def test_a_master_that_does_not_answer_is_master_not_found(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with mock.patch("determined.common.api._session.SDK_MAX_RETRIES", 0), \
                mock.patch("time.sleep"):
            with self.assertRaises(errors.MasterNotFoundException):
                Determined(f"127.0.0.1:{port}", "alice", "alice-pw")


class TestLogins(SDKTestCase):
    def test_a_wrong_password_raises_invalid_credentials_and_stores_nothing(self) -> None:
        with self.assertRaises(errors.InvalidCredentialsException) as cm:
            Determined(self.master.url, "alice", "nope")
        # Code written against Determined catches either of these.
        self.assertIsInstance(cm.exception, errors.UnauthenticatedException)
        self.assertIsInstance(cm.exception, errors.ForbiddenException)
        self.assertFalse(os.path.exists(self.auth_json))
        body = self.master.calls("POST", r"/api/v1/auth/login")[0].body
        self.assertEqual(body, {"username": "alice", "password": "nope", "isHashed": False})

    def test_a_login_is_stored_in_dets_layout_and_used_without_a_password(self) -> None:
        d = self.login_alice()
        store = self.store()
        self.assertEqual(store["version"], 1)
        entry = store["masters"][self.master.url]
        self.assertEqual(list(entry["tokens"]), ["alice"])
        self.assertNotIn("active_user", entry)  # a login does not change det's active user
        self.assertEqual(stat.S_IMODE(os.stat(self.auth_json).st_mode), 0o600)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(self.auth_json)).st_mode), 0o700)
        self.assertEqual(d.whoami().username, "alice")

        again = Determined(self.master.url, "alice")
        self.assertEqual(len(self.master.calls("POST", r"/api/v1/auth/login")), 1)
        self.assertEqual(again.whoami().username, "alice")

    def test_the_active_user_det_stored_is_used_and_the_master_address_is_canonical(self) -> None:
        self.tokens["tok-bob"] = "bob"
        host = self.master.url[len("http://"):]
        self.write_store({self.master.url: {"active_user": "bob", "tokens": {"bob": "tok-bob"}}})
        d = Determined(host + "/")  # as a person types it; det keys it http://host:port
        self.assertEqual(d.whoami().username, "bob")
        self.assertEqual(self.master.calls("POST", r"/api/v1/auth/login"), [])
        self.assertEqual(self.master.calls("GET", r"/api/v1/me")[-1].headers["authorization"],
                         "Bearer tok-bob")

    def test_the_module_client_uses_dets_login_without_login_being_called(self) -> None:
        self.tokens["tok-bob"] = "bob"
        self.write_store({self.master.url: {"active_user": "bob", "tokens": {"bob": "tok-bob"}}})
        self.env({"DET_MASTER": self.master.url})
        with mock.patch.object(client, "_determined", None):
            self.assertEqual(client.whoami().username, "bob")
            with self.assertRaises(ValueError):
                client.login(self.master.url, "alice", "alice-pw")  # only before first use

    def test_a_stored_token_the_master_refuses_is_dropped_and_the_password_used(self) -> None:
        self.write_store({self.master.url: {"tokens": {"alice": "expired"}}})
        d = Determined(self.master.url, "alice", "alice-pw")
        self.assertEqual(d.whoami().username, "alice")
        self.assertNotEqual(self.store()["masters"][self.master.url]["tokens"]["alice"], "expired")

    def test_det_user_and_det_pass_log_in_as_that_user(self) -> None:
        self.env({"DET_USER": "bob", "DET_PASS": "bob-pw"})
        self.assertEqual(Determined(self.master.url).whoami().username, "bob")

    def test_without_any_login_the_error_says_to_log_in(self) -> None:
        with self.assertRaises(errors.UnauthenticatedException) as cm:
            Determined(self.master.url)  # determined with the empty password: refused
        self.assertNotIsInstance(cm.exception, errors.InvalidCredentialsException)
        self.assertIn("det user login", str(cm.exception))

    def test_logout_ends_the_session_and_forgets_it(self) -> None:
        self.master.route("POST", r"/api/v1/auth/logout", lambda req: (200, {}))
        self.login_alice().logout()
        self.assertNotIn(self.master.url, self.store()["masters"])
        self.assertEqual(len(self.master.calls("POST", r"/api/v1/auth/logout")), 1)

    def test_a_damaged_store_says_so(self) -> None:
        os.makedirs(os.path.dirname(self.auth_json))
        with open(self.auth_json, "w") as f:
            f.write("{not json")
        with self.assertRaises(errors.CorruptTokenCacheException):
            Determined(self.master.url, "alice", "alice-pw")


class TestInsideATask(SDKTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.master.route("GET", r"/api/v1/trials/11", lambda req: (
            200, {"trial": {"id": 11, "experimentId": 7, "state": "ACTIVE", "hparams": {"a": 1}},
                  "latestMetrics": []}))

    def test_a_task_without_a_user_token_reads_with_its_allocation_token(self) -> None:
        self.env(trial_env(self.master.url, self.tmp))
        t = Determined().get_trial(11)
        self.assertEqual((t.experiment_id, t.hparams, t.state), (7, {"a": 1}, client.TrialState.ACTIVE))
        req = self.master.calls("GET", r"/api/v1/trials/11")[-1]
        self.assertEqual(req.headers["grpc-metadata-x-allocation-token"], f"Bearer {TOKEN}")
        self.assertNotIn("authorization", req.headers)
        self.assertEqual(self.master.calls("POST", r"/api/v1/auth/login"), [])

    def test_a_det_user_login_inside_the_task_wins_over_the_tasks_tokens(self) -> None:
        self.tokens["tok-bob"] = "bob"
        self.write_store({self.master.url: {"active_user": "bob", "tokens": {"bob": "tok-bob"}}})
        self.env(trial_env(self.master.url, self.tmp, DET_USER_TOKEN="user-tok"))
        self.assertEqual(Determined().whoami().username, "bob")

    def test_a_task_with_det_user_token_acts_as_its_user(self) -> None:
        self.tokens["user-tok"] = "alice"
        self.env(trial_env(self.master.url, self.tmp, DET_USER_TOKEN="user-tok"))
        self.assertEqual(Determined().whoami().username, "alice")


class TestExperimentsAndCheckpoints(SDKTestCase):
    def test_create_experiment_uploads_the_config_and_the_model_dir_less_detignore(self) -> None:
        model_dir = os.path.join(self.tmp, "model")
        os.makedirs(os.path.join(model_dir, "data"))
        os.makedirs(os.path.join(model_dir, "__pycache__"))
        for name, text in {"train.py": "print(1)", "data/big.bin": "x" * 10, "notes.md": "n",
                           "__pycache__/train.pyc": "c", ".detignore": "data/\n*.md\n"}.items():
            with open(os.path.join(model_dir, name), "w") as f:
                f.write(text)
        extra = os.path.join(self.tmp, "helpers.py")
        with open(extra, "w") as f:
            f.write("H = 1")
        self.master.route("POST", r"/api/v1/experiments", lambda req: (
            200, {"experiment": {"id": 3, "state": "ACTIVE", "name": "e", "config": {}}}))
        exp = self.login_alice().create_experiment({"name": "e", "entrypoint": "python3 train.py"},
                                                   model_dir, includes=[extra])
        self.assertEqual((exp.id, exp.state), (3, client.ExperimentState.ACTIVE))
        req = self.master.calls("POST", r"/api/v1/experiments")[0]
        msg = email.parser.BytesParser(policy=email.policy.default).parsebytes(
            b"Content-Type: " + req.headers["content-type"].encode() + b"\r\n\r\n" + req.body)
        parts = {p.get_param("name", header="content-disposition"): p.get_payload(decode=True)
                 for p in msg.iter_parts()}
        self.assertEqual(json.loads(parts["config"]), {"name": "e", "entrypoint": "python3 train.py"})
        with tarfile.open(fileobj=io.BytesIO(parts["context"]), mode="r:gz") as tar:
            names = sorted(tar.getnames())
        self.assertEqual(names, [".detignore", "helpers.py", "train.py"])
        self.assertIn("Bearer tok-alice", req.headers["authorization"])

    def test_list_checkpoints_puts_the_best_by_the_searcher_metric_first(self) -> None:
        def cp(uuid: str, loss: Any, steps: int) -> Dict[str, Any]:
            return {"uuid": uuid, "state": "COMPLETED", "trialId": 1, "experimentId": 2,
                    "stepsCompleted": steps, "resources": {"m": 1},
                    "validationMetrics": {"avg_metrics": {"loss": loss}} if loss is not None else None}

        self.master.route("GET", r"/api/v1/experiments/2", lambda req: (200, {"experiment": {
            "id": 2, "state": "COMPLETED",
            "config": {"searcher": {"metric": "loss", "smaller_is_better": True}}}}))
        self.master.route("GET", r"/api/v1/experiments/2/checkpoints", lambda req: (200, {"checkpoints": [
            cp("a", 0.5, 10), cp("b", 0.2, 20), cp("c", None, 30),
            dict(cp("d", 0.1, 40), state="DELETED")]}))
        exp = self.login_alice().get_experiment(2)
        self.assertEqual([c.uuid for c in exp.list_checkpoints()], ["b", "a", "c"])
        self.assertEqual(exp.top_checkpoint().uuid, "b")
        self.assertEqual(exp.top_checkpoint("loss").uuid, "b")  # the config's smaller_is_better
        self.assertEqual(exp.top_checkpoint("loss", smaller_is_better=False).uuid, "a")
        with self.assertRaises(AssertionError):
            exp.list_checkpoints(sort_by="loss")  # without order_by, as Determined refuses
        self.assertEqual([c.uuid for c in exp.list_checkpoints(
            client.CheckpointSortBy.BATCH_NUMBER, client.OrderBy.DESC)], ["c", "b", "a"])
        self.assertEqual(exp.list_checkpoints()[0].training.searcher_metric, 0.2)

    def test_download_refuses_an_archive_entry_outside_the_directory(self) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo("../escape.txt")
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
        buf.seek(0)
        dst = os.path.join(self.tmp, "dst")
        with tarfile.open(fileobj=buf, mode="r|") as tar:
            with self.assertRaises(errors.BadResponseException):
                for member in tar:
                    ckpt_mod._extract(tar, member, __import__("pathlib").Path(dst), None)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "escape.txt")))

    def test_download_writes_files_and_directories_but_never_links(self) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for name, data in (("sub/w.bin", b"abc"), ("model.json", b"{}")):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            link = tarfile.TarInfo("evil")
            link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
            tar.addfile(link)
        buf.seek(0)
        import pathlib

        dst = pathlib.Path(self.tmp, "dst")
        with tarfile.open(fileobj=buf, mode="r|") as tar:
            for member in tar:
                ckpt_mod._extract(tar, member, dst, lambda p: p != "model.json")
        self.assertEqual(sorted(str(p.relative_to(dst)) for p in dst.rglob("*")), ["sub", "sub/w.bin"])


class TestDetignore(unittest.TestCase):
    def test_patterns_match_as_dets(self) -> None:
        ig = context.Ignore("# c\n*.log\n/build\ndata/\n!keep.log\n**/tmp/**\n")
        cases = {("a.log", False): True, ("x/a.log", False): True, ("keep.log", False): False,
                 ("build", True): True, ("x/build", True): False, ("data", True): True,
                 ("data", False): False, ("a/tmp/b", False): True, ("train.py", False): False}
        for (rel, is_dir), want in cases.items():
            self.assertEqual(ig.match(rel, is_dir), want, rel)


class TestEnums(unittest.TestCase):
    def test_states_are_spelled_as_determineds(self) -> None:
        self.assertEqual(client.ExperimentState.COMPLETED.value, "STATE_COMPLETED")
        self.assertEqual(client.CheckpointState.COMPLETED.value, "STATE_COMPLETED")
        self.assertIs(client.OrderBy.ASC, client.OrderBy.ASCENDING)
        self.assertEqual(authentication.DEFAULT_DETERMINED_USER, "determined")


if __name__ == "__main__":
    unittest.main()
