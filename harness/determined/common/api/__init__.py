"""Talking to the master: ``errors`` (the exceptions), ``Session`` (a signed-in user's
session), ``authentication`` (logins shared with ``det`` through its auth.json).

Only ``errors`` is imported eagerly: ``determined._session`` (the harness's HTTP client) imports
it, and the rest builds on ``determined._session``.
"""

from typing import Any

from determined.common.api import errors

_LAZY = {
    "Session": "_session",
    "UnauthSession": "_session",
    "canonicalize_master_url": "_session",
    "default_master": "_session",
    "authentication": None,
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'determined.common.api' has no attribute {name!r}")
    import importlib

    if _LAZY[name] is None:
        return importlib.import_module(f"determined.common.api.{name}")
    return getattr(importlib.import_module(f"determined.common.api.{_LAZY[name]}"), name)


__all__ = ["errors", "Session", "UnauthSession", "canonicalize_master_url", "default_master",
           "authentication"]
