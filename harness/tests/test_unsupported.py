import importlib
import os
import subprocess
import sys
import unittest

from determined import _unsupported

from tests.helpers import clean_environ

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Determined integrations that Resolute refuses, with a word each message must name.
REFUSED = {
    "determined.keras": "Keras",
    "determined.transformers": "Hugging Face",
    "determined.estimator": "Estimator",
    "determined.pytorch.deepspeed": "DeepSpeed",
    "determined.launch.deepspeed": "DeepSpeed",
    "determined.launch.horovod": "Horovod",
}


def _forget(name: str) -> None:
    for k in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[k]


class UnsupportedIntegrationTest(unittest.TestCase):
    def test_importing_an_unsupported_integration_says_so_and_points_to_the_guide(self) -> None:
        for name, word in REFUSED.items():
            with self.subTest(name):
                if name.startswith("determined.pytorch."):
                    try:
                        importlib.import_module("determined.pytorch")
                    except _unsupported.UnsupportedIntegrationError:
                        raise
                    except ImportError as e:  # determined.pytorch needs torch
                        self.skipTest(f"determined.pytorch does not import here: {e}")
                _forget(name)
                with self.assertRaises(_unsupported.UnsupportedIntegrationError) as cm:
                    importlib.import_module(name)
                err = cm.exception
                self.assertIsInstance(err, ImportError)
                self.assertNotIsInstance(err, ModuleNotFoundError)
                self.assertEqual(err.name, name)
                msg = str(err)
                self.assertIn(f"{name} (", msg)
                self.assertIn(word, msg)
                self.assertIn("not supported by Resolute", msg)
                self.assertIn("docs/migrating-from-determined.md", msg)
                # A second import fails the same way: nothing half-imported is left behind.
                self.assertNotIn(name, sys.modules)
                with self.assertRaises(_unsupported.UnsupportedIntegrationError):
                    importlib.import_module(name)

    def test_code_catching_import_error_keeps_working(self) -> None:
        _forget("determined.keras")
        try:
            from determined import keras  # noqa: F401
            imported = True
        except ImportError:
            imported = False
        self.assertFalse(imported)

    def test_an_unsupported_launch_layer_exits_1_with_the_reason_and_no_traceback(self) -> None:
        env = clean_environ()
        env.update({"PYTHONPATH": HARNESS, "PYTHONDONTWRITEBYTECODE": "1"})
        for layer in ("deepspeed", "horovod"):
            with self.subTest(layer):
                p = subprocess.run(
                    [sys.executable, "-B", "-m", f"determined.launch.{layer}", "python3", "train.py"],
                    env=env, capture_output=True, text=True, timeout=60,
                )
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn(f"determined.launch.{layer}", p.stderr)
                self.assertIn("not supported by Resolute", p.stderr)
                self.assertIn("determined.launch.torch_distributed", p.stderr)
                self.assertNotIn("Traceback", p.stderr)

    def test_import_determined_imports_no_integration(self) -> None:
        env = clean_environ()
        env.update({"PYTHONPATH": HARNESS, "PYTHONDONTWRITEBYTECODE": "1"})
        code = ("import sys, determined, determined.core\n"
                "print(sorted(m for m in sys.modules if m.startswith('determined.')))")
        out = subprocess.run([sys.executable, "-B", "-c", code], env=env, capture_output=True,
                             text=True, timeout=60, check=True).stdout
        for name in REFUSED:
            self.assertNotIn(repr(name), out)
