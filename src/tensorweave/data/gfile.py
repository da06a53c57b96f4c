"""`tf.io.gfile` and TF1's `tf.gfile`: file access with TensorFlow's names and errors.

Local files only. Failures raise TF's error classes, with TF's message shape
("<path>; No such file or directory"): `NotFoundError`, `AlreadyExistsError`,
`PermissionDeniedError`, `FailedPreconditionError` (e.g. a directory where a file is needed).

Text-mode files read and write `str` (UTF-8) without newline translation, like TF; binary
modes ("rb", "wb", "ab") use bytes.
"""

from __future__ import annotations

import errno
import glob as _glob
import os
import shutil
from collections.abc import Iterator
from typing import NamedTuple

from tensorweave import errors

__all__ = [
    "GFile", "FastGFile", "Open", "exists", "glob", "makedirs", "mkdir", "listdir", "remove",
    "rename", "isdir", "stat", "copy", "walk", "rmtree", "join", "FileStatistics",
    "Exists", "Glob", "MakeDirs", "MkDir", "ListDirectory", "Remove", "Rename", "IsDirectory",
    "Stat", "Copy", "Walk", "DeleteRecursively",
]


def _error(e: OSError, path) -> errors.OpError:
    """The TF error class for an OSError about `path`."""
    text = f"{os.fspath(path)}; {os.strerror(e.errno) if e.errno else e}"
    cls = {errno.ENOENT: errors.NotFoundError, errno.EEXIST: errors.AlreadyExistsError,
           errno.EACCES: errors.PermissionDeniedError, errno.EPERM: errors.PermissionDeniedError,
           errno.EISDIR: errors.FailedPreconditionError,
           errno.ENOTDIR: errors.FailedPreconditionError,
           errno.ENOTEMPTY: errors.FailedPreconditionError}.get(e.errno or 0, errors.UnknownError)
    return cls(None, None, text)


def _path(p) -> str:
    return os.fsdecode(os.fspath(p))


class GFile:
    """A file, as TF's `tf.io.gfile.GFile(name, mode="r")`.

    Modes: "r", "w", "a" (text, str) and "rb", "wb", "ab" (bytes); "+" variants are accepted.
    The file opens at construction. Supports `read(n=-1)`, `readline()`, `readlines()`,
    iteration over lines, `write()`, `seek(offset=None, whence=0, position=None)`, `tell()`,
    `size()`, `flush()`, `close()` and `with`.

    Raises:
      errors.NotFoundError: reading a file that does not exist (or a missing directory).
      errors.PermissionDeniedError / FailedPreconditionError: as the OS reports.
      errors.PermissionDeniedError: reading a file opened for writing, or the reverse.
    """

    def __init__(self, name, mode: str = "r"):
        self.name = _path(name)
        if mode.replace("b", "").replace("+", "") not in ("r", "w", "a"):
            raise errors.InvalidArgumentError(None, None, f"Unsupported file mode '{mode}'")
        self.mode = mode
        self._binary = "b" in mode
        try:
            if self._binary:
                self._f = open(self.name, mode)  # noqa: SIM115 - closed by close()
            else:
                self._f = open(self.name, mode, encoding="utf-8", newline="\n")  # noqa: SIM115
        except OSError as e:
            raise _error(e, self.name) from None

    # -- reading ---------------------------------------------------------------------------
    def read(self, n: int = -1):
        """Up to `n` bytes/characters (all remaining when n < 0)."""
        self._check("r")
        return self._f.read(-1 if n is None else n)

    def readline(self):
        """The next line including its "\\n" ("" or b"" at the end)."""
        self._check("r")
        return self._f.readline()

    def readlines(self) -> list:
        self._check("r")
        return self._f.readlines()

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    next = __next__

    # -- writing ---------------------------------------------------------------------------
    def write(self, file_content) -> None:
        """Writes str (text mode; bytes are decoded) or bytes (binary; str is encoded)."""
        self._check("w")
        if self._binary and isinstance(file_content, str):
            file_content = file_content.encode()
        elif not self._binary and isinstance(file_content, (bytes, bytearray)):
            file_content = bytes(file_content).decode()
        self._f.write(file_content)

    def flush(self) -> None:
        self._f.flush()

    # -- position ----------------------------------------------------------------------------
    def seek(self, offset=None, whence: int = 0, position=None) -> int:
        """Moves to `offset` (or the deprecated `position`) relative to `whence`."""
        if offset is None and position is None:
            raise TypeError("seek(): offset argument required")
        if offset is not None and position is not None:
            raise TypeError("seek(): offset and position may not be set simultaneously.")
        return self._f.seek(position if offset is None else offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def size(self) -> int:
        """The file's length in bytes (including unflushed writes)."""
        if not self._f.closed and self._f.writable():
            self._f.flush()
        return os.path.getsize(self.name)

    def seekable(self) -> bool:
        return True

    @property
    def closed(self) -> bool:
        return self._f.closed

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _check(self, want: str) -> None:
        if self._f.closed:
            raise errors.FailedPreconditionError(None, None, f"File '{self.name}' is closed.")
        ok = self._f.readable() if want == "r" else self._f.writable()
        if not ok:
            what = "reading" if want == "r" else "writing"
            raise errors.PermissionDeniedError(None, None,
                                               f"File '{self.name}' isn't open for {what}")


FastGFile = GFile
Open = GFile


# -- functions -------------------------------------------------------------------------------
def exists(path) -> bool:
    """Whether `path` (file or directory) exists."""
    return os.path.exists(_path(path))


def isdir(path) -> bool:
    return os.path.isdir(_path(path))


def glob(pattern) -> list[str]:
    """Paths matching `pattern` (a string or a list of patterns), sorted. A pattern with no
    wildcard yields itself when the path exists."""
    patterns = [pattern] if isinstance(pattern, (str, bytes, os.PathLike)) else list(pattern)
    out: set[str] = set()
    for p in patterns:
        out.update(_glob.glob(_path(p)))
    return sorted(out)


def makedirs(path) -> None:
    """Creates `path` and missing parents; an existing directory is fine.

    Raises:
      errors.FailedPreconditionError: a file is in the way.
    """
    path = _path(path)
    try:
        os.makedirs(path, exist_ok=True)
    except FileExistsError:
        raise errors.FailedPreconditionError(None, None, f"{path}; Not a directory") from None
    except OSError as e:
        raise _error(e, path) from None


def mkdir(path) -> None:
    """Creates one directory. Raises AlreadyExistsError when it exists, NotFoundError when the
    parent does not."""
    path = _path(path)
    try:
        os.mkdir(path)
    except OSError as e:
        raise _error(e, path) from None


def listdir(path) -> list[str]:
    """The entry names in directory `path` (sorted, no "." or ".."). NotFoundError if missing."""
    path = _path(path)
    if not os.path.isdir(path):
        raise errors.NotFoundError(None, None, f"Could not find directory {path}")
    return sorted(os.listdir(path))


def remove(path) -> None:
    """Deletes a file. NotFoundError when it does not exist."""
    path = _path(path)
    try:
        os.remove(path)
    except OSError as e:
        raise _error(e, path) from None


def rename(oldname, newname, overwrite: bool = False) -> None:
    """Renames a file or directory. AlreadyExistsError when `newname` exists and not
    `overwrite`; NotFoundError when `oldname` does not exist."""
    oldname, newname = _path(oldname), _path(newname)
    if not overwrite and os.path.exists(newname):
        raise errors.AlreadyExistsError(None, None, f"file already exists: {newname}")
    try:
        os.replace(oldname, newname)
    except OSError as e:
        raise _error(e, oldname) from None


def copy(oldpath, newpath, overwrite: bool = False) -> None:
    """Copies a file. AlreadyExistsError when `newpath` exists and not `overwrite`."""
    oldpath, newpath = _path(oldpath), _path(newpath)
    if not overwrite and os.path.exists(newpath):
        raise errors.AlreadyExistsError(None, None, f"file already exists: {newpath}")
    try:
        shutil.copyfile(oldpath, newpath)
    except OSError as e:
        raise _error(e, oldpath) from None


def rmtree(path) -> None:
    """Deletes a directory and everything under it. NotFoundError when it does not exist."""
    path = _path(path)
    if not os.path.exists(path):
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory")
    try:
        shutil.rmtree(path)
    except OSError as e:
        raise _error(e, path) from None


class FileStatistics(NamedTuple):
    """What `stat` returns (TF's field names)."""

    length: int
    mtime_nsec: int
    is_directory: bool


def stat(path) -> FileStatistics:
    """Size, modification time (ns) and kind of `path`. NotFoundError when missing."""
    path = _path(path)
    try:
        st = os.stat(path)
    except OSError as e:
        raise _error(e, path) from None
    return FileStatistics(st.st_size, st.st_mtime_ns, os.path.isdir(path))


def walk(top, topdown: bool = True, onerror=None) -> Iterator[tuple[str, list, list]]:
    """Yields `(dirname, subdirs, files)` as os.walk (nothing when `top` does not exist).
    With `topdown`, editing `subdirs` in place prunes the walk."""
    top = _path(top)
    if not os.path.isdir(top):
        return
    handler = None
    if onerror is not None:
        def handler(e):
            onerror(_error(e, e.filename or top))
    for dirpath, dirnames, filenames in os.walk(top, topdown=topdown, onerror=handler):
        dirnames.sort()
        yield dirpath, dirnames, sorted(filenames)


def join(path, *paths) -> str:
    """Joins path components (`os.path.join`)."""
    return os.path.join(_path(path), *[_path(p) for p in paths])


# TF1 `tf.gfile` names.
Exists = exists
Glob = glob
MakeDirs = makedirs
MkDir = mkdir
ListDirectory = listdir
Remove = remove
IsDirectory = isdir
Stat = stat
Walk = walk
DeleteRecursively = rmtree


def Rename(oldname, newname, overwrite: bool = False) -> None:  # noqa: N802 - TF1's name
    rename(oldname, newname, overwrite)


def Copy(oldpath, newpath, overwrite: bool = False) -> None:  # noqa: N802 - TF1's name
    copy(oldpath, newpath, overwrite)
