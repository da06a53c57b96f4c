"""String ops (TF's string_ops.cc): splitting, substrings, regular expressions, joining
along axes, number formatting, lengths and case, with the TF1 wrappers (`tf.string_split`,
`tf.substr`, `tf.regex_replace`, `tf.reduce_join`, `tf.as_string`, `tf.strings.*`).

Strings are bytes; regular expressions are RE2's syntax as far as Python's `re` shares it
(rewrites use `\\1`; `\\0` is the whole match). None has a gradient. Kernels:
`runtime/kernels/cpu/strings.py`.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.common_shapes import unchanged
from tensorweave.ops.registry import register_op
from tensorweave.ops.sparse_tensor import SparseTensor
from tensorweave.shapes import TensorShape, broadcast_shapes

_UNIT = "unit: {'BYTE', 'UTF8_CHAR'} = 'BYTE'"


def _split_shape(ctx):
    dims = ctx.input_dims(0)
    if dims is not None and len(dims) != 1:
        raise ctx.fail(f"Shape must be rank 1 but is rank {len(dims)}")
    if ctx.input_shape(1).ndims not in (None, 0):
        raise ctx.fail(f"Shape must be rank 0 but is rank {ctx.input_shape(1).ndims}")
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2])]


def _substr_shape(ctx):
    pos, length = ctx.input_shape(1), ctx.input_shape(2)
    if not pos.is_compatible_with(length):
        raise ctx.fail(f"Shapes must be equal rank, but are {pos} and {length}")
    try:
        return broadcast_shapes(ctx.input_shape(0), pos)
    except ValueError:
        raise ctx.fail(f"Incompatible shapes: {ctx.input_shape(0)} vs. {pos}") from None


def _regex_shape(ctx):
    for i in range(1, ctx.num_inputs):
        if ctx.input_shape(i).ndims not in (None, 0):
            raise ctx.fail(f"Shape must be rank 0 but is rank {ctx.input_shape(i).ndims}")
    return ctx.input_shape(0)


def _reduce_join_shape(ctx):
    dims = ctx.input_dims(0)
    axes = ctx.constant_value(1)
    if dims is None:
        return TensorShape(None)
    if axes is None:
        return TensorShape(None if not ctx.attr("keep_dims") else [None] * len(dims))
    rank = len(dims)
    picked = set()
    for a in [int(v) for v in (axes.reshape(-1) if hasattr(axes, "reshape") else [axes])]:
        if not -rank <= a < rank:
            raise ctx.fail(f"Invalid reduction dimension {a} for input with {rank} "
                           f"dimensions.")
        picked.add(a % rank)
    if ctx.attr("keep_dims"):
        return TensorShape([1 if i in picked else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in picked])


register_op("StringSplit", inputs=["input: string", "delimiter: string"],
            outputs=["indices: int64", "values: string", "shape: int64"],
            attrs=["skip_empty: bool = true"], shape_fn=_split_shape)
register_op("StringSplitV2", inputs=["input: string", "sep: string"],
            outputs=["indices: int64", "values: string", "shape: int64"],
            attrs=["maxsplit: int = -1"], shape_fn=_split_shape)
register_op("Substr", inputs=["input: string", "pos: T", "len: T"], outputs=["output: string"],
            attrs=["T: {int32, int64}", _UNIT], shape_fn=_substr_shape)
register_op("RegexReplace", inputs=["input: string", "pattern: string", "rewrite: string"],
            outputs=["output: string"], attrs=["replace_global: bool = true"],
            shape_fn=_regex_shape)
register_op("StaticRegexReplace", inputs=["input: string"], outputs=["output: string"],
            attrs=["pattern: string", "rewrite: string", "replace_global: bool = true"],
            shape_fn=unchanged)
register_op("RegexFullMatch", inputs=["input: string", "pattern: string"],
            outputs=["output: bool"], shape_fn=_regex_shape)
register_op("StaticRegexFullMatch", inputs=["input: string"], outputs=["output: bool"],
            attrs=["pattern: string"], shape_fn=unchanged)
register_op("ReduceJoin", inputs=["inputs: string", "reduction_indices: int32"],
            outputs=["output: string"],
            attrs=["keep_dims: bool = false", "separator: string = ''"],
            shape_fn=_reduce_join_shape)
register_op("AsString", inputs=["input: T"], outputs=["output: string"],
            attrs=["T: {realnumbertype, complex64, complex128, bool, string}",
                   "precision: int = -1", "scientific: bool = false",
                   "shortest: bool = false", "width: int = -1", "fill: string = ''"],
            shape_fn=unchanged)
register_op("StringLength", inputs=["input: string"], outputs=["output: int32"],
            attrs=[_UNIT], shape_fn=unchanged)
register_op("StringStrip", inputs=["input: string"], outputs=["output: string"],
            shape_fn=unchanged)
for _name in ("StringUpper", "StringLower"):
    register_op(_name, inputs=["input: string"], outputs=["output: string"],
                attrs=["encoding: string = ''"], shape_fn=unchanged)


# -- Python API --------------------------------------------------------------------------------
def _strings(x, name="input"):
    return convert_to_tensor(x, dtype=dtypes.string, name=name)


def string_split(source, delimiter=" ", skip_empty=True, name=None, sep=None,
                 result_type="SparseTensor"):
    """TF1 `tf.string_split`: splits each string of the vector `source` at any character of
    `delimiter` (empty: into characters) into a SparseTensor [len(source), max tokens]
    (or a RaggedTensor, `result_type="RaggedTensor"`); empty tokens are dropped when
    `skip_empty`."""
    delimiter = delimiter if sep is None else sep
    indices, values, shape = apply_op("StringSplit", _strings(source, "source"),
                                      _strings(delimiter, "delimiter"), skip_empty=skip_empty,
                                      name=name)
    return _result(SparseTensor(indices, values, shape), result_type)


def string_split_v2(source, sep=None, maxsplit=-1, name=None):
    """`tf.strings.split` (TF1.13+, SparseTensor result): splits at the whole `sep` string
    (None: runs of whitespace, dropping empty tokens), at most `maxsplit` times."""
    indices, values, shape = apply_op("StringSplitV2", _strings(source),
                                      _strings("" if sep is None else sep, "sep"),
                                      maxsplit=maxsplit, name=name)
    return SparseTensor(indices, values, shape)


def strings_split(input=None, sep=None, maxsplit=-1, result_type="SparseTensor",  # noqa: A002
                  source=None, name=None):
    """TF1 `tf.strings.split`: a SparseTensor, or with `result_type="RaggedTensor"` a
    RaggedTensor of each string's tokens.

    Raises:
      ValueError: another `result_type`.
    """
    sparse = string_split_v2(input if source is None else source, sep, maxsplit, name)
    return _result(sparse, result_type)


def _result(sparse, result_type):
    if result_type == "SparseTensor":
        return sparse
    if result_type != "RaggedTensor":
        raise ValueError(f"result_type must be 'RaggedTensor' or 'SparseTensor', got "
                         f"{result_type!r}")
    from tensorweave.ops.ragged_tensor import RaggedTensor

    return RaggedTensor.from_value_rowids(sparse.values, sparse.indices[:, 0],
                                          sparse.dense_shape[0], validate=False)


def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002 - TF's names
    """The substrings input[pos:pos + len] (broadcasting; negative pos counts from the end)."""
    return apply_op("Substr", _strings(input), pos, len, unit=unit, name=name)


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """Replaces matches of `pattern` by `rewrite` (`\\1` a group); only the first match when
    not `replace_global`. Static pattern and rewrite build StaticRegexReplace, as TF."""
    if isinstance(pattern, (str, bytes)) and isinstance(rewrite, (str, bytes)):
        return apply_op("StaticRegexReplace", _strings(input), pattern=_text(pattern),
                        rewrite=_text(rewrite), replace_global=replace_global, name=name)
    return apply_op("RegexReplace", _strings(input), _strings(pattern, "pattern"),
                    _strings(rewrite, "rewrite"), replace_global=replace_global, name=name)


def regex_full_match(input, pattern, name=None):  # noqa: A002
    """Whether each string matches `pattern` entirely."""
    if isinstance(pattern, (str, bytes)):
        return apply_op("StaticRegexFullMatch", _strings(input), pattern=_text(pattern),
                        name=name)
    return apply_op("RegexFullMatch", _strings(input), _strings(pattern, "pattern"),
                    name=name)


def _text(s) -> str:
    return s.decode("utf-8") if isinstance(s, bytes) else s


def reduce_join(inputs, axis=None, keep_dims=False, separator="", name=None,
                reduction_indices=None, keepdims=None):
    """Joins strings along `axis` (None: all, in row-major order) with `separator`."""
    keep_dims = keep_dims if keepdims is None else keepdims
    axis = reduction_indices if axis is None else axis
    inputs = _strings(inputs, "inputs")
    if axis is None:
        rank = inputs.shape.ndims
        axis = (list(range(rank - 1, -1, -1)) if rank is not None else
                apply_op("Range", apply_op("Rank", inputs) - 1, -1, -1))
    elif isinstance(axis, int):
        axis = [axis]
    return apply_op("ReduceJoin", inputs, convert_to_tensor(axis, dtype=dtypes.int32),
                    keep_dims=keep_dims, separator=separator, name=name)


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1,  # noqa: A002
              fill="", name=None):
    """Numbers (and bools) as strings, printf-style: %d, %f (precision), %e (scientific),
    %g (shortest), padded to `width` with `fill`."""
    return apply_op("AsString", input, precision=precision, scientific=scientific,
                    shortest=shortest, width=width, fill=fill, name=name)


def string_length(input, name=None, unit="BYTE"):  # noqa: A002
    """Each string's length in bytes, or in UTF-8 characters."""
    return apply_op("StringLength", _strings(input), unit=unit, name=name)


def string_strip(input, name=None):  # noqa: A002
    """Each string without leading and trailing whitespace."""
    return apply_op("StringStrip", _strings(input), name=name)


def string_upper(input, encoding="", name=None):  # noqa: A002
    return apply_op("StringUpper", _strings(input), encoding=encoding, name=name)


def string_lower(input, encoding="", name=None):  # noqa: A002
    return apply_op("StringLower", _strings(input), encoding=encoding, name=name)


__all__ = ["string_split", "substr", "regex_replace", "reduce_join", "as_string"]
