"""``pytorch.LRScheduler``: a torch LR scheduler that the Trainer steps for you."""

import enum
from typing import Any, Dict

import torch


class LRScheduler:
    """
    Wraps a ``torch.optim.lr_scheduler`` (made by ``context.wrap_lr_scheduler``). ``step_mode``
    says who steps it: the Trainer after every epoch (``STEP_EVERY_EPOCH``), after every batch
    (``STEP_EVERY_BATCH``), after every optimizer step (``STEP_EVERY_OPTIMIZER_STEP``, which
    differs from batches when gradients are aggregated), or your code (``MANUAL_STEP``).
    ``frequency`` steps it every N of those units.
    """

    class StepMode(enum.Enum):
        STEP_EVERY_EPOCH = 1
        STEP_EVERY_BATCH = 2
        MANUAL_STEP = 3
        STEP_EVERY_OPTIMIZER_STEP = 4

    def __init__(
        self,
        scheduler: torch.optim.lr_scheduler._LRScheduler,
        step_mode: "LRScheduler.StepMode",
        frequency: int = 1,
    ) -> None:
        if not isinstance(step_mode, LRScheduler.StepMode):
            raise TypeError(f"step_mode must be an LRScheduler.StepMode, got {step_mode!r}")
        if frequency < 1:
            raise ValueError("frequency must be at least 1")
        self._scheduler = scheduler
        self._step_mode = step_mode
        self._frequency = frequency

    def step(self, *args: Any, **kwargs: Any) -> None:
        self._scheduler.step(*args, **kwargs)

    def get_last_lr(self) -> Any:
        return self._scheduler.get_last_lr()

    def state_dict(self) -> Dict[str, Any]:
        return self._scheduler.state_dict()

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self._scheduler.load_state_dict(state_dict)

    def __getattr__(self, name: str) -> Any:
        # Anything else (last_epoch, base_lrs, ...) is the wrapped scheduler's.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._scheduler, name)
