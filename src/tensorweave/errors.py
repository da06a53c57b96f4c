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

    The message is rendered from the fields, never edited as text: `detail`, then the task
    it came from, then `[[node NAME (op TYPE, defined at SITE)]]` when it names a node.

    Attributes:
      node_def: the failing node's IR `NodeDef` (name and op type), or None.
      op: the failing `Operation` when the client knows it, or None.
      detail: what went wrong, without the node, site or task.
      site: where the user created the op ("file:line"), or None.
      task: the task the error came from (`/job:ps/replica:0/task:0`), or None.
      error_code: TF's canonical code.
    """

    error_code = UNKNOWN

    def __init__(self, node_def=None, op=None, message: str = "", error_code: int | None = None):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.detail = message
        self.site: str | None = None
        self.task: str | None = None
        if error_code is not None:
            self.error_code = error_code

    @property
    def node_name(self) -> str | None:
        return getattr(self.node_def, "name", None) or None

    @property
    def op_type(self) -> str | None:
        return getattr(self.node_def, "op", None) or None

    @property
    def message(self) -> str:
        """The text users see: detail, task, node and creation site."""
        return self.render()

    def render(self, with_node: bool = True) -> str:
        """The message; without the node annotation when `with_node` is False (the wire
        carries the node separately)."""
        text = self.detail
        if self.task and self.task not in text:
            text += f" (task {self.task})"
        if with_node and self.node_name:
            where = f", defined at {self.site}" if self.site else ""
            text += f"\n\t [[node {self.node_name} (op {self.op_type}{where})]]"
        return text

    def replace(self, **fields) -> OpError:
        """A copy of this error with some fields changed (node_def, op, detail, site, task)."""
        out = type(self)(fields.get("node_def", self.node_def), fields.get("op", self.op),
                         fields.get("detail", self.detail))
        out.error_code = self.error_code
        out.site = fields.get("site", self.site)
        out.task = fields.get("task", self.task)
        out.__cause__ = self.__cause__
        return out

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        return (_rebuild, (type(self), self.node_def, self.op, self.detail, self.error_code,
                           self.site, self.task))


def _rebuild(cls, node_def, op, detail, code, site, task) -> OpError:
    out = cls(node_def, op, detail)
    out.error_code, out.site, out.task = code, site, task
    return out


class _CodedError(OpError):
    """An OpError whose code is its class's `error_code` (TF's subclasses take no code)."""

    def __init__(self, node_def=None, op=None, message="", *args, **kwargs):
        OpError.__init__(self, node_def, op, message, type(self).error_code)


class CancelledError(_CodedError):
    """TF error code 1."""

    error_code = CANCELLED


class UnknownError(_CodedError):
    """TF error code 2."""

    error_code = UNKNOWN


class InvalidArgumentError(_CodedError):
    """TF error code 3."""

    error_code = INVALID_ARGUMENT


class DeadlineExceededError(_CodedError):
    """TF error code 4."""

    error_code = DEADLINE_EXCEEDED


class NotFoundError(_CodedError):
    """TF error code 5."""

    error_code = NOT_FOUND


class AlreadyExistsError(_CodedError):
    """TF error code 6."""

    error_code = ALREADY_EXISTS


class PermissionDeniedError(_CodedError):
    """TF error code 7."""

    error_code = PERMISSION_DENIED


class ResourceExhaustedError(_CodedError):
    """TF error code 8."""

    error_code = RESOURCE_EXHAUSTED


class FailedPreconditionError(_CodedError):
    """TF error code 9."""

    error_code = FAILED_PRECONDITION


class AbortedError(_CodedError):
    """TF error code 10."""

    error_code = ABORTED


class OutOfRangeError(_CodedError):
    """TF error code 11."""

    error_code = OUT_OF_RANGE


class UnimplementedError(_CodedError):
    """TF error code 12."""

    error_code = UNIMPLEMENTED


class InternalError(_CodedError):
    """TF error code 13."""

    error_code = INTERNAL


class UnavailableError(_CodedError):
    """TF error code 14."""

    error_code = UNAVAILABLE


class DataLossError(_CodedError):
    """TF error code 15."""

    error_code = DATA_LOSS


class UnauthenticatedError(_CodedError):
    """TF error code 16."""

    error_code = UNAUTHENTICATED


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
    """A copy of `err` naming `node_def` and (when known) where the user created it."""
    out = err.replace(node_def=node_def, site=site or err.site)
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
