import json
import os
import shutil
import tempfile
import unittest
from typing import Any, Dict
from unittest import mock

import determined as det
from determined import _info

from tests.fake_master import FakeMaster

TOKEN = "alloc-token-123"
ALLOC = "7.1.abc"


def trial_env(master_url: str, storage_dir: str, **overrides: Any) -> Dict[str, str]:
    config = {
        "name": "test",
        "data": {"url": "https://example.com/data"},
        "checkpoint_storage": {"type": "shared_fs", "host_path": storage_dir,
                               "storage_path": "checkpoints"},
        "searcher": {"name": "single", "metric": "x", "max_length": {"batches": 100}},
        "hyperparameters": {"increment_by": 1},
    }
    env = {
        "DET_MASTER": master_url,
        "DET_CLUSTER_ID": "cluster-1",
        "DET_AGENT_ID": "agent-1",
        "DET_SLOT_IDS": "[0]",
        "DET_TASK_ID": "7.1",
        "DET_ALLOCATION_ID": ALLOC,
        "DET_SESSION_TOKEN": TOKEN,
        "DET_TASK_TYPE": "TRIAL",
        "DET_USER": "alice",
        "DET_EXPERIMENT_ID": "7",
        "DET_TRIAL_ID": "11",
        "DET_TRIAL_RUN_ID": "2",
        "DET_TRIAL_SEED": "42",
        "DET_HPARAMS": json.dumps({"increment_by": 1}),
        "DET_EXPERIMENT_CONFIG": json.dumps(config),
        "DET_STEPS_COMPLETED": "0",
    }
    for k, v in overrides.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v if isinstance(v, str) else json.dumps(v)
    return env


def clean_environ() -> Dict[str, str]:
    """os.environ without any DET_* or torchrun variables."""
    drop = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK",
            "GROUP_WORLD_SIZE")
    return {k: v for k, v in os.environ.items() if not k.startswith("DET_") and k not in drop}


class MasterTestCase(unittest.TestCase):
    """Starts a fake master and a temp storage dir, and points the environment at them."""

    env_overrides: Dict[str, Any] = {}

    def setUp(self) -> None:
        self.master = FakeMaster()
        self.addCleanup(self.master.close)
        self.tmp = tempfile.mkdtemp(prefix="harness-test-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.storage = os.path.join(self.tmp, "checkpoints")
        self.set_env(**self.env_overrides)
        # Keep a real /run/determined/info from leaking in.
        p = mock.patch.object(_info, "INFO_DIR", os.path.join(self.tmp, "no-info"))
        p.start()
        self.addCleanup(p.stop)

    def set_env(self, **overrides: Any) -> None:
        env = clean_environ()
        env.update(trial_env(self.master.url, self.tmp, **overrides))
        p = mock.patch.dict(os.environ, env, clear=True)
        p.start()
        self.addCleanup(p.stop)
        _info._reset_cluster_info()
        self.addCleanup(_info._reset_cluster_info)

    def assert_token(self, req: Any) -> None:
        self.assertEqual(req.headers.get("grpc-metadata-x-allocation-token"), f"Bearer {TOKEN}")
        self.assertNotIn("authorization", req.headers)


__all__ = ["det", "MasterTestCase", "trial_env", "clean_environ", "TOKEN", "ALLOC"]
