"""TF Serving's JSON conventions for tensors and examples (its REST API's json_tensor.cc):
rows (`instances`) and columns (`inputs`), `{"b64": ...}` for binary strings, outputs whose
key ends in `_bytes` written as `{"b64": ...}`, tf.Example features from plain JSON values.

Raises `errors.InvalidArgumentError` for anything that does not fit the signature.
"""

from __future__ import annotations

import base64
import binascii
import math

import numpy as np

from tensorweave import dtypes
from tensorweave.proto import example_pb2, feature_pb2
from tensorweave.serving.servable import invalid


def _is_b64(value) -> bool:
    return isinstance(value, dict) and set(value) == {"b64"}


def _b64(value) -> bytes:
    try:
        return base64.b64decode(value["b64"], validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise invalid(f"Unable to base64 decode: {str(value['b64'])[:40]!r}") from None


# -- JSON → arrays ------------------------------------------------------------------------------
def _leaf(value, dtype: dtypes.DType):
    """One JSON scalar as a Python value of `dtype` (TF Serving's type checks)."""
    if dtype == dtypes.string:
        if _is_b64(value):
            return _b64(value)
        if isinstance(value, str):
            return value.encode()
    elif dtype == dtypes.bool_:
        if isinstance(value, bool):
            return value
    elif dtype.is_integer:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif dtype.is_floating:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        if value in ("NaN", "Infinity", "-Infinity"):
            return float(value.replace("Infinity", "inf"))
    kind = type(value).__name__
    raise invalid(f"JSON Value: {_short(value)} Type: {kind} is not of expected type: "
                  f"{dtype.name}")


def _short(value) -> str:
    import json

    text = json.dumps(value)
    return text if len(text) < 60 else text[:57] + "..."


def _convert(value, dtype):
    if isinstance(value, list):
        return [_convert(v, dtype) for v in value]
    return _leaf(value, dtype)


def to_array(value, dtype: dtypes.DType, what: str) -> np.ndarray:
    """A JSON value (nested lists of scalars) as an array of `dtype`.

    Raises:
      InvalidArgumentError: a value of the wrong type, or lists of unequal lengths.
    """
    converted = _convert(value, dtype)
    np_type = object if dtype == dtypes.string else dtype.as_numpy_dtype
    try:
        arr = np.array(converted, dtype=np_type)
    except (ValueError, OverflowError) as e:
        raise invalid(f"Failed to process {what}: {e}") from None
    if dtype == dtypes.string and arr.dtype == object and _ragged(converted):
        raise invalid(f"Failed to process {what}: lists of unequal lengths")
    return arr


def _ragged(value) -> bool:
    if not isinstance(value, list) or not value:
        return False
    shapes = {len(v) if isinstance(v, list) else -1 for v in value}
    return len(shapes) > 1 or any(_ragged(v) for v in value)


def instances_to_inputs(instances, sig) -> dict[str, np.ndarray]:
    """The row format: a list, one entry per example (an object per example for several
    named inputs)."""
    if not isinstance(instances, list) or not instances:
        raise invalid("'instances' must be a non-empty JSON array")
    named = all(isinstance(r, dict) and not _is_b64(r) for r in instances)
    if not named:
        if len(sig.inputs) != 1:
            raise invalid(f"Expecting named inputs (JSON objects) for a signature with "
                          f"{len(sig.inputs)} inputs: {sorted(sig.inputs)}")
        key = next(iter(sig.inputs))
        return {key: to_array(instances, dtypes.as_dtype(sig.inputs[key].dtype), "instances")}
    keys = set(instances[0])
    for i, row in enumerate(instances):
        if set(row) != keys:
            raise invalid(f"Failed to process element: {i} of 'instances' list. JSON object: "
                          f"{_short(row)} keys do not match the first element's "
                          f"{sorted(keys)}")
    return {k: to_array([r[k] for r in instances], _dtype(sig, k), f"input {k!r}")
            for k in keys}


def columns_to_inputs(inputs, sig) -> dict[str, np.ndarray]:
    """The columnar format: a value (one input) or {input key: value}."""
    if isinstance(inputs, dict) and not _is_b64(inputs):
        return {k: to_array(v, _dtype(sig, k), f"input {k!r}") for k, v in inputs.items()}
    if len(sig.inputs) != 1:
        raise invalid(f"Expecting an object of named inputs for a signature with "
                      f"{len(sig.inputs)} inputs: {sorted(sig.inputs)}")
    key = next(iter(sig.inputs))
    return {key: to_array(inputs, dtypes.as_dtype(sig.inputs[key].dtype), "inputs")}


def _dtype(sig, key: str) -> dtypes.DType:
    if key not in sig.inputs:
        # NOTE: the signature check names the extra key with every expected one
        return dtypes.float32
    return dtypes.as_dtype(sig.inputs[key].dtype)


# -- arrays → JSON ------------------------------------------------------------------------------
def to_json(value: np.ndarray, key: str):
    """An output array as JSON values (`{"b64": ...}` for `*_bytes` keys)."""
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind in "SU":
        flat = [_string_out(v, key) for v in arr.reshape(-1).tolist()]
        return np.array(flat, dtype=object).reshape(arr.shape).tolist() if arr.ndim else flat[0]
    if arr.dtype == np.float32 or arr.dtype == np.float16:
        # NOTE: float32 written in its shortest form (0.3, not 0.30000001192092896), as TF
        # Serving writes it
        shortest = np.vectorize(lambda v: float(str(np.float32(v))), otypes=[float])
        return _floats(shortest(arr).tolist() if arr.size else arr.tolist())
    if arr.dtype.kind == "f":
        return _floats(arr.tolist())
    return arr.tolist()


def _floats(value):
    if isinstance(value, list):
        return [_floats(v) for v in value]
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _string_out(value, key: str):
    raw = value if isinstance(value, bytes) else str(value).encode()
    if key.endswith("_bytes"):
        return {"b64": base64.b64encode(raw).decode()}
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(raw).decode()}


def rows_json(outputs: dict, batch: int):
    """`predictions` of the row format: one value (one output) or object per example."""
    for key, value in outputs.items():
        if np.ndim(value) == 0 or np.shape(value)[0] != batch:
            raise invalid(f"Tensor name: {key} has inconsistent batch size: "
                          f"{np.shape(value)[0] if np.ndim(value) else 0} expecting: {batch}")
    cols = {k: to_json(v, k) for k, v in outputs.items()}
    if len(cols) == 1:
        return next(iter(cols.values()))
    return [{k: cols[k][i] for k in cols} for i in range(batch)]


def columns_json(outputs: dict):
    cols = {k: to_json(v, k) for k, v in outputs.items()}
    return next(iter(cols.values())) if len(cols) == 1 else cols


# -- examples -----------------------------------------------------------------------------------
def _feature(name: str, value) -> feature_pb2.Feature:
    values = value if isinstance(value, list) else [value]
    feature = feature_pb2.Feature()
    if all(isinstance(v, bool) or (isinstance(v, int)) for v in values) and values:
        feature.int64_list.value.extend(int(v) for v in values)
    elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values) \
            and values:
        feature.float_list.value.extend(float(v) for v in values)
    elif all(isinstance(v, str) or _is_b64(v) for v in values):
        feature.bytes_list.value.extend(_b64(v) if _is_b64(v) else v.encode() for v in values)
    else:
        raise invalid(f"Feature {name!r}: expected numbers or strings (one kind), got "
                      f"{_short(value)}")
    return feature


def example_from_json(obj, what: str) -> example_pb2.Example:
    """A tf.Example from {feature name: value or list} (ints → int64, floats → float,
    strings and {"b64"} → bytes)."""
    if not isinstance(obj, dict):
        raise invalid(f"{what} must be a JSON object of features, got {_short(obj)}")
    example = example_pb2.Example()
    for name, value in obj.items():
        example.features.feature[name].CopyFrom(_feature(name, value))
    return example


def examples_from_json(body) -> list[bytes]:
    """The serialized examples of a :classify/:regress body (`context` merged into each)."""
    examples = body.get("examples")
    if not isinstance(examples, list) or not examples:
        raise invalid("'examples' must be a non-empty JSON array")
    context = body.get("context")
    ctx = example_from_json(context, "'context'") if context is not None else None
    out = []
    for i, obj in enumerate(examples):
        ex = example_from_json(obj, f"example {i}")
        if ctx is not None:
            merged = example_pb2.Example()
            merged.CopyFrom(ctx)
            merged.MergeFrom(ex)
            ex = merged
        out.append(ex.SerializeToString())
    return out
