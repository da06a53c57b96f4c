"""`tf.contrib.training` (TF 1.15's): `HParams` (typed hyperparameters parsed from
"name=value,..." strings and JSON), `checkpoints_iterator` and `wait_for_new_checkpoint`.

HParams follows TF 1.15's hparam.py: a parameter's type is fixed by its first value (a list's
by its first element); later values are cast to it when that is safe (int → float, not float
→ int, nothing to or from bool or str) and refused with ValueError otherwise.
"""

from __future__ import annotations

import json
import numbers
import re
import time

from tensorweave.training.checkpoint_utils import checkpoints_iterator, latest_checkpoint

__all__ = ["HParams", "checkpoints_iterator", "parse_values", "wait_for_new_checkpoint"]

_PARAM_RE = re.compile(r"""
  (?P<name>[a-zA-Z][\w\.]*)      # a name: "var" or "x.y"
  (\[\s*(?P<index>\d+)\s*\])?    # an optional index: "[1]"
  \s*=\s*
  ((?P<val>[^,\[]*)              # one value
   |
   \[(?P<vals>[^\]]*)\])         # or a list: "[1,2,3]"
  ($|,\s*)""", re.VERBOSE)


def _parse_fail(name, var_type, value, values):
    raise ValueError(f"Could not parse hparam '{name}' of type '{var_type.__name__}' with "
                     f"value '{value}' in {values}")


def _reuse_fail(name, values):
    raise ValueError(f"Multiple assignments to variable '{name}' in {values}")


def _bool_parser(name, values):
    def parse(value):
        if value in ("true", "True"):
            return True
        if value in ("false", "False"):
            return False
        try:
            return bool(int(value))
        except ValueError:
            _parse_fail(name, bool, value, values)
    return parse


def _scalar(name, parse, var_type, m, values, results) -> None:
    try:
        parsed = parse(m["val"])
    except ValueError:
        _parse_fail(name, var_type, m["val"], values)
    if not m["index"]:
        if name in results:
            _reuse_fail(name, values)
        results[name] = parsed
        return
    if name in results and not isinstance(results[name], dict):
        _reuse_fail(name, values)
    slots = results.setdefault(name, {})
    index = int(m["index"])
    if index in slots:
        _reuse_fail(f"{name}[{index}]", values)
    slots[index] = parsed


def _list(name, parse, var_type, m, values, results) -> None:
    if m["index"] is not None:
        raise ValueError("Assignment of a list to a list index.")
    if name in results:
        _reuse_fail(name, values)
    elements = [e for e in re.split("[ ,]", m["vals"]) if e]
    try:
        results[name] = [parse(e) for e in elements]
    except ValueError:
        _parse_fail(name, var_type, m["vals"], values)


def parse_values(values: str, type_map: dict, ignore_unknown: bool = False) -> dict:
    """{name: parsed value} from "a=1,b=[2,3],c[1]=4" (indexed assignments give {index: v}).

    Raises:
      ValueError: a malformed string, an unknown name (unless ignore_unknown), a value that
        does not parse as its type, or a name assigned twice.
    """
    results: dict = {}
    pos = 0
    while pos < len(values):
        m = _PARAM_RE.match(values, pos)
        if not m:
            raise ValueError(f"Malformed hyperparameter value: {values[pos:]}")
        pos = m.end()
        groups = m.groupdict()
        name = groups["name"]
        if name not in type_map:
            if ignore_unknown:
                continue
            raise ValueError(f"Unknown hyperparameter type for {name}")
        var_type = type_map[name]
        parse = _bool_parser(name, values) if var_type is bool else var_type
        if groups["val"] is not None:
            _scalar(name, parse, var_type, groups, values, results)
        elif groups["vals"] is not None:
            _list(name, parse, var_type, groups, values, results)
        else:
            _parse_fail(name, var_type, "", values)
    return results


def _cast(name, param_type, value):
    """`value` as `param_type` where that loses nothing (TF's _cast_to_type_if_compatible)."""
    fail = f"Could not cast hparam '{name}' of type '{param_type}' from value {value!r}"
    if type(value) is param_type or issubclass(param_type, type(None)):
        return value
    if issubclass(param_type, (str, bytes)) and not isinstance(value, (str, bytes)):
        raise ValueError(fail)
    if issubclass(param_type, bool) != isinstance(value, bool):
        raise ValueError(fail)
    if issubclass(param_type, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise ValueError(fail)
    if issubclass(param_type, numbers.Number) and not isinstance(value, numbers.Number):
        raise ValueError(fail)
    return param_type(value)


class HParams:
    """A set of typed hyperparameters, each also an attribute (TF 1.15's HParams).

    Example:
        hparams = HParams(learning_rate=0.1, layers=[64, 32], activation="relu")
        hparams.parse("learning_rate=0.3,layers=[128,64]")
        hparams.learning_rate  # 0.3

    Raises:
      ValueError: a name that is an attribute already, an empty list value.
      NotImplementedError: `hparam_def` (an HParamDef protocol buffer: not supported).
    """

    _HAS_DYNAMIC_ATTRIBUTES = True

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        self._hparam_types: dict = {}
        self._model_structure = model_structure
        if hparam_def is not None:
            raise NotImplementedError("HParams(hparam_def=...): HParamDef protocol buffers are "
                                      "not supported; pass the values as keyword arguments")
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value) -> None:
        """Adds `name` with `value`; its type (or its elements' for a list) is value's."""
        if getattr(self, name, None) is not None:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name, value) -> None:
        """Sets an existing hyperparameter, cast to its type.

        Raises:
          KeyError: an unknown name. ValueError: a list for a scalar (or the reverse), or a
          value that cannot be cast.
        """
        param_type, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [_cast(name, param_type, v) for v in value])
        else:
            if is_list:
                raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
            setattr(self, name, _cast(name, param_type, value))

    def del_hparam(self, name) -> None:
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values: str) -> HParams:
        """Overrides from "name=value,list=[a,b]" (see `parse_values`); returns self."""
        type_map = {name: t for name, (t, _) in self._hparam_types.items()}
        return self.override_from_dict(parse_values(values, type_map))

    def override_from_dict(self, values_dict: dict) -> HParams:
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def set_from_map(self, values_map: dict) -> HParams:
        return self.override_from_dict(values_map)

    def set_model_structure(self, model_structure) -> None:
        self._model_structure = model_structure

    def get_model_structure(self):
        return self._model_structure

    def to_json(self, indent=None, separators=None, sort_keys=False) -> str:
        """The values as JSON (callables left out, at any depth)."""
        return json.dumps(_without_callables(self.values()), indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def parse_json(self, values_json: str) -> HParams:
        return self.override_from_dict(json.loads(values_json))

    def values(self) -> dict:
        return {n: getattr(self, n) for n in self._hparam_types}

    def get(self, key, default=None):
        """The value of `key`, else `default` (which must suit the parameter's type).

        Raises:
          ValueError: a default incompatible with an existing parameter.
        """
        if key not in self._hparam_types:
            return default
        if default is not None:
            self._check_default(key, default)
        return getattr(self, key)

    def _check_default(self, key, default) -> None:
        param_type, is_list = self._hparam_types[key]
        type_str = f"list<{param_type}>" if is_list else str(param_type)
        fail = f"Hparam '{key}' of type '{type_str}' is incompatible with default={default}"
        if is_list != isinstance(default, list):
            raise ValueError(fail)
        try:
            for v in default if is_list else [default]:
                _cast(key, param_type, v)
        except ValueError as e:
            raise ValueError(f"{fail}. {e}") from None

    def __contains__(self, key) -> bool:
        return key in self._hparam_types

    def __str__(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.values().items())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({sorted(self.values().items())})"


def _without_callables(x):
    if isinstance(x, dict):
        return {k: _without_callables(v) for k, v in x.items() if not callable(v)}
    if isinstance(x, list):
        return [_without_callables(v) for v in x if not callable(v)]
    return x


def wait_for_new_checkpoint(checkpoint_dir, last_checkpoint=None, seconds_to_sleep=1,
                            timeout=None):
    """The latest checkpoint of `checkpoint_dir` once it differs from `last_checkpoint`, or
    None after `timeout` seconds (None: wait without end, as TF does)."""
    stop = None if timeout is None else time.time() + timeout
    while True:
        path = latest_checkpoint(checkpoint_dir)
        if path is not None and path != last_checkpoint:
            return path
        if stop is not None and time.time() + seconds_to_sleep > stop:
            return None
        time.sleep(seconds_to_sleep)
