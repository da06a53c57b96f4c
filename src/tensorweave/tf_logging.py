"""`tf.logging` (TF1's `tf_logging`): TensorFlow's logging calls on Python's `logging`.

Everything goes to the `tensorweave` logger, which the project's modules (hooks, savers,
session managers) log to as well, so `tf.logging.set_verbosity(tf.logging.INFO)` shows their
INFO lines, as it does in TensorFlow. As TF, the logger gets a stderr handler in
`logging.BASIC_FORMAT` (`INFO:tensorweave:message`) on first use, unless the root logger
already has handlers (absl's, an application's), which then print instead.
"""

from __future__ import annotations

import logging as _logging
import sys as _sys
import threading as _threading
import time as _time

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_NAME = "tensorweave"
_lock = _threading.Lock()
_configured = False
_counts: dict = {}


def get_logger() -> _logging.Logger:
    """The `tensorweave` logger, given its handler on first use (see the module docstring)."""
    global _configured
    logger = _logging.getLogger(_NAME)
    if _configured:
        return logger
    with _lock:
        if not _configured:
            if not _logging.getLogger().handlers and not logger.handlers:
                handler = _logging.StreamHandler(_sys.stderr)
                handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
                logger.addHandler(handler)
            _configured = True
    return logger


def log(level, msg, *args, **kwargs) -> None:
    get_logger().log(level, msg, *args, stacklevel=2, **kwargs)


def debug(msg, *args, **kwargs) -> None:
    get_logger().debug(msg, *args, stacklevel=2, **kwargs)


def info(msg, *args, **kwargs) -> None:
    get_logger().info(msg, *args, stacklevel=2, **kwargs)


def warning(msg, *args, **kwargs) -> None:
    get_logger().warning(msg, *args, stacklevel=2, **kwargs)


warn = warning


def error(msg, *args, **kwargs) -> None:
    get_logger().error(msg, *args, stacklevel=2, **kwargs)


def fatal(msg, *args, **kwargs) -> None:
    """Logs at FATAL (CRITICAL); as TF's, it does not end the program."""
    get_logger().fatal(msg, *args, stacklevel=2, **kwargs)


def vlog(level, msg, *args, **kwargs) -> None:
    """Logs at numeric `level` (TF's verbose logging; `vlog(1, ...)` is below DEBUG)."""
    get_logger().log(level, msg, *args, stacklevel=2, **kwargs)


def _caller_key(depth: int = 2):
    frame = _sys._getframe(depth)  # noqa: SLF001 - the call site identifies the counter
    return frame.f_code.co_filename, frame.f_lineno


def _next_count(key) -> int:
    with _lock:
        count = _counts.get(key, 0)
        _counts[key] = count + 1
    return count


def log_if(level, msg, condition, *args) -> None:
    if condition:
        get_logger().log(level, msg, *args, stacklevel=2)


def log_every_n(level, msg, n, *args) -> None:
    """Logs on the 1st, (n+1)th, (2n+1)th ... call from this call site."""
    count = _next_count(_caller_key())
    if count % max(int(n), 1) == 0:
        get_logger().log(level, msg, *args, stacklevel=2)


def log_first_n(level, msg, n, *args) -> None:
    """Logs only the first `n` calls from this call site."""
    if _next_count(_caller_key()) < n:
        get_logger().log(level, msg, *args, stacklevel=2)


def flush() -> None:
    for handler in get_logger().handlers:
        handler.flush()


def get_verbosity() -> int:
    """The `tensorweave` logger's effective level."""
    return get_logger().getEffectiveLevel()


def set_verbosity(v) -> None:
    """Sets the threshold for what messages are logged (DEBUG, INFO, WARN, ERROR, FATAL)."""
    get_logger().setLevel(v)


def google2_log_prefix(level, timestamp=None, file_and_line=None) -> str:
    """The glog line prefix `Lmmdd hh:mm:ss.uuuuuu pid file:line] ` TF puts before messages."""
    now = _time.time() if timestamp is None else timestamp
    parts = _time.localtime(now)
    usecs = int((now - int(now)) * 1e6)
    letter = {DEBUG: "I", INFO: "I", WARN: "W", ERROR: "E", FATAL: "F"}.get(level, "I")
    filename, line = file_and_line or ("logging", 0)
    return (f"{letter}{parts.tm_mon:02d}{parts.tm_mday:02d} {parts.tm_hour:02d}:"
            f"{parts.tm_min:02d}:{parts.tm_sec:02d}.{usecs:06d} {_threading.get_ident():5d} "
            f"{filename}:{line}] ")


class TaskLevelStatusMessage:
    """TF's status-message marker: wraps a message, `str()` gives it back."""

    def __init__(self, msg):
        self._msg = msg

    def __str__(self) -> str:
        return str(self._msg)


__all__ = [
    "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "TaskLevelStatusMessage", "debug", "error",
    "fatal", "flush", "get_logger", "get_verbosity", "info", "log", "log_every_n",
    "log_first_n", "log_if", "set_verbosity", "vlog", "warn", "warning",
]
