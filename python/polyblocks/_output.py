"""Output files written safely for any kind of path: the Python side of
``pb/Support/OutputFile.h``, with the same rules.

- ``-``: standard output;
- a path that does not exist yet, or a regular file: written to a temporary
  file beside it and renamed over it once complete (an existing file keeps
  its permissions), so that a reader never sees half a file;
- a character or block device or a FIFO (``/dev/null``, a pipe): opened and
  written in place, never renamed over or removed;
- a symbolic link: followed, and its target treated by the rules above (the
  link stays a link);
- a directory or a socket: an error.

On failure only the temporary file of its own is removed, never the path.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_output(path: str | os.PathLike, data: bytes | str) -> None:
    """Writes ``data`` (str as UTF-8) to ``path`` by the rules above."""
    if isinstance(data, str):
        data = data.encode()
    path = os.fspath(path)
    if path == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    target = os.path.realpath(path) if os.path.islink(path) else path
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(f"cannot write '{path}': it is a directory")
        if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            fd = os.open(target, os.O_WRONLY | os.O_CLOEXEC)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            return
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"cannot write '{path}': it is not a regular file, a device or "
                          "a FIFO")
    directory, name = os.path.split(target)
    fd, tmp = tempfile.mkstemp(prefix=f"{name}.tmp-", dir=directory or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_csv(path: str | os.PathLike, fieldnames: list[str], rows: list[dict]) -> None:
    """``rows`` as CSV with a header of ``fieldnames``, through write_output."""
    import csv
    import io
    buffer = io.StringIO(newline="")
    w = csv.DictWriter(buffer, fieldnames=fieldnames)
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k) for k in fieldnames})
    write_output(path, buffer.getvalue())


__all__ = ["write_output", "write_csv"]
