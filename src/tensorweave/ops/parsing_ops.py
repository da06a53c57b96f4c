"""Parsing ops: tf.train.Example parsing, raw/CSV/base64 decoding, file reads and writes, and
`SparseToDense` (the dense form of a parsed VarLenFeature).

Op types, inputs, attrs and defaults are TensorFlow's (`ParseExampleV2`, `ParseExample`,
`ParseSingleExample`, `DecodeRaw`, `DecodeCSV`, `ReadFile`, `WriteFile`, `StringToNumber`,
`DecodeBase64`, `EncodeBase64`, `SparseToDense`), so GraphDefs written by TensorFlow run here.
The wrappers build the graph TF 2.x's `tf.compat.v1` builds: `parse_example` and
`parse_single_example` create one `ParseExampleV2` (features sorted by key; a required
FixedLenFeature gets an empty default `Const`, a given default becomes `key_<name>` reshaped
to the feature's shape).

NOTE: the registry has no allowed-set for `list(type)` attrs, so the `{float, int64, string}`
restriction of the parse ops' type lists is checked by their shape functions.
"""

from __future__ import annotations

import re

import numpy as np

from tensorweave import dtypes
from tensorweave.formats.example import (
    WIRE_DTYPES,
    FixedLenFeature,
    FixedLenSequenceFeature,
    SparseFeature,
    VarLenFeature,
)
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import scalar, unchanged
from tensorweave.ops.constant_op import constant
from tensorweave.ops.registry import register_op
from tensorweave.ops.sparse_tensor import SparseTensor
from tensorweave.shapes import TensorShape, as_shape

_PARSE_TYPES = ["sparse_types", "Tdense"]


# -- shape functions -------------------------------------------------------------------------
def _check_wire_types(ctx, attrs) -> None:
    for a in attrs:
        for t in ctx.attr(a) or []:
            if dtypes.as_dtype(t).base_dtype not in WIRE_DTYPES:
                raise ctx.fail(f"attr '{a}' holds {dtypes.as_dtype(t).name}; parsed features "
                               "are float32, int64 or string")


def _rank_at_most(ctx, i: int, most: int, what: str) -> int | None:
    rank = ctx.input_shape(i).ndims
    if rank is not None and rank > most:
        raise ctx.fail(f"Shape must be at most rank {most} but is rank {rank} for {what}")
    return rank


def _rank_is(ctx, i: int, want: int, what: str) -> None:
    rank = ctx.input_shape(i).ndims
    if rank is not None and rank != want:
        raise ctx.fail(f"Shape must be rank {want} but is rank {rank} for {what}")


def _parse_outputs(ctx, batch: TensorShape, n_sparse: int) -> list:
    """Sparse indices/values/shapes, then dense values, for serialized of shape `batch`."""
    rank = batch.ndims
    cols = None if rank is None else rank + 1
    out = [TensorShape([None, cols])] * n_sparse + [TensorShape([None])] * n_sparse
    out += [TensorShape([cols])] * n_sparse
    for s in ctx.attr("dense_shapes") or []:
        s = as_shape(s)
        if rank is None or s.ndims is None:
            out.append(TensorShape(None))
        else:
            out.append(TensorShape(list(batch.as_tuple()) + list(s.as_tuple())))
    return out


def _parse_example_v2_shape(ctx) -> list:
    _check_wire_types(ctx, _PARSE_TYPES + ["ragged_value_types"])
    _rank_at_most(ctx, 0, 1, "'serialized'")
    _rank_at_most(ctx, 1, 1, "'names'")
    for i, what in ((2, "sparse_keys"), (3, "dense_keys"), (4, "ragged_keys")):
        _rank_is(ctx, i, 1, f"'{what}'")
    out = _parse_outputs(ctx, ctx.input_shape(0), ctx.attr("num_sparse"))
    n_ragged = len(ctx.attr("ragged_value_types") or [])
    return out + [TensorShape([None])] * (2 * n_ragged)


def _parse_example_shape(ctx) -> list:
    _check_wire_types(ctx, _PARSE_TYPES)
    _rank_is(ctx, 0, 1, "'serialized'")
    _rank_is(ctx, 1, 1, "'names'")
    return _parse_outputs(ctx, ctx.input_shape(0), ctx.attr("Nsparse"))


def _parse_single_example_shape(ctx) -> list:
    _check_wire_types(ctx, _PARSE_TYPES)
    _rank_is(ctx, 0, 0, "'serialized'")
    return _parse_outputs(ctx, TensorShape([]), ctx.attr("num_sparse"))


def _decode_raw_shape(ctx) -> TensorShape:
    dims = ctx.input_dims(0)
    return TensorShape(None) if dims is None else TensorShape(list(dims) + [None])


def _decode_csv_shape(ctx) -> list:
    for i in range(1, ctx.num_inputs):
        dims = ctx.input_dims(i)
        if dims is not None and (len(dims) > 1 or (dims and dims[0] is not None
                                                     and dims[0] > 1)):
            raise ctx.fail("Shape of a default must be a length-0 or length-1 vector, or a "
                           "scalar.")
    return [ctx.input_shape(0)] * (ctx.num_inputs - 1)


def _sparse_to_dense_shape(ctx) -> TensorShape:
    _rank_at_most(ctx, 0, 2, "'sparse_indices'")
    _rank_at_most(ctx, 1, 1, "'output_shape'")
    _rank_at_most(ctx, 2, 1, "'sparse_values'")
    _rank_is(ctx, 3, 0, "'default_value'")
    return ctx.shape_from_tensor(1) if ctx.input_shape(1).ndims == 1 else TensorShape(None)


# -- op registrations ------------------------------------------------------------------------
register_op(
    "ParseExampleV2",
    inputs=["serialized: string", "names: string", "sparse_keys: string",
            "dense_keys: string", "ragged_keys: string", "dense_defaults: Tdense"],
    outputs=["sparse_indices: num_sparse * int64", "sparse_values: sparse_types",
             "sparse_shapes: num_sparse * int64", "dense_values: Tdense",
             "ragged_values: ragged_value_types", "ragged_row_splits: ragged_split_types"],
    attrs=["Tdense: list(type) >= 0", "num_sparse: int >= 0", "sparse_types: list(type) >= 0",
           "ragged_value_types: list(type) >= 0", "ragged_split_types: list(type) >= 0",
           "dense_shapes: list(shape) >= 0"],
    shape_fn=_parse_example_v2_shape,
)
register_op(
    "ParseExample",
    inputs=["serialized: string", "names: string", "sparse_keys: Nsparse * string",
            "dense_keys: Ndense * string", "dense_defaults: Tdense"],
    outputs=["sparse_indices: Nsparse * int64", "sparse_values: sparse_types",
             "sparse_shapes: Nsparse * int64", "dense_values: Tdense"],
    attrs=["Nsparse: int >= 0", "Ndense: int >= 0", "sparse_types: list(type) >= 0",
           "Tdense: list(type) >= 0", "dense_shapes: list(shape) >= 0"],
    shape_fn=_parse_example_shape,
)
register_op(
    "ParseSingleExample",
    inputs=["serialized: string", "dense_defaults: Tdense"],
    outputs=["sparse_indices: num_sparse * int64", "sparse_values: sparse_types",
             "sparse_shapes: num_sparse * int64", "dense_values: Tdense"],
    attrs=["num_sparse: int >= 0", "sparse_keys: list(string) >= 0",
           "dense_keys: list(string) >= 0", "sparse_types: list(type) >= 0",
           "Tdense: list(type) >= 0", "dense_shapes: list(shape) >= 0"],
    shape_fn=_parse_single_example_shape,
)
register_op(
    "DecodeRaw", inputs=["bytes: string"], outputs=["output: out_type"],
    attrs=["out_type: {half, float, double, int32, uint16, uint8, int16, int8, int64, "
           "complex64, complex128, bool, bfloat16}", "little_endian: bool = true"],
    shape_fn=_decode_raw_shape,
)
register_op(
    "DecodeCSV", inputs=["records: string", "record_defaults: OUT_TYPE"],
    outputs=["output: OUT_TYPE"],
    attrs=["OUT_TYPE: list(type) >= 1", "field_delim: string = ','",
           "use_quote_delim: bool = true", "na_value: string = ''",
           "select_cols: list(int) = []"],
    shape_fn=_decode_csv_shape,
)
# NOTE: ReadFile is stateless in TF; it is stateful here so that constant folding never reads
# a file at plan time (a plan is cached, and the file may change between runs).
register_op("ReadFile", inputs=["filename: string"], outputs=["contents: string"],
            shape_fn=scalar, stateful=True)
register_op("WriteFile", inputs=["filename: string", "contents: string"], stateful=True)
register_op("StringToNumber", inputs=["string_tensor: string"], outputs=["output: out_type"],
            attrs=["out_type: {float, double, int32, int64, uint32, uint64} = DT_FLOAT"],
            shape_fn=unchanged)
register_op("DecodeBase64", inputs=["input: string"], outputs=["output: string"],
            shape_fn=unchanged)
register_op("EncodeBase64", inputs=["input: string"], outputs=["output: string"],
            attrs=["pad: bool = false"], shape_fn=unchanged)
register_op(
    "SparseToDense",
    inputs=["sparse_indices: Tindices", "output_shape: Tindices", "sparse_values: T",
            "default_value: T"],
    outputs=["dense: T"],
    attrs=["validate_indices: bool = true", "T: type", "Tindices: {int32, int64}"],
    shape_fn=_sparse_to_dense_shape,
)


# -- Example parsing wrappers ----------------------------------------------------------------
class _Params:
    """Features sorted by key into sparse and dense lists (TF's _ParseOpParams)."""

    def __init__(self, features: dict):
        self.sparse_keys: list[str] = []
        self.sparse_types: list[dtypes.DType] = []
        self.dense_keys: list[str] = []
        self.dense_types: list[dtypes.DType] = []
        self.dense_shapes: list[TensorShape] = []
        self.dense_defaults: dict = {}
        for key in sorted(features):
            self._add(key, features[key])
        overlap = set(self.sparse_keys) & set(self.dense_keys)
        if overlap:
            raise ValueError(f"Dense and sparse keys must not intersect; intersection: "
                             f"{overlap}")

    def _add(self, key, feature) -> None:
        if isinstance(feature, VarLenFeature):
            self._add_sparse(key, _wire_dtype(key, feature.dtype))
        elif isinstance(feature, FixedLenFeature):
            self._add_fixed(key, feature)
        elif isinstance(feature, FixedLenSequenceFeature):
            self._add_sequence(key, feature)
        elif isinstance(feature, SparseFeature):
            raise NotImplementedError(f"SparseFeature (key '{key}') is not supported; parse "
                                      "its index and value keys as VarLenFeatures")
        else:
            raise ValueError(f"Unsupported {type(feature).__name__} {feature} for key '{key}'")

    def _add_sparse(self, key, dtype) -> None:
        if key in self.sparse_keys:
            if self.sparse_types[self.sparse_keys.index(key)] != dtype:
                raise ValueError(f"Conflicting type for feature {key}.")
            return
        self.sparse_keys.append(key)
        self.sparse_types.append(dtype)

    def _add_fixed(self, key, feature) -> None:
        if feature.shape is None:
            raise ValueError(f"Missing shape for feature {key}. Received feature={feature}.")
        shape = as_shape(feature.shape)
        if shape.ndims and shape.as_tuple()[0] is None:
            raise ValueError(f"First dimension of shape for feature {key} unknown. Consider "
                             f"using FixedLenSequenceFeature. Received feature={feature}.")
        if not shape.is_fully_defined():
            raise ValueError(f"All dimensions of shape for feature {key} need to be known but "
                             f"received {feature.shape!s}.")
        self._add_dense(key, _wire_dtype(key, feature.dtype), shape, feature.default_value)

    def _add_sequence(self, key, feature) -> None:
        if not feature.allow_missing:
            raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to "
                             "be True.")
        if feature.shape is None:
            raise ValueError(f"Missing shape for feature {key}. Received feature={feature}.")
        shape = TensorShape([None] + list(as_shape(feature.shape).as_list()))
        self._add_dense(key, _wire_dtype(key, feature.dtype), shape, feature.default_value)

    def _add_dense(self, key, dtype, shape, default) -> None:
        self.dense_keys.append(key)
        self.dense_types.append(dtype)
        self.dense_shapes.append(shape)
        if default is not None:
            self.dense_defaults[key] = default

    def default_tensors(self) -> list[Tensor]:
        return [_dense_default(k, s, t, self.dense_defaults.get(k))
                for k, s, t in zip(self.dense_keys, self.dense_shapes, self.dense_types)]


def _wire_dtype(key, dtype) -> dtypes.DType:
    if not dtype:
        raise ValueError(f"Missing type for feature {key}.")
    dt = dtypes.as_dtype(dtype).base_dtype
    if dt not in WIRE_DTYPES:
        raise ValueError(f"Feature {key}: dtype {dt.name} cannot be parsed; Example features "
                         "are float32, int64 or string")
    return dt


def _dense_default(key, shape: TensorShape, dtype, default) -> Tensor:
    """TF's default tensor: a scalar pad for a sequence feature, an empty tensor for a
    required one, else the default (`key_<key>`) reshaped to the feature's shape."""
    from tensorweave.ops.array_ops import reshape

    safe = re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)
    if shape.ndims and shape.as_tuple()[0] is None:
        if default is None:
            return convert_to_tensor(b"" if dtype == dtypes.string else 0, dtype=dtype)
        return reshape(convert_to_tensor(default, dtype=dtype, name=f"padding_{safe}"),
                       np.zeros(0, np.int32))
    if default is None:
        return constant([], dtype=dtype)
    if isinstance(default, Tensor):
        return default
    # NOTE: an array, not a list: apply_op treats an empty list as "all tensors" and would
    # name the shape constant outside the Reshape scope.
    return reshape(convert_to_tensor(default, dtype=dtype, name=f"key_{safe}"),
                   np.array(shape.as_list(), np.int32))


def parse_example(serialized, features, name=None, example_names=None) -> dict:
    """Parses a batch of serialized `Example` protos (TF1 `tf.io.parse_example`).

    Args:
      serialized: a vector (or scalar) string tensor of serialized Examples.
      features: `{key: FixedLenFeature | VarLenFeature | FixedLenSequenceFeature}`.
      example_names: optional names of the records, used in error messages.
    Returns:
      `{key: Tensor}` (dense `[batch] + shape`) and `{key: SparseTensor}` for VarLenFeatures.
    Raises:
      ValueError: an invalid feature config (at construction).
      errors.InvalidArgumentError (at run time): a record is not an Example, or a feature is
        missing without default, has the wrong type or the wrong number of values; the
        message names the key and the record's index.
    """
    if not features:
        raise ValueError(f"Argument `features` cannot be None or falsy. Got {features}")
    params = _Params(features)
    with name_scope(name, "ParseExample", [serialized, example_names]):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        outs = apply_op(
            "ParseExampleV2", serialized, [] if example_names is None else example_names,
            np.array(params.sparse_keys, dtype=object).reshape(-1),
            np.array(params.dense_keys, dtype=object).reshape(-1),
            np.zeros(0, dtype=object), params.default_tensors(),
            num_sparse=len(params.sparse_keys), sparse_types=params.sparse_types,
            ragged_value_types=[], ragged_split_types=[], dense_shapes=params.dense_shapes,
            Tdense=params.dense_types, name=name)
    sparse = [SparseTensor(i, v, s) for i, v, s in zip(outs[0], outs[1], outs[2])]
    return dict(zip(params.sparse_keys + params.dense_keys, sparse + list(outs[3])))


def parse_single_example(serialized, features, name=None, example_names=None) -> dict:
    """Parses one serialized `Example` (a scalar string tensor); dense values have the
    feature's shape, sparse indices one column (TF1 `tf.io.parse_single_example`).

    Raises: as `parse_example`, and ValueError when `serialized` is not a scalar.
    """
    if features is None:
        raise ValueError("Invalid argument: features cannot be None.")
    if not features:
        raise ValueError("Invalid argument: features cannot be empty.")
    with name_scope(name, "ParseSingleExample", [serialized, example_names]):
        serialized = convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        serialized = _assert_scalar(serialized, "serialized")
        return parse_example(serialized, features, name, example_names)


def _assert_scalar(value: Tensor, what: str) -> Tensor:
    rank = value.shape.ndims
    if rank == 0:
        return value
    if rank is not None:
        raise ValueError(f"Input {what} must be a scalar")
    from tensorweave.ops import array_ops, control_flow_ops, math_ops

    check = control_flow_ops.Assert(math_ops.equal(array_ops.rank(value), 0),
                                    [f"Input {what} must be a scalar"],
                                    name=f"{what.capitalize()}IsScalar")
    out = control_flow_ops.with_dependencies([check], value, name=f"{what}Dependencies")
    out.set_shape([])
    return out


# -- other wrappers --------------------------------------------------------------------------
def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):  # noqa: A002
    """Reinterprets each string's bytes as a vector of `out_type` (TF1 `tf.io.decode_raw`;
    `bytes` is the deprecated name of `input_bytes`). The output has one more dim."""
    if input_bytes is None:
        input_bytes = bytes
    if out_type is None:
        raise ValueError("decode_raw_v1() missing 1 positional argument: 'out_type'")
    return apply_op("DecodeRaw", input_bytes, out_type=out_type, little_endian=little_endian,
                    name=name)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None) -> list:
    """Converts CSV records to one tensor per column (TF1 `tf.io.decode_csv`).

    `record_defaults[i]` is `[value]` (the column's type and default) or an empty tensor of
    the type (the column is required).

    Raises:
      ValueError: bad `select_cols`.
      errors.InvalidArgumentError (at run time): a wrong field count, a missing required
        field or a field that does not parse (names the field and the record).
    """
    if select_cols is not None:
        if any(select_cols[i] >= select_cols[i + 1] for i in range(len(select_cols) - 1)):
            raise ValueError("select_cols is not strictly increasing.")
        if select_cols and select_cols[0] < 0:
            raise ValueError("select_cols contains negative values.")
        if len(select_cols) != len(record_defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    with name_scope(name, "DecodeCSV", [records] + list(record_defaults)) as scope:
        defaults = [d if isinstance(d, Tensor) else
                    convert_to_tensor(d, name=f"record_defaults_{i}")
                    for i, d in enumerate(record_defaults)]
        return list(apply_op("DecodeCSV", records, defaults, field_delim=field_delim,
                             use_quote_delim=use_quote_delim, na_value=na_value,
                             select_cols=list(select_cols or []), name=scope)[0])


def read_file(filename, name=None) -> Tensor:
    """The whole contents of file `filename` (NotFoundError at run time when missing)."""
    return apply_op("ReadFile", filename, name=name)


def write_file(filename, contents, name=None):
    """Writes `contents` to file `filename`, creating missing directories (an Operation)."""
    return apply_op("WriteFile", filename, contents, name=name)


def string_to_number(string_tensor, out_type=dtypes.float32, name=None) -> Tensor:
    """Parses each string as a number of `out_type` (TF1 `tf.string_to_number`)."""
    return apply_op("StringToNumber", string_tensor, out_type=out_type, name=name)


def decode_base64(input, name=None) -> Tensor:  # noqa: A002 - TF's argument name
    """Decodes web-safe base64 strings (`-` and `_`, padding optional)."""
    return apply_op("DecodeBase64", input, name=name)


def encode_base64(input, pad=False, name=None) -> Tensor:  # noqa: A002 - TF's argument name
    """Encodes strings as web-safe base64 (`-` and `_`), padded with `=` when `pad`."""
    return apply_op("EncodeBase64", input, pad=pad, name=name)


def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name=None) -> Tensor:
    """A dense tensor of `output_shape` holding `sparse_values` at `sparse_indices` and
    `default_value` elsewhere (TF1 `tf.sparse_to_dense`)."""
    values = convert_to_tensor(sparse_values) if not isinstance(sparse_values, Tensor) \
        else sparse_values
    return apply_op("SparseToDense", sparse_indices, output_shape, values,
                    _default_for(default_value, values.dtype),
                    validate_indices=validate_indices, name=name)


def sparse_tensor_to_dense(sp_input, default_value=None, validate_indices=True,
                           name=None) -> Tensor:
    """The dense form of SparseTensor `sp_input` (`tf.sparse.to_dense`); missing entries are
    `default_value` (zero or b"" when None).

    Raises:
      TypeError: `sp_input` is not a SparseTensor.
      errors.InvalidArgumentError (at run time, with `validate_indices`): indices out of
        bounds, unsorted or repeated.
    """
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}")
    return apply_op("SparseToDense", sp_input.indices, sp_input.dense_shape, sp_input.values,
                    _default_for(default_value, sp_input.dtype),
                    validate_indices=validate_indices, name=name)


def _default_for(default_value, dtype):
    if default_value is None or (dtype == dtypes.string and
                                 isinstance(default_value, int) and default_value == 0):
        return np.array(b"" if dtype == dtypes.string else 0, dtype=dtype.np_dtype)
    if isinstance(default_value, Tensor):
        return default_value
    return np.asarray(default_value, dtype=dtype.np_dtype) if dtype != dtypes.string \
        else np.array(default_value, dtype=object)


__all__ = [
    "parse_example", "parse_single_example", "decode_raw", "decode_csv", "read_file",
    "write_file", "string_to_number", "decode_base64", "encode_base64", "sparse_to_dense",
    "sparse_tensor_to_dense",
]
