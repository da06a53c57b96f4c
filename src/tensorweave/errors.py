"""TensorFlow's canonical error codes and the `OpError` classes raised to users.

Every error a user can cause maps to one class with TF's code. Errors raised while a step
runs carry the failing node's name, its op type and the site where the user created it.
"""

from __future__ import annotations

import errno as _errno

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """A failure while running (or planning) a graph.

    Attributes:
      node_def: the failing node's IR `NodeDef`, or None.
      op: the failing `Operation` when the client knows it, or None.
      message: the text without the node annotation.
      error_code: TF's canonical code.
    """

    error_code = UNKNOWN

    def __init__(self, node_def=None, op=None, message: str = "", error_code: int | None = None):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message
        if error_code is not None:
            self.error_code = error_code

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        return (type(self), (self.node_def, self.op, self.message, self.error_code))


def _make(name: str, code: int) -> type[OpError]:
    cls = type(name, (OpError,), {"error_code": code, "__doc__": f"TF error code {code}."})

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        OpError.__init__(self, node_def, op, message, code)

    cls.__init__ = __init__
    return cls


CancelledError = _make("CancelledError", CANCELLED)
UnknownError = _make("UnknownError", UNKNOWN)
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT)
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED)
NotFoundError = _make("NotFoundError", NOT_FOUND)
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS)
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED)
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED)
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION)
AbortedError = _make("AbortedError", ABORTED)
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE)
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED)
InternalError = _make("InternalError", INTERNAL)
UnavailableError = _make("UnavailableError", UNAVAILABLE)
DataLossError = _make("DataLossError", DATA_LOSS)
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED)

_BY_CODE: dict[int, type[OpError]] = {
    cls.error_code: cls
    for cls in (
        CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
        AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError, FailedPreconditionError,
        AbortedError, OutOfRangeError, UnimplementedError, InternalError, UnavailableError,
        DataLossError, UnauthenticatedError,
    )
}


def exception_type_from_error_code(code: int) -> type[OpError]:
    """The OpError subclass for a canonical code (UnknownError for codes we do not know)."""
    return _BY_CODE.get(code, UnknownError)


def error_code_from_exception_type(cls: type[OpError]) -> int:
    return cls.error_code


def make_error(code: int, message: str, node_def=None) -> OpError:
    """Builds the error of `code` (used when an error crosses a process boundary)."""
    return exception_type_from_error_code(code)(node_def, None, message)


def annotate(err: OpError, node_def, site: str | None) -> OpError:
    """Returns a copy of `err` whose message names `node_def` and where the user created it."""
    where = f"\n  defined at {site}" if site else ""
    msg = f"{err.message}\n\t [[node {node_def.name} (op {node_def.op}){where}]]"
    out = type(err)(node_def, None, msg)
    out.__cause__ = err.__cause__ or err
    return out


def from_os_error(e: OSError, message: str) -> OpError:
    """The OpError TF raises for OS error `e` (TF's `ErrnoToCode`: ENOENT -> NotFound,
    EACCES -> PermissionDenied, ENOTDIR -> FailedPrecondition, ...), saying `message: e`."""
    return exception_type_from_error_code(_errno_codes.get(e.errno or 0, UNKNOWN))(
        None, None, f"{message}: {e}")


_errno_codes = {
    **dict.fromkeys(("ENOENT", "ENODEV", "ENXIO", "ESRCH"), NOT_FOUND),
    **dict.fromkeys(("EACCES", "EPERM"), PERMISSION_DENIED),
    **dict.fromkeys(("EEXIST", "EADDRINUSE", "EALREADY"), ALREADY_EXISTS),
    **dict.fromkeys(("ENOTDIR", "EISDIR", "EROFS", "ENOTEMPTY", "EBUSY", "ETXTBSY"),
                    FAILED_PRECONDITION),
    **dict.fromkeys(("ENOSPC", "EDQUOT", "EMFILE", "ENFILE", "ENOMEM", "EMLINK"),
                    RESOURCE_EXHAUSTED),
    **dict.fromkeys(("ENAMETOOLONG", "EINVAL", "EBADF", "E2BIG", "ELOOP"), INVALID_ARGUMENT),
    **dict.fromkeys(("ETIMEDOUT",), DEADLINE_EXCEEDED),
    **dict.fromkeys(("ENOSYS", "EOPNOTSUPP"), UNIMPLEMENTED),
}
_errno_codes = {getattr(_errno, k): v for k, v in _errno_codes.items() if hasattr(_errno, k)}


__all__ = [n for n in dir() if n.endswith("Error") or n.isupper()] + [
    "OpError", "exception_type_from_error_code", "error_code_from_exception_type",
    "from_os_error",
]
