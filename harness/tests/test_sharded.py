import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List

from determined.core import _sharded

from tests.helpers import MasterTestCase, clean_environ, trial_env

HARNESS = str(pathlib.Path(__file__).resolve().parent.parent)

# One worker of a two-process trial (torchrun's environment, the harness's own rendezvous between
# ranks): it runs one case of sharded checkpointing against the fake master and prints what it
# saw as JSON.
SHARD_WORKER = r"""
import json, os, pathlib, sys
import determined as det

case, work = sys.argv[1], pathlib.Path(sys.argv[2])
d = det.core.DistributedContext.from_torch_distributed()
r = d.rank
out = {"rank": r}


def write(root, files):
    for name, text in files.items():
        p = pathlib.Path(root) / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


try:
    with det.core.init(distributed=d) as ctx:
        cp = ctx.checkpoint
        mine = work / ("rank%d" % r)
        if case == "upload":
            write(mine, {"model-rank%d.bin" % r: "weights of %d" % r, "shared/part%d" % r: "p%d" % r})
            md = {"steps_completed": 5, "framework": {"a": 1}} if r == 0 else {"framework": {"b": 2}}
            out["id"] = cp.upload(mine, md, shard=True)
            picks = {0: "model-rank0.bin", 1: "shared/part1"}
            dst = work / "downloaded"
            cp.download(out["id"], dst, selector=lambda n, want=picks[r]: n == want)
            out["downloaded"] = sorted(str(p.relative_to(dst)) for p in dst.rglob("*") if p.is_file())
        elif case == "upload-one-has-nothing":
            src = write(mine, {"model.bin": "all of it"}) if r == 0 else None
            out["id"] = cp.upload(src, {"steps_completed": 3}, shard=True)
        elif case == "same-directory":
            shared = work / "one-dir"
            if r == 0:
                write(shared, {"model.bin": "x"})
            d.allgather(None)
            out["id"] = cp.upload(shared, {"steps_completed": 1}, shard=True)
        elif case == "file-conflict":
            write(mine, {"model.bin": "rank %d" % r, "ok-%d" % r: ""})
            out["id"] = cp.upload(mine, {"steps_completed": 1}, shard=True)
        elif case == "metadata-conflict":
            write(mine, {"f%d" % r: ""})
            out["id"] = cp.upload(mine, {"steps_completed": 1, "lr": 0.1 * (r + 1)}, shard=True)
        elif case == "store":
            md = {"steps_completed": 7} if r == 0 else {"shard_of": 2}
            with cp.store_path(md, shard=True) as (path, sid):
                out["path"], out["id"] = str(path), sid
                (path / ("w%d.txt" % r)).write_text("rank %d" % r)
        elif case == "store-fails-on-one-rank":
            with cp.store_path({"steps_completed": 1}, shard=True) as (path, sid):
                out["id"] = sid
                if r == 1:
                    raise ValueError("disk full on rank 1")
                (path / "w0.txt").write_text("rank 0")
        elif case == "missing-directory":
            src = write(mine, {"f%d" % r: ""}) if r == 0 else work / "no-such-dir"
            out["id"] = cp.upload(src, {"steps_completed": 1}, shard=True)
        elif case == "no-steps-completed":
            write(mine, {"f%d" % r: ""})
            out["id"] = cp.upload(mine, {"epoch": 1} if r == 0 else {}, shard=True)
except Exception as e:
    out["error"] = {"type": type(e).__name__, "message": str(e)}
print(json.dumps(out))
"""


class ShardedCheckpointTest(MasterTestCase):
    def _run(self, case: str) -> List[Dict[str, Any]]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        work = tempfile.mkdtemp(prefix="shard-work-", dir=self.tmp)
        procs = []
        for rank in range(2):
            env = clean_environ()
            env.update(trial_env(self.master.url, self.tmp, DET_SLOT_IDS="0,1"))
            env.update({"RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": str(rank),
                        "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1",
                        "DET_DIST_PORT": str(port), "PYTHONPATH": HARNESS,
                        "PYTHONDONTWRITEBYTECODE": "1", "HOME": self.tmp})
            procs.append(subprocess.Popen([sys.executable, "-B", "-c", SHARD_WORKER, case, work],
                                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
            outs.append(json.loads(out.strip().splitlines()[-1]))
        return outs

    def _storage(self) -> pathlib.Path:
        return pathlib.Path(self.tmp) / "checkpoints"

    def _reports(self) -> List[Dict[str, Any]]:
        return [r.body for r in self.master.calls("POST", "/api/v1/checkpoints")]

    def _files(self, storage_id: str) -> Dict[str, str]:
        root = self._storage() / storage_id
        return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*"))
                if p.is_file()}

    def _no_staging_left(self) -> None:
        root = self._storage()
        left = [p.name for p in root.iterdir() if p.name.startswith(".")] if root.exists() else []
        self.assertEqual(left, [])

    def test_every_rank_uploads_its_files_into_one_checkpoint_reported_once(self) -> None:
        outs = self._run("upload")
        for o in outs:
            self.assertNotIn("error", o)
        sid = outs[0]["id"]
        self.assertEqual(outs[1]["id"], sid)
        self.assertEqual(self._files(sid), {
            "metadata.json": json.dumps(
                {"steps_completed": 5, "framework": {"a": 1, "b": 2}}, indent=2),
            "model-rank0.bin": "weights of 0", "model-rank1.bin": "weights of 1",
            "shared/part0": "p0", "shared/part1": "p1",
        })
        reports = self._reports()
        self.assertEqual(len(reports), 1)
        self.assertEqual(reports[0]["uuid"], sid)
        self.assertEqual(reports[0]["metadata"],
                         {"steps_completed": 5, "framework": {"a": 1, "b": 2}})
        self.assertEqual(reports[0]["resources"], {
            "model-rank0.bin": 12, "model-rank1.bin": 12, "shared/": 0, "shared/part0": 2,
            "shared/part1": 2})
        # Workers of one node share one download: what any of their selectors picked.
        for o in outs:
            self.assertEqual(o["downloaded"], ["model-rank0.bin", "shared/part1"])
        self._no_staging_left()

    def test_a_rank_with_nothing_to_upload_passes_none(self) -> None:
        outs = self._run("upload-one-has-nothing")
        self.assertEqual(outs[0]["id"], outs[1]["id"])
        self.assertEqual(set(self._files(outs[0]["id"])), {"model.bin", "metadata.json"})
        self.assertEqual(len(self._reports()), 1)

    def test_ranks_passing_one_directory_upload_it_once(self) -> None:
        outs = self._run("same-directory")
        for o in outs:
            self.assertNotIn("error", o)
        self.assertEqual(set(self._files(outs[0]["id"])), {"model.bin", "metadata.json"})

    def test_a_file_two_ranks_would_upload_raises_on_every_rank_and_stores_nothing(self) -> None:
        outs = self._run("file-conflict")
        for o in outs:
            self.assertEqual(o["error"]["type"], "ShardConflictError", o)
            self.assertIn("model.bin from ranks [0, 1]", o["error"]["message"])
            self.assertNotIn("ok-", o["error"]["message"])
        self.assertEqual(self._reports(), [])
        self.assertFalse(self._storage().exists() and any(self._storage().iterdir()))

    def test_a_metadata_key_given_two_values_raises_on_every_rank(self) -> None:
        outs = self._run("metadata-conflict")
        for o in outs:
            self.assertEqual(o["error"]["type"], "ShardConflictError", o)
            self.assertIn("/lr from ranks [0, 1]", o["error"]["message"])
        self.assertEqual(self._reports(), [])
        self._no_staging_left()

    def test_the_merged_metadata_must_say_steps_completed(self) -> None:
        outs = self._run("no-steps-completed")
        for o in outs:
            self.assertEqual(o["error"]["type"], "ValueError", o)
            self.assertIn("steps_completed", o["error"]["message"])
        self.assertEqual(self._reports(), [])
        self._no_staging_left()

    def test_a_rank_whose_directory_is_missing_fails_every_rank(self) -> None:
        outs = self._run("missing-directory")
        for o in outs:
            self.assertEqual(o["error"]["type"], "RuntimeError", o)
            self.assertIn("rank 1: FileNotFoundError", o["error"]["message"])
        self.assertEqual(self._reports(), [])

    def test_store_path_gives_every_rank_one_directory(self) -> None:
        outs = self._run("store")
        for o in outs:
            self.assertNotIn("error", o)
        self.assertEqual(outs[0]["path"], outs[1]["path"])
        sid = outs[0]["id"]
        self.assertEqual(outs[1]["id"], sid)
        files = self._files(sid)
        self.assertEqual(files["w0.txt"], "rank 0")
        self.assertEqual(files["w1.txt"], "rank 1")
        reports = self._reports()
        self.assertEqual(len(reports), 1)
        self.assertEqual(reports[0]["metadata"], {"steps_completed": 7, "shard_of": 2})
        self.assertEqual(reports[0]["resources"], {"w0.txt": 6, "w1.txt": 6})
        self._no_staging_left()

    def test_a_rank_failing_inside_store_path_fails_the_others_instead_of_hanging(self) -> None:
        outs = self._run("store-fails-on-one-rank")
        self.assertEqual(outs[1]["error"], {"type": "ValueError", "message": "disk full on rank 1"})
        self.assertEqual(outs[0]["error"]["type"], "RuntimeError")
        self.assertIn("rank 1: ValueError: disk full on rank 1", outs[0]["error"]["message"])
        self.assertEqual(self._reports(), [])
        self._no_staging_left()


class MergeTest(unittest.TestCase):
    def test_merge_metadata(self) -> None:
        cases = {
            "different keys are united": ([{"a": 1}, {"b": 2}], {"a": 1, "b": 2}, {}),
            "one value given twice is kept": ([{"a": 1}, {"a": 1}], {"a": 1}, {}),
            "dictionaries merge key by key": ([{"a": {"c": 1}}, {"a": {"d": 1}}],
                                              {"a": {"c": 1, "d": 1}}, {}),
            "two values of a key conflict": ([{"a": 1}, {"a": 2}], None, {"/a": [0, 1]}),
            "a dictionary and a value conflict": ([{"a": {"c": 1}}, {"a": 1}], None,
                                                  {"/a": [0, 1]}),
            "nested conflicts are named by path": ([{"a": {"c": 1}}, {}, {"a": {"c": 3}}], None,
                                                   {"/a/c": [0, 2]}),
        }
        for name, (given, want, conflicts) in cases.items():
            with self.subTest(name):
                merged, got = _sharded.merge_metadata(given)
                self.assertEqual(got, conflicts)
                if want is not None:
                    self.assertEqual(merged, want)

    def test_merge_resources(self) -> None:
        merged, conflicts = _sharded.merge_resources(
            [{"d/": 0, "d/a": 1, "x": 3}, {"d/": 0, "d/b": 2}, {"x/": 0}])
        self.assertEqual(merged, {"d/": 0, "d/a": 1, "d/b": 2, "x": 3, "x/": 0})
        self.assertEqual(conflicts, {"x": [0, 2]})
