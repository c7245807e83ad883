"""Loading trials: ``load_trial_from_checkpoint_path`` and ``module:Class`` specs."""

import importlib
import inspect
import json
import logging
import pathlib
import re
import sys
from typing import Any, Dict, Optional, Type

import torch

from determined import core
from determined.pytorch._context import PyTorchTrialContext
from determined.pytorch._controller import _load_state_dicts
from determined.pytorch._trial import PyTorchTrial

logger = logging.getLogger("determined.pytorch")


def _load_class(spec: str, code_dir: Optional[pathlib.Path] = None) -> Type[PyTorchTrial]:
    """Import ``module:Class`` (a dotted Class is looked up attribute by attribute), with
    ``code_dir`` (default: the working directory) first on sys.path."""
    module_name, sep, qualname = spec.partition(":")
    if not sep or not module_name or not qualname:
        raise ValueError(f"invalid trial class {spec!r}: expected module:Class")
    where = str(code_dir) if code_dir is not None else str(pathlib.Path.cwd())
    if where not in sys.path:
        sys.path.insert(0, where)
    if module_name == "__main__" and not hasattr(sys.modules["__main__"], qualname.split(".")[0]):
        # Determined names a class defined in the script it ran (``python3 train.py``) by
        # ``__main__``, which is not that script when the checkpoint is loaded: look for the
        # module of the checkpoint's code that defines it.
        module_name = _defining_module(pathlib.Path(where), qualname.split(".")[0]) or module_name
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not (inspect.isclass(obj) and issubclass(obj, PyTorchTrial)):
        raise TypeError(f"{spec} is not a subclass of determined.pytorch.PyTorchTrial")
    return obj


def _defining_module(code_dir: pathlib.Path, name: str) -> Optional[str]:
    """The module of a top-level ``.py`` file in ``code_dir`` that defines class ``name``."""
    pattern = re.compile(rf"^class\s+{re.escape(name)}\b", re.MULTILINE)
    for path in sorted(code_dir.glob("*.py")):
        try:
            if pattern.search(path.read_text(errors="replace")):
                return path.stem
        except OSError:
            continue
    return None


def _instantiate(cls: Type[PyTorchTrial], context: PyTorchTrialContext,
                 kwargs: Optional[Dict[str, Any]] = None) -> PyTorchTrial:
    """``cls(context, **kwargs)``; a constructor that also takes ``hparams`` (as Determined's
    mnist_pytorch tutorial does) gets the trial's hyperparameters."""
    kwargs = dict(kwargs or {})
    params = inspect.signature(cls.__init__).parameters
    if "hparams" in params and "hparams" not in kwargs:
        try:
            kwargs["hparams"] = context.get_hparams()
        except ValueError:
            kwargs["hparams"] = None
    return cls(context, **kwargs)  # type: ignore[call-arg]


def load_trial_from_checkpoint_path(
    path: str,
    trial_class: Optional[Type[PyTorchTrial]] = None,
    trial_kwargs: Optional[Dict[str, Any]] = None,
    torch_load_kwargs: Optional[Dict[str, Any]] = None,
    **kwargs: Any,
) -> PyTorchTrial:
    """
    Rebuild the PyTorchTrial that wrote the checkpoint in directory ``path`` (downloaded, e.g.
    with ``det checkpoint download``) and load its models' weights. The class is
    ``trial_class`` if given, else the one named in ``load_data.json``, imported from the
    checkpoint's ``code/``. ``trial_kwargs`` go to its constructor; ``torch_load_kwargs`` (or
    other keyword arguments) to ``torch.load``.
    """
    ckpt_dir = pathlib.Path(path)
    load_data_path = ckpt_dir / "load_data.json"
    metadata_path = ckpt_dir / "metadata.json"
    if load_data_path.exists():
        load_data = json.loads(load_data_path.read_text())
        if load_data.get("trial_type") != "PyTorchTrial":
            logger.warning("Checkpoint does not appear to be a valid PyTorchTrial checkpoint, "
                           "continuing anyway...")
        exp_conf = load_data.get("experiment_config")
        hparams = load_data.get("hparams")
        spec = load_data.get("trial_cls_spec")
    elif metadata_path.exists():
        metadata = json.loads(metadata_path.read_text())
        exp_conf = metadata.get("experiment_config")
        hparams = metadata.get("hparams")
        spec = (exp_conf or {}).get("entrypoint")
    else:
        raise AssertionError("Checkpoint does not have either load_data.json or metadata.json")

    if trial_class is None:
        if not spec:
            raise ValueError("the checkpoint does not name its trial class; pass trial_class")
        trial_class = _load_class(spec, ckpt_dir / "code")

    core_context = core._dummy_init()
    context = PyTorchTrialContext(
        core_context=core_context,
        trial_seed=None,
        hparams=hparams,
        slots_per_trial=1,
        num_gpus=torch.cuda.device_count() if torch.cuda.is_available() else 0,
        exp_conf=exp_conf,
        aggregation_frequency=1,
        steps_completed=0,
        managed_training=False,
    )
    trial = _instantiate(trial_class, context, trial_kwargs)
    load_kwargs = dict(torch_load_kwargs or {})
    load_kwargs.update(kwargs)
    load_kwargs.setdefault("map_location", context.device)
    checkpoint = torch.load(str(ckpt_dir / "state_dict.pth"), **load_kwargs)
    if not context.models:
        raise ValueError("the trial wrapped no model with context.wrap_model()")
    keep = {k: checkpoint[k] for k in ("models_state_dict", "model_state_dict") if k in checkpoint}
    _load_state_dicts_models_only(context, keep)
    return trial


def _load_state_dicts_models_only(context: PyTorchTrialContext, ckpt: Dict[str, Any]) -> None:
    # Optimizers are left as built: loading a trial is for inference and export.
    saved_opt, saved_sched = context.optimizers, context.lr_schedulers
    context.optimizers, context.lr_schedulers = [], []
    try:
        _load_state_dicts(context, ckpt)
    finally:
        context.optimizers, context.lr_schedulers = saved_opt, saved_sched
