"""
``python3 -m determined.launch._torchrun ARGS...``: ``python3 -m torch.distributed.run ARGS...``
with a fix for PyTorch releases whose torchrun fails at once under Python 3.11, such as Debian
12's python3-torch 1.13: their ``Std.from_str("0")`` (the default of ``--redirects`` and
``--tee``) returns None, because Python 3.11 no longer iterates a Flag's zero member.
"""

import runpy
import sys
from typing import Any, Dict, Union


def _fix_std_from_str() -> None:
    try:
        from torch.distributed.elastic.multiprocessing import api
    except ImportError:
        return  # torchrun itself will say what is missing
    std = api.Std
    if std.from_str("0") is not None:
        return
    original = std.from_str

    def from_str(cls: Any, vm: str) -> Union[Any, Dict[int, Any]]:
        original(vm)  # validates vm: raises ValueError for anything malformed
        if ":" not in vm:
            return cls(int(vm))
        return {int(i): cls(int(v)) for i, v in (m.split(":") for m in vm.split(","))}

    std.from_str = classmethod(from_str)  # type: ignore[assignment]


def main(argv: list) -> None:
    _fix_std_from_str()
    sys.argv = ["torch.distributed.run"] + argv
    runpy.run_module("torch.distributed.run", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
