"""The pure parts of bucket storage (the real buckets are in bucket_suite.py): prefixes, globs,
the key of a service account, and that importing determined loads no cloud SDK."""

import os
import subprocess
import sys
import tempfile
import unittest

from determined.core import _cloud, _gcs_auth

from tests.helpers import clean_environ


class SharedFSTest(unittest.TestCase):
    def test_shared_fs_checkpoints_go_under_host_path_and_storage_path(self) -> None:
        from determined.core import _storage
        with tempfile.TemporaryDirectory() as host:
            for storage_path, want in (("", host), ("ckpt", os.path.join(host, "ckpt")),
                                       (os.path.join(host, "abs"), os.path.join(host, "abs"))):
                conf = {"type": "shared_fs", "host_path": host, "storage_path": storage_path}
                self.assertEqual(str(_storage._shared_fs_base(conf)), want)
            with self.assertRaisesRegex(ValueError, "must be relative or inside host_path"):
                _storage._shared_fs_base({"type": "shared_fs", "host_path": host, "storage_path": "/elsewhere"})


class PrefixTest(unittest.TestCase):
    def test_prefixes_lose_their_slashes_and_refuse_dot_dot(self) -> None:
        cases = {None: "", "": "", "/a/b/": "a/b", "a//b": "a/b", "./a": "a", ".": ""}
        for given, want in cases.items():
            with self.subTest(given=given):
                self.assertEqual(_cloud.normalize_prefix(given), want)
        for bad in ("..", "../a", "a/..", "a/../b"):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                _cloud.normalize_prefix(bad)


class GlobTest(unittest.TestCase):
    RESOURCES = {"model.pt": 1, "sub/": 0, "sub/model.pt": 2, "sub/keep.txt": 3,
                 "logs/a/b.txt": 4, ".hidden": 5}

    def test_globs_follow_python_glob(self) -> None:
        cases = {
            "a star stops at a slash": (["*.pt"], {"sub/", "sub/model.pt", "sub/keep.txt",
                                                   "logs/", "logs/a/", "logs/a/b.txt",
                                                   ".hidden"}),
            "two stars span directories": (["**/*.pt"], {"sub/", "sub/keep.txt", "logs/",
                                                         "logs/a/", "logs/a/b.txt", ".hidden"}),
            "a matched directory goes whole": (["logs"], {"model.pt", "sub/", "sub/model.pt",
                                                          "sub/keep.txt", ".hidden"}),
            "a star skips hidden files": (["*"], {".hidden"}),
            "nothing matched keeps everything": (["*.bin"], set(_cloud.with_directories(
                self.RESOURCES))),
        }
        for name, (globs, want) in cases.items():
            with self.subTest(name):
                self.assertEqual(set(_cloud.remaining_after_globs(self.RESOURCES, globs)), want)

    def test_directories_are_implied_by_their_files(self) -> None:
        self.assertEqual(_cloud.with_directories({"a/b/c": 1}),
                         {"a/": 0, "a/b/": 0, "a/b/c": 1})


class ServiceAccountKeyTest(unittest.TestCase):
    def test_the_rsa_key_inside_a_pkcs8_key_is_found(self) -> None:
        try:
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import rsa
        except ImportError:
            self.skipTest("the cryptography module makes the key to check against")
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pkcs8 = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption())
        pkcs1 = key.private_bytes(serialization.Encoding.DER,
                                  serialization.PrivateFormat.TraditionalOpenSSL,
                                  serialization.NoEncryption())
        self.assertEqual(_gcs_auth._pkcs1_from_pkcs8(pkcs8), pkcs1)


class ImportTest(unittest.TestCase):
    def test_importing_determined_loads_no_cloud_sdk(self) -> None:
        code = ("import sys, determined, determined.core, determined.experimental; "
                "from determined.core import _storage, _s3, _azure, _gcs; "
                "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                "('boto3', 'botocore', 'azure', 'google', 'cryptography')))")
        env = clean_environ()
        env["PYTHONPATH"] = "."
        out = subprocess.run([sys.executable, "-B", "-c", code], env=env, capture_output=True,
                             text=True, check=True, timeout=60).stdout
        self.assertEqual(out.strip(), "[]")


if __name__ == "__main__":
    unittest.main()
