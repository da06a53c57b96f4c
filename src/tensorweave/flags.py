"""`tf.flags` / `tf.app.flags` (TF1's platform/flags.py): absl.flags, with TF's two additions.

1. `FLAGS` parses `sys.argv` on the first read of a flag value when nobody parsed yet (absl
   raises UnparsedFlagAccessError there); unknown flags then raise UnrecognizedFlagError.
2. `DEFINE_string/bool/boolean/float/integer` also take TF's old keyword names
   (`flag_name`, `default_value`, `docstring`), with a deprecation warning.

Everything else (DEFINE_enum/list/multi_string/..., validators, errors, `FlagValues`) is
absl.flags itself, so messages and exit codes are absl's.
"""

from __future__ import annotations

import functools as _functools
import logging as _logging
import sys as _sys

from absl import flags as _absl_flags
from absl.flags import *  # noqa: F403

# NOTE: flags defined through the wrappers below belong to their caller's module (so
# `--help` lists them under the program), not to this one.
_absl_flags.disclaim_key_flags()

_RENAMED_ARGUMENTS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _accept_old_names(define):
    @_functools.wraps(define)
    def wrapper(*args, **kwargs):
        renamed = [old for old in _RENAMED_ARGUMENTS if old in kwargs]
        for old in renamed:
            kwargs[_RENAMED_ARGUMENTS[old]] = kwargs.pop(old)
        if renamed:
            _logging.warning("Use of the keyword argument names (flag_name, default_value, "
                             "docstring) is deprecated, please use (name, default, help) "
                             "instead.")
        return define(*args, **kwargs)
    return wrapper


DEFINE_string = _accept_old_names(_absl_flags.DEFINE_string)
DEFINE_boolean = _accept_old_names(_absl_flags.DEFINE_boolean)
DEFINE_bool = DEFINE_boolean
DEFINE_float = _accept_old_names(_absl_flags.DEFINE_float)
DEFINE_integer = _accept_old_names(_absl_flags.DEFINE_integer)


class _FlagValuesWrapper:
    """absl's FlagValues, parsing `sys.argv` on the first read before any explicit parse."""

    def __init__(self, flag_values):
        self.__dict__["__wrapped"] = flag_values

    def __getattribute__(self, name):
        if name == "__dict__":
            return super().__getattribute__(name)
        return self.__dict__["__wrapped"].__getattribute__(name)

    def __getattr__(self, name):
        wrapped = self.__dict__["__wrapped"]
        if not wrapped.is_parsed():
            wrapped(_sys.argv)
        return wrapped.__getattr__(name)

    def __setattr__(self, name, value):
        return self.__dict__["__wrapped"].__setattr__(name, value)

    def __delattr__(self, name):
        return self.__dict__["__wrapped"].__delattr__(name)

    def __dir__(self):
        return self.__dict__["__wrapped"].__dir__()

    def __getitem__(self, name):
        return self.__dict__["__wrapped"].__getitem__(name)

    def __setitem__(self, name, flag):
        return self.__dict__["__wrapped"].__setitem__(name, flag)

    def __len__(self):
        return self.__dict__["__wrapped"].__len__()

    def __iter__(self):
        return self.__dict__["__wrapped"].__iter__()

    def __str__(self):
        return self.__dict__["__wrapped"].__str__()

    def __call__(self, *args, **kwargs):
        return self.__dict__["__wrapped"].__call__(*args, **kwargs)


FLAGS = _FlagValuesWrapper(_absl_flags.FLAGS)
