"""``PyTorchCallback``: hooks into the Trainer's loop; override the ones you need."""

from typing import Any, Dict, List, Optional


class PyTorchCallback:
    """
    Return callbacks from ``PyTorchTrial.build_callbacks()`` as ``{name: callback}``; the name
    keys the callback's ``state_dict()`` in checkpoints. Every hook runs on every rank.
    """

    def on_trial_startup(self, first_batch_idx: int, checkpoint_uuid: Optional[str]) -> None:
        """Before anything else: the batch training starts at and the checkpoint it loads."""

    def on_trial_shutdown(self) -> None:
        """When the Trainer exits, however it exits."""

    def on_training_start(self) -> None:
        """After a checkpoint (if any) is loaded, before the first batch."""

    def on_training_epoch_start(self, epoch_idx: int) -> None:
        """Before the first batch of an epoch."""

    def on_training_epoch_end(self, epoch_idx: int) -> None:
        """After the last batch of an epoch."""

    def on_training_workload_end(
        self, avg_metrics: Dict[str, Any], batch_metrics: List[Dict[str, Any]]
    ) -> None:
        """After each training period (reporting, validation or checkpoint boundary), with its
        metrics averaged across ranks."""

    def on_validation_start(self) -> None:
        """Before a validation (the models are in eval mode)."""

    def on_validation_epoch_start(self) -> None:
        """Before the first validation batch (evaluate_batch only)."""

    def on_validation_epoch_end(self, outputs: List[Any]) -> None:
        """After the last validation batch, with this rank's per-batch metrics."""

    def on_validation_end(self, metrics: Dict[str, Any]) -> None:
        """After a validation, with its reduced metrics."""

    def on_checkpoint_load_start(self, checkpoint: Dict[str, Any]) -> None:
        """Before the state dict of a checkpoint is loaded into the models."""

    def on_checkpoint_save_start(self, checkpoint: Dict[str, Any]) -> None:
        """Before ``state_dict.pth`` is written; you may add entries to ``checkpoint``."""

    def on_checkpoint_write_end(self, checkpoint_dir: str) -> None:
        """After the checkpoint files are written into ``checkpoint_dir`` (chief only)."""

    def on_checkpoint_end(self, checkpoint_dir: str) -> None:
        """Deprecated: use on_checkpoint_write_end."""

    def on_checkpoint_upload_end(self, uuid: str) -> None:
        """After the checkpoint is stored and reported, with its UUID (every rank)."""

    def state_dict(self) -> Dict[str, Any]:
        """State to keep in checkpoints."""
        return {}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Restore what ``state_dict()`` returned."""
