"""Checkpoint storage in a real bucket (MinIO, fake-gcs-server or Azurite).

Not found by ``unittest discover`` (its name does not start with "test"): the Go test
TestPythonBuckets (harness/buckets_test.go) makes a fresh bucket per backend with
storage/storagetest and runs this module against it, naming it in the environment:

- RESOLUTE_BUCKET_TEST_STORAGE: the ``checkpoint_storage`` config of the bucket (JSON);
- RESOLUTE_BUCKET_TEST_WRONG_SECRET: the same with a wrong secret (JSON; absent for gcs, whose
  emulator takes no credentials: there a service account key the token endpoint refuses);
- RESOLUTE_BUCKET_TEST_MISSING: a config naming a bucket that does not exist (JSON);
- STORAGE_EMULATOR_HOST for gcs.
"""

import hashlib
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest
from typing import Any, Dict, List, Optional
from unittest import mock

import determined as det
from determined.core import _cloud, _storage, _tensorboard

from tests.helpers import ALLOC, MasterTestCase, clean_environ, trial_env
from tests.test_sharded import HARNESS, SHARD_WORKER

MiB = 1 << 20


def _config(name: str) -> Dict[str, Any]:
    raw = os.environ.get(name)
    if not raw:
        raise RuntimeError(f"{name} is not set: run this module through TestPythonBuckets")
    return dict(json.loads(raw))


def _write(root: pathlib.Path, files: Dict[str, str]) -> pathlib.Path:
    for name, text in files.items():
        p = root / name
        if name.endswith("/"):
            p.mkdir(parents=True, exist_ok=True)
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def _tree(root: pathlib.Path) -> Dict[str, str]:
    """Every file's text and every directory (as "dir/") under root."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        out[rel + "/" if p.is_dir() else rel] = "" if p.is_dir() else p.read_text()
    return out


def _sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(MiB), b""):
            h.update(block)
    return h.hexdigest()


def _big_file(path: pathlib.Path, size: int) -> None:
    with path.open("wb") as f:
        left = size
        while left:
            n = min(left, 4 * MiB)
            f.write(os.urandom(n))
            left -= n


class _CuttingProxy:
    """A TCP proxy to the store that, once, resets the connection carrying the byte at which
    ``cut_at`` bytes have gone up through it in all (come down, with ``downloads``): a transfer
    interrupted mid-file. It counts them, so a test can tell a retried part from a restarted
    file."""

    def __init__(self, upstream: str, cut_at: int, downloads: bool = False) -> None:
        host, _, port = upstream.rpartition("//")[2].split("/")[0].partition(":")
        self._upstream = (host, int(port or 80))
        self.cut_at = cut_at
        # Count (and cut) what comes down instead of what goes up.
        self.downloads = downloads
        self.sent = 0
        self.cuts = 0
        self._lock = threading.Lock()
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._upstream)
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, up: bool) -> None:
        try:
            while True:
                data = src.recv(256 * 1024)
                if not data:
                    break
                if up != self.downloads:
                    with self._lock:
                        self.sent += len(data)
                        cut = self.cuts == 0 and self.sent >= self.cut_at
                        if cut:
                            self.cuts += 1
                    if cut:
                        # shutdown first: close alone leaves the connection open while the
                        # other direction's thread is blocked reading it.
                        for s in (src, dst):
                            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                            try:
                                s.shutdown(socket.SHUT_RDWR)
                            except OSError:
                                pass
                            s.close()
                        return
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _through(config: Dict[str, Any], url: str) -> Dict[str, Any]:
    """The config with its endpoint replaced by ``url`` (gcs: STORAGE_EMULATOR_HOST is)."""
    out = dict(config)
    if out["type"] == "s3":
        out["endpoint_url"] = url
    elif out["type"] == "azure":
        parts = [p for p in out["connection_string"].split(";") if p]
        account = next(p for p in parts if p.startswith("AccountName=")).split("=", 1)[1]
        parts = [p for p in parts if not p.startswith("BlobEndpoint=")]
        out["connection_string"] = ";".join(parts + [f"BlobEndpoint={url}/{account}"]) + ";"
    return out


def _endpoint(config: Dict[str, Any]) -> str:
    if config["type"] == "s3":
        return str(config["endpoint_url"])
    if config["type"] == "azure":
        parts = dict(p.split("=", 1) for p in config["connection_string"].split(";") if p)
        return parts["BlobEndpoint"]
    return os.environ["STORAGE_EMULATOR_HOST"]


class BucketStorageTest(unittest.TestCase):
    def setUp(self) -> None:
        self.config = _config("RESOLUTE_BUCKET_TEST_STORAGE")
        self.kind = self.config["type"]
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="bucket-test-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.storage = _storage.build(dict(self.config, temp_dir=str(self.tmp / "scratch")))

    def src(self, files: Dict[str, str]) -> pathlib.Path:
        return _write(pathlib.Path(tempfile.mkdtemp(dir=self.tmp)), files)

    # Empty directories: fake-gcs-server's filesystem backend drops objects named "dir/" (real
    # GCS, MinIO and Azurite keep them), so on gcs only directories holding files come back.
    def expected(self, files: Dict[str, str]) -> Dict[str, str]:
        tree = _tree(_write(pathlib.Path(tempfile.mkdtemp(dir=self.tmp)), files))
        if self.kind == "gcs":
            return {k: v for k, v in tree.items()
                    if not k.endswith("/") or any(f.startswith(k) and not f.endswith("/")
                                                  for f in tree)}
        return tree

    FILES = {"model.pt": "weights", "empty": "", "nested/deeper/state.json": "{}",
             "nested/notes.txt": "n", "empty-dir/": "", "opt/adam.bin": "m"}

    def test_store_and_restore_keep_nested_directories_and_empty_files(self) -> None:
        src = self.src(self.FILES)
        resources = self.storage.upload(src, "ckpt-a")
        self.assertEqual(resources, _storage.list_directory(src))
        listed = self.storage.list("ckpt-a")
        self.assertEqual({k: v for k, v in listed.items() if not k.endswith("/")},
                         {k: v for k, v in resources.items() if not k.endswith("/")})
        dst = self.tmp / "down"
        self.storage.download("ckpt-a", dst)
        self.assertEqual(_tree(dst), self.expected(self.FILES))
        with self.storage.store_path("ckpt-b") as path:
            _write(path, self.FILES)
        with self.storage.restore_path("ckpt-b") as path:
            self.assertEqual(_tree(path), self.expected(self.FILES))
            restored = path
        self.assertFalse(restored.exists(), "restore_path leaves its scratch directory")
        # Keys are laid out as Determined's: <prefix>/<storage_id>/<path>.
        prefix = (self.config.get("prefix") or "").strip("/")
        self.assertEqual(self.storage.key("ckpt-a", "nested/notes.txt"),
                         "/".join(p for p in (prefix, "ckpt-a", "nested/notes.txt") if p))
        self.assertIn("ckpt-a/nested/notes.txt", self.storage.list_prefix("ckpt-a"))

    def test_a_selector_downloads_only_what_it_picks(self) -> None:
        self.storage.upload(self.src(self.FILES), "sel")
        dst = self.tmp / "sel"
        self.storage.download("sel", dst, selector=lambda n: n.startswith("nested/deeper/"))
        self.assertEqual(_tree(dst), {"nested/": "", "nested/deeper/": "",
                                      "nested/deeper/state.json": "{}"})
        with self.storage.restore_path("sel", selector=lambda n: n == "model.pt") as path:
            self.assertEqual(_tree(path), {"model.pt": "weights"})

    def test_the_sdk_downloads_directly_from_the_bucket(self) -> None:
        import types

        from determined.common.experimental import checkpoint as ckpt_mod

        self.storage.upload(self.src({"model.pt": "w", "d/x": "x"}), "sdk")
        config = dict(self.config)
        env = {}
        if self.kind == "s3":
            # As the master hands it out: masked; the keys come from this machine's environment.
            env = {"AWS_ACCESS_KEY_ID": config["access_key"],
                   "AWS_SECRET_ACCESS_KEY": config["secret_key"]}
            config.update(access_key="********", secret_key="********")
        c = ckpt_mod.Checkpoint(None, "sdk")  # type: ignore
        c.training = types.SimpleNamespace(experiment_config={"checkpoint_storage": config})
        c.metadata = {"steps_completed": 1}
        with mock.patch.dict(os.environ, env):
            path = c.download(str(self.tmp / "sdk"), mode=ckpt_mod.DownloadMode.DIRECT,
                              selector=lambda n: n != "d/x")
        self.assertEqual({k: v for k, v in _tree(pathlib.Path(path)).items() if k != "d/"},
                         {"model.pt": "w", "metadata.json": json.dumps({"steps_completed": 1},
                                                                       indent=2)})

    def test_a_missing_checkpoint_is_not_found(self) -> None:
        with self.assertRaisesRegex(FileNotFoundError, "checkpoint no-such-id not found"):
            self.storage.download("no-such-id", self.tmp / "x")

    def test_delete_with_globs_follows_python_glob_and_returns_what_remains(self) -> None:
        files = {"model.pt": "w", "sub/model.pt": "w2", "sub/keep.txt": "k", "logs/a/b.txt": "b",
                 "logs/c.txt": "c", "top.txt": "t"}
        self.storage.upload(self.src(files), "del")
        # "*.pt" stops at "/"; a directory matched goes with what it holds.
        remaining = self.storage.delete("del", ["*.pt", "logs"])
        want = {"sub/": 0, "sub/model.pt": 2, "sub/keep.txt": 1, "top.txt": 1}
        self.assertEqual(remaining, want)
        self.assertEqual(self.storage.list("del"), want)
        remaining = self.storage.delete("del", ["**/*.pt"])
        self.assertEqual(remaining, {"sub/": 0, "sub/keep.txt": 1, "top.txt": 1})
        self.assertEqual(self.storage.delete("del", ["**/*"]), {})
        self.assertEqual(self.storage.list("del"), {})
        self.storage.upload(self.src(files), "del2")
        self.assertEqual(self.storage.delete("del2"), {})
        self.assertEqual(self.storage.list("del2"), {})

    def test_a_large_file_goes_up_in_parts_and_comes_back_whole(self) -> None:
        src = pathlib.Path(tempfile.mkdtemp(dir=self.tmp))
        size = 100 * MiB + 12345
        _big_file(src / "big.bin", size)
        (src / "small").write_text("s")
        self.storage.upload(src, "large")
        self.assertEqual(self.storage.list("large")["big.bin"], size)
        key = self.storage.key("large", "big.bin")
        if self.kind == "s3":
            etag = self.storage._client.head_object(Bucket=self.storage.bucket, Key=key)["ETag"]
            self.assertRegex(etag, r"-\d+\"?$", "a multipart upload's ETag ends in -<parts>")
        elif self.kind == "azure":
            blocks = self.storage._container.get_blob_client(key).get_block_list("committed")[0]
            self.assertGreater(len(blocks), 1, "uploaded as one block")
        dst = self.tmp / "large"
        self.storage.download("large", dst)
        self.assertEqual(_sha256(dst / "big.bin"), _sha256(src / "big.bin"))

    def test_an_upload_cut_off_midway_resends_a_part_not_the_file(self) -> None:
        src = pathlib.Path(tempfile.mkdtemp(dir=self.tmp))
        size = 100 * MiB
        _big_file(src / "big.bin", size)
        proxy = _CuttingProxy(_endpoint(self.config), cut_at=40 * MiB)
        self.addCleanup(proxy.close)
        env = {"STORAGE_EMULATOR_HOST": proxy.url} if self.kind == "gcs" else {}
        with mock.patch.dict(os.environ, env):
            storage = _storage.build(_through(self.config, proxy.url))
            storage.upload(src, "cut")
        self.assertEqual(proxy.cuts, 1, "the proxy never cut the upload")
        self.assertLess(proxy.sent, size * 1.5, f"{proxy.sent} bytes went up for {size}")
        dst = self.tmp / "cut"
        self.storage.download("cut", dst)
        self.assertEqual(_sha256(dst / "big.bin"), _sha256(src / "big.bin"))

    def test_a_download_cut_off_midway_goes_on_and_comes_back_whole(self) -> None:
        src = pathlib.Path(tempfile.mkdtemp(dir=self.tmp))
        size = 100 * MiB
        _big_file(src / "big.bin", size)
        self.storage.upload(src, "cut-down")
        proxy = _CuttingProxy(_endpoint(self.config), cut_at=40 * MiB, downloads=True)
        self.addCleanup(proxy.close)
        env = {"STORAGE_EMULATOR_HOST": proxy.url} if self.kind == "gcs" else {}
        dst = self.tmp / "cut-down"
        with mock.patch.dict(os.environ, env):
            storage = _storage.build(_through(self.config, proxy.url))
            storage.download("cut-down", dst)
        self.assertEqual(proxy.cuts, 1, "the proxy never cut the download")
        self.assertLess(proxy.sent, size * 1.5, f"{proxy.sent} bytes came down for {size}")
        self.assertEqual(_sha256(dst / "big.bin"), _sha256(src / "big.bin"))

    def test_a_wrong_secret_fails_naming_the_storage_and_the_bucket(self) -> None:
        bucket = self.storage.bucket
        noun = "container" if self.kind == "azure" else "bucket"
        if self.kind == "gcs":
            with _RefusingTokenEndpoint() as key_file:
                env = {"GOOGLE_APPLICATION_CREDENTIALS": key_file}
                with mock.patch.dict(os.environ, env):
                    os.environ.pop("STORAGE_EMULATOR_HOST")
                    storage = _storage.build(self.config)
                    with self.assertRaises(_cloud.StorageError) as cm:
                        storage.upload(self.src({"f": "x"}), "wrong")
            self.assertIn("refused the credentials", str(cm.exception))
        else:
            with self.assertRaises(_cloud.StorageError) as cm:
                storage = _storage.build(_config("RESOLUTE_BUCKET_TEST_WRONG_SECRET"))
                storage.upload(self.src({"f": "x"}), "wrong")
            self.assertRegex(str(cm.exception), "secret key does not match|credential was refused")
        self.assertIn(f"{self.kind} checkpoint storage, {noun} {bucket!r}", str(cm.exception))

    def test_a_missing_bucket_fails_naming_it(self) -> None:
        missing = _config("RESOLUTE_BUCKET_TEST_MISSING")
        name = missing.get("bucket") or missing.get("container")
        if self.kind == "azure":
            # As Determined does, the container is made when the credential may.
            storage = _storage.build(missing)
            storage.upload(self.src({"f": "x"}), "made")
            self.assertEqual(set(storage.list("made")), {"f"})
            storage.delete("made")
            storage._container.delete_container()
            return
        storage = _storage.build(missing)
        with self.assertRaises(_cloud.StorageError) as cm:
            storage.check_access()
        self.assertIn(f"{self.kind} checkpoint storage, bucket {name!r}", str(cm.exception))
        self.assertIn("the bucket does not exist", str(cm.exception))
        with self.assertRaisesRegex(_cloud.StorageError, "the bucket does not exist"):
            storage.upload(self.src({"f": "x"}), "nowhere")

    def test_tensorboard_files_go_where_determined_puts_them_and_only_once(self) -> None:
        local = self.tmp / "tb"
        up = _tensorboard.TensorboardUploader(
            self.storage, local, _tensorboard.sync_path("cluster-1", 70, 110))
        _write(local, {"events.out.tfevents.1.host": "e1", "plugins/profile/x.pb": "pb"})
        names = up.sync()
        base = "cluster-1/tensorboard/experiment/70/trial/110"
        self.assertEqual(sorted(names), [f"{base}/events.out.tfevents.1.host",
                                         f"{base}/plugins/profile/x.pb"])
        self.assertEqual(up.sync(), [], "unchanged files are uploaded again")
        (local / "events.out.tfevents.1.host").write_text("e1 and more")
        self.assertEqual(up.sync(), [f"{base}/events.out.tfevents.1.host"])
        got = up.sync(mangler=lambda p, rank: pathlib.Path(f"rank{rank}") / p, rank=1)
        self.assertEqual(got, [])
        (local / "new.tfevents").write_text("n")
        got = up.sync(lambda p: p.name.endswith("tfevents"),
                      lambda p, rank: pathlib.Path(f"rank{rank}") / p, 1)
        self.assertEqual(got, [f"{base}/rank1/new.tfevents"])
        listed = self.storage.list_prefix(base)
        self.assertEqual(listed[f"{base}/events.out.tfevents.1.host"], len("e1 and more"))
        self.assertIn(f"{base}/rank1/new.tfevents", listed)


class _RefusingTokenEndpoint:
    """A Google token endpoint that checks the JWT's RS256 signature with the service account's
    public key and then refuses the grant (as for a deleted key); yields the key file."""

    def __enter__(self) -> str:
        import http.server

        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        public = key.public_key()
        seen: List[bool] = []
        self.seen = seen

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                import base64
                import urllib.parse

                from cryptography.hazmat.primitives import hashes
                from cryptography.hazmat.primitives.asymmetric import padding

                body = self.rfile.read(int(self.headers["Content-Length"]))
                jwt = urllib.parse.parse_qs(body.decode())["assertion"][0]
                head, claims, sig = jwt.split(".")
                pad = lambda s: s + "=" * (-len(s) % 4)  # noqa: E731
                public.verify(base64.urlsafe_b64decode(pad(sig)), f"{head}.{claims}".encode(),
                              padding.PKCS1v15(), hashes.SHA256())
                seen.append(True)
                self.send_response(400)
                self.end_headers()
                self.wfile.write(b'{"error": "invalid_grant", "error_description": "Invalid JWT"}')

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
        self.dir = tempfile.mkdtemp(prefix="gcs-key-")
        path = os.path.join(self.dir, "key.json")
        with open(path, "w") as f:
            json.dump({"type": "service_account", "client_email": "t@p.iam.gserviceaccount.com",
                       "private_key_id": "k1", "private_key": pem,
                       "token_uri": f"http://127.0.0.1:{self.server.server_address[1]}/token"}, f)
        return path

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self.dir, ignore_errors=True)
        assert self.seen, "the token endpoint saw no signed JWT"


class TrialInBucketTest(MasterTestCase):
    """The Core API of a trial whose experiment config names the bucket."""

    def setUp(self) -> None:
        super().setUp()
        self.config = _config("RESOLUTE_BUCKET_TEST_STORAGE")
        self.set_env(DET_EXPERIMENT_CONFIG=self._experiment_config())
        self.storage = _storage.build(self.config)

    def _experiment_config(self) -> Dict[str, Any]:
        return {"name": "t", "checkpoint_storage": self.config,
                "searcher": {"name": "single", "metric": "x", "max_length": {"batches": 10}},
                "hyperparameters": {}}

    def test_checkpoints_are_reported_and_restored_from_the_bucket(self) -> None:
        with det.core.init() as ctx:
            with ctx.checkpoint.store_path({"steps_completed": 3}) as (path, sid):
                _write(path, {"model.pt": "w", "opt/state": "s"})
            src = _write(pathlib.Path(tempfile.mkdtemp(dir=self.tmp)), {"a": "1", "d/b": "2"})
            sid2 = ctx.checkpoint.upload(src, {"steps_completed": 4})
            with ctx.checkpoint.restore_path(sid) as restored:
                self.assertEqual(_tree(restored), {"metadata.json": json.dumps(
                    {"steps_completed": 3}, indent=2), "model.pt": "w", "opt/": "", "opt/state": "s"})
            ctx.checkpoint.delete(sid2, ["d"])
        reports = [r.body for r in self.master.calls("POST", "/api/v1/checkpoints")]
        self.assertEqual([r["uuid"] for r in reports], [sid, sid2])
        self.assertEqual(reports[0]["resources"], {"model.pt": 1, "opt/": 0, "opt/state": 1})
        self.assertEqual(reports[1]["resources"], {"a": 1, "d/": 0, "d/b": 1})
        self.assertEqual(set(self.storage.list(sid2)), {"a", "metadata.json"})
        patched = [r.body for r in self.master.calls("PATCH", "/api/v1/checkpoints")]
        # What remains, metadata.json too, as Determined reports it.
        remaining = patched[-1]["checkpoints"][0]["resources"]["resources"]
        self.assertEqual(set(remaining), {"a", "metadata.json"})

    def test_auto_mode_uploads_tensorboard_files_after_each_report(self) -> None:
        with det.core.init() as ctx:
            tb = ctx.train.get_tensorboard_path()
            # A fresh private directory, never a fixed path another user could make first.
            self.assertEqual(str(tb.parent), tempfile.gettempdir())
            self.assertTrue(tb.name.startswith(f"tensorboard-{ALLOC}-0-"), tb)
            self.assertEqual(tb.stat().st_mode & 0o777, 0o700)
            (tb / "events.out.tfevents.1").write_text("step 1")
            ctx.train.report_training_metrics(1, {"loss": 1.0})
        base = "cluster-1/tensorboard/experiment/7/trial/11"
        self.assertEqual(self.storage.list_prefix(base), {f"{base}/events.out.tfevents.1": 6})
        shutil.rmtree(tb, ignore_errors=True)

    def _run_two(self, case: str) -> List[Dict[str, Any]]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        work = tempfile.mkdtemp(prefix="shard-work-", dir=self.tmp)
        procs = []
        for rank in range(2):
            env = clean_environ()
            env.update(trial_env(self.master.url, self.tmp, DET_SLOT_IDS="0,1",
                                 DET_EXPERIMENT_CONFIG=self._experiment_config()))
            env.update({"RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": str(rank),
                        "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1",
                        "DET_DIST_PORT": str(port), "PYTHONPATH": HARNESS,
                        "PYTHONDONTWRITEBYTECODE": "1", "HOME": self.tmp})
            procs.append(subprocess.Popen([sys.executable, "-B", "-c", SHARD_WORKER, case, work],
                                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=300)
            self.assertEqual(p.returncode, 0, err)
            outs.append(json.loads(out.strip().splitlines()[-1]))
        return outs

    def _files(self, sid: str) -> Dict[str, str]:
        dst = pathlib.Path(tempfile.mkdtemp(dir=self.tmp))
        self.storage.download(sid, dst)
        return {k: v for k, v in _tree(dst).items() if not k.endswith("/")}

    def test_two_workers_upload_their_shards_into_one_checkpoint(self) -> None:
        outs = self._run_two("upload")
        for o in outs:
            self.assertNotIn("error", o)
        sid = outs[0]["id"]
        self.assertEqual(outs[1]["id"], sid)
        self.assertEqual(self._files(sid), {
            "metadata.json": json.dumps({"steps_completed": 5, "framework": {"a": 1, "b": 2}},
                                        indent=2),
            "model-rank0.bin": "weights of 0", "model-rank1.bin": "weights of 1",
            "shared/part0": "p0", "shared/part1": "p1"})
        reports = [r.body for r in self.master.calls("POST", "/api/v1/checkpoints")]
        self.assertEqual(len(reports), 1)
        self.assertEqual(reports[0]["resources"], {
            "model-rank0.bin": 12, "model-rank1.bin": 12, "shared/": 0, "shared/part0": 2,
            "shared/part1": 2})
        for o in outs:
            self.assertEqual(o["downloaded"], ["model-rank0.bin", "shared/part1"])

    def test_two_workers_store_path_into_one_checkpoint(self) -> None:
        outs = self._run_two("store")
        for o in outs:
            self.assertNotIn("error", o)
        self.assertEqual(outs[0]["id"], outs[1]["id"])
        self.assertNotEqual(outs[0]["path"], outs[1]["path"], "a bucket has no shared directory")
        self.assertEqual(self._files(outs[0]["id"]), {
            "metadata.json": json.dumps({"steps_completed": 7, "shard_of": 2}, indent=2),
            "w0.txt": "rank 0", "w1.txt": "rank 1"})
        for o in outs:
            self.assertFalse(os.path.exists(o["path"]))

    def test_a_file_two_workers_would_store_stores_nothing(self) -> None:
        outs = self._run_two("file-conflict")
        for o in outs:
            self.assertEqual(o["error"]["type"], "ShardConflictError")
        self.assertEqual(self.master.calls("POST", "/api/v1/checkpoints"), [])

    def test_a_worker_failing_in_store_path_fails_both_and_leaves_nothing(self) -> None:
        outs = self._run_two("store-fails-on-one-rank")
        self.assertEqual(outs[1]["error"]["type"], "ValueError")
        self.assertIn("disk full on rank 1", outs[0]["error"]["message"])
        self.assertEqual(self.storage.list(outs[0]["id"]), {})
        self.assertEqual(self.master.calls("POST", "/api/v1/checkpoints"), [])


if __name__ == "__main__":
    unittest.main()
