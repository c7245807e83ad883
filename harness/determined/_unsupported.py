"""Determined integrations that Resolute's harness does not offer yet.

Importing one raises :class:`UnsupportedIntegrationError`, an ``ImportError`` (so code written as
``try: import determined.keras except ImportError: ...`` keeps working) whose message names the
integration and points to the migration guide, instead of a bare ``ModuleNotFoundError`` that
reads like a broken installation.
"""

import sys

#: Where the migration guide lives, in the Resolute repository and served by every master.
MIGRATION_DOCS = "docs/migrating-from-determined.md"


class UnsupportedIntegrationError(ImportError):
    """Raised on importing a Determined integration that Resolute does not support yet."""

    def __init__(self, module: str, what: str, instead: str) -> None:
        self.integration = module
        super().__init__(
            f"{module} ({what}) is not supported by Resolute yet. {instead} See 'Migrating from "
            f"Determined' ({MIGRATION_DOCS} in the Resolute repository) for what runs unchanged "
            "and what does not.",
            name=module,
        )


def refuse(module: str, what: str, instead: str, main: bool = False) -> None:
    """Refuse the import of ``module``. A launch layer run as ``python3 -m`` (``main``) says why
    on stderr and exits 1 rather than printing a traceback into the trial's log."""
    err = UnsupportedIntegrationError(module, what, instead)
    if main:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(1)
    raise err
