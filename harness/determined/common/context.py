"""Packing a model directory for upload, as ``det experiment create`` packs it: the files of
the directory and of each include, less what ``.detignore`` (gitignore's syntax) leaves out,
never ``.git`` or ``__pycache__``, as a gzipped tar. Links to files go as the files; links to
directories are left out. At most 96 MiB (the master refuses more)."""

import io
import os
import re
import stat
import tarfile
from typing import Iterable, List, Optional, Pattern, Tuple, Union

#: The most a context may hold, as det and the master count it.
MAX_CONTEXT_BYTES = 96 << 20

IGNORE_FILE = ".detignore"
_ALWAYS_SKIPPED = {".git", "__pycache__"}


def _glob_regexp(glob: str) -> str:
    out: List[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "*" and glob.startswith("**", i):
            rest = glob[i + 2:]
            at_start = i == 0 or glob[i - 1] == "/"
            if at_start and rest.startswith("/"):
                out.append("(.*/)?")  # **/ : any number of leading directories
                i += 3
                continue
            if at_start and rest == "":
                out.append(".*")  # trailing /** : everything inside
                i += 2
                continue
            out.append("[^/]*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 1)
            if end < 0:
                out.append(r"\[")
            else:
                cls = glob[i + 1:end]
                if cls.startswith("!"):
                    cls = "^" + cls[1:]
                out.append("[" + cls.replace("\\", "\\\\") + "]")
                i = end
        elif c == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


class Ignore:
    """The patterns of a .detignore file; the last one that matches a path decides."""

    def __init__(self, text: str = "") -> None:
        self.rules: List[Tuple[Pattern[str], bool, bool]] = []  # (regexp, negate, dir_only)
        for line in text.split("\n"):
            line = line.rstrip("\r")
            while line.endswith(" ") and not line.endswith("\\ "):
                line = line[:-1]
            if not line or line.startswith("#"):
                continue
            negate = False
            if line.startswith("!"):
                negate, line = True, line[1:]
            elif line.startswith("\\!") or line.startswith("\\#"):
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            anchored = "/" in line
            line = line[1:] if line.startswith("/") else line
            expr = _glob_regexp(line)
            expr = ("^" + expr + "$") if anchored or line.startswith("**") else ("(^|/)" + expr + "$")
            try:
                rx = re.compile(expr)
            except re.error:
                rx = re.compile("(^|/)" + re.escape(line) + "$")
            self.rules.append((rx, negate, dir_only))

    def match(self, rel: str, is_dir: bool) -> bool:
        ignored = False
        for rx, negate, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if rx.search(rel):
                ignored = not negate
        return ignored


def _scan(root: str, prefix: str) -> List[Tuple[str, str, bool]]:
    """(name in archive, path on disk, is_dir) of what root holds after its .detignore."""
    if not os.path.isdir(root):
        raise ValueError(f"model directory {root} is not a directory")
    try:
        with open(os.path.join(root, IGNORE_FILE)) as f:
            ignore = Ignore(f.read())
    except FileNotFoundError:
        ignore = Ignore()
    out: List[Tuple[str, str, bool]] = []
    if prefix:
        out.append((prefix, root, True))
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        keep = []
        for d in dirnames:
            p = os.path.join(dirpath, d)
            rel = os.path.relpath(p, root).replace(os.sep, "/")
            if d in _ALWAYS_SKIPPED or ignore.match(rel, True):
                continue
            if os.path.islink(p):
                continue  # links to directories are not uploaded
            keep.append(d)
            out.append(("/".join(x for x in (prefix, rel) if x), p, True))
        dirnames[:] = keep
        for name in sorted(filenames):
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root).replace(os.sep, "/")
            try:
                st = os.stat(p)  # follows links
            except OSError as e:
                raise ValueError(f"context: {e}") from None
            if stat.S_ISDIR(st.st_mode) or not stat.S_ISREG(st.st_mode):
                continue
            if ignore.match(rel, False):
                continue
            out.append(("/".join(x for x in (prefix, rel) if x), p, False))
    return out


def pack(
    model_dir: Optional[Union[str, "os.PathLike[str]"]],
    includes: Optional[Iterable[Union[str, "os.PathLike[str]"]]] = None,
) -> bytes:
    """The gzipped tar of model_dir (None for none) and each include (a file or directory
    placed at the top under its own name)."""
    entries: List[Tuple[str, str, bool]] = []
    if model_dir is not None:
        entries += _scan(os.fspath(model_dir), "")
    top = {name for name, _, _ in entries if "/" not in name}
    for inc in includes or []:
        inc = os.fspath(inc)
        base = os.path.basename(os.path.normpath(inc))
        if base in ("", ".", ".."):
            raise ValueError(f"include {inc!r}: name a file or directory by a path that ends in its name")
        if base in top:
            raise ValueError(f"include {inc!r}: {base!r} is already in the context")
        if not os.path.exists(inc):
            raise ValueError(f"include {inc!r}: no such file or directory")
        top.add(base)
        if os.path.isdir(inc):
            entries += _scan(inc, base)
        else:
            entries.append((base, inc, False))
    size = sum(os.path.getsize(p) for _, p, d in entries if not d)
    if size > MAX_CONTEXT_BYTES:
        raise ValueError(
            f"the model directory holds {size} bytes, more than the master takes "
            f"({MAX_CONTEXT_BYTES}); leave large files out with {IGNORE_FILE}"
        )
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name, path, is_dir in entries:
            st = os.stat(path)
            info = tarfile.TarInfo(name + "/" if is_dir else name)
            info.mode = stat.S_IMODE(st.st_mode)
            info.mtime = int(st.st_mtime)
            if is_dir:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = st.st_size
                with open(path, "rb") as f:
                    tar.addfile(info, f)
    return buf.getvalue()
