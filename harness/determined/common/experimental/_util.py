"""Shared bits of the SDK's classes: sort orders, and reading the master's JSON."""

import datetime
import enum
from typing import Any, Dict, Optional


class OrderBy(enum.Enum):
    """Whether a sorted list goes up or down."""

    ASCENDING = "ORDER_BY_ASC"
    ASC = "ORDER_BY_ASC"
    DESCENDING = "ORDER_BY_DESC"
    DESC = "ORDER_BY_DESC"


def parse_time(value: Any) -> Optional[datetime.datetime]:
    """An RFC 3339 time from the master ("2026-01-02T15:04:05.123456789Z") as an aware datetime."""
    if not isinstance(value, str) or not value:
        return None
    s = value.strip()
    if s.endswith("Z") or s.endswith("z"):
        s = s[:-1] + "+00:00"
    # Python before 3.11 takes at most 6 digits of a fraction.
    if "." in s:
        head, _, rest = s.partition(".")
        digits = ""
        while rest and rest[0].isdigit():
            digits, rest = digits + rest[0], rest[1:]
        s = head + ("." + digits[:6].ljust(6, "0") if digits else "") + rest
    try:
        return datetime.datetime.fromisoformat(s)
    except ValueError:
        return None


def state_name(value: Any) -> str:
    """A state as the master writes it (COMPLETED) or as Determined's enums spell it
    (STATE_COMPLETED), as the latter."""
    s = str(value or "UNSPECIFIED").upper()
    return s if s.startswith("STATE_") else "STATE_" + s


def avg_metrics(metrics: Any) -> Dict[str, Any]:
    """The averaged metrics of a report, however it was sent (avg_metrics, validation_metrics,
    avgMetrics, or the bare mapping)."""
    if not isinstance(metrics, dict):
        return {}
    for key in ("avg_metrics", "avgMetrics", "validation_metrics", "validationMetrics"):
        if isinstance(metrics.get(key), dict):
            return dict(metrics[key])
    if any(k in metrics for k in ("batch_metrics", "batchMetrics")):
        return {}
    return dict(metrics)
