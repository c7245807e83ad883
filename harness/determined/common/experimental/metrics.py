"""Metric reports of trials, as Determined's SDK returns them."""

import dataclasses
import datetime
from typing import Any, Dict, List, Optional

from determined.common.experimental import _util


@dataclasses.dataclass
class TrialMetrics:
    """One report of a metric group by a trial: ``metrics`` holds the averaged values,
    ``batch_metrics`` the per-batch ones when the trial sent them."""

    trial_id: int
    trial_run_id: int
    total_batches: int
    end_time: Optional[datetime.datetime]
    metrics: Dict[str, Any]
    group: str
    batch_metrics: Optional[List[Dict[str, Any]]] = None

    @property
    def steps_completed(self) -> int:
        """Deprecated in Determined: ``total_batches``."""
        return self.total_batches

    @steps_completed.setter
    def steps_completed(self, value: int) -> None:
        self.total_batches = value

    @classmethod
    def _from_json(cls, report: Dict[str, Any], group: Optional[str] = None) -> "TrialMetrics":
        raw = report.get("metrics") or {}
        batch = raw.get("batch_metrics", raw.get("batchMetrics")) if isinstance(raw, dict) else None
        return cls(
            trial_id=int(report.get("trialId") or 0),
            trial_run_id=int(report.get("trialRunId") or 0),
            total_batches=int(report.get("stepsCompleted", report.get("totalBatches")) or 0),
            end_time=_util.parse_time(report.get("reportTime") or report.get("endTime")),
            metrics=_util.avg_metrics(raw),
            group=str(report.get("group") or group or ""),
            batch_metrics=batch if isinstance(batch, list) else None,
        )


class TrainingMetrics(TrialMetrics):
    """A report of the training group (deprecated in Determined: TrialMetrics)."""

    def __init__(self, steps_completed: Optional[int] = None, **kwargs: Any) -> None:
        if steps_completed is not None:
            kwargs["total_batches"] = steps_completed
        super().__init__(**kwargs)


class ValidationMetrics(TrialMetrics):
    """A report of the validation group (deprecated in Determined: TrialMetrics)."""

    def __init__(self, steps_completed: Optional[int] = None, **kwargs: Any) -> None:
        if steps_completed is not None:
            kwargs["total_batches"] = steps_completed
        super().__init__(**kwargs)
