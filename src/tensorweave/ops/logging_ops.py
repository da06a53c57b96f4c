"""`tf.print` (TF's logging_ops.print_v2): StringFormat and PrintV2.

    StringFormat(inputs; template, placeholder, summarize) -> string
        the template with each placeholder replaced by the next input, summarized as numpy
        does ("[0 1 ... 8 9]": the first and last `summarize` entries of each dimension;
        -1 shows everything)
    PrintV2(input; output_stream, end)
        writes the string and `end` to "stderr", "stdout", "log(info|warning|error)", or
        appends to "file://<path>"

In a graph, `tf.print` returns the PrintV2 op: run it, or make something depend on it.
Kernels: `runtime/kernels/cpu/logging.py`.
"""

from __future__ import annotations

import sys

from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import register_op
from tensorweave.ops.sparse_tensor import SparseTensor
from tensorweave.shapes import TensorShape

register_op("StringFormat", inputs=["inputs: T"], outputs=["output: string"],
            attrs=["T: list(type) >= 0", "template: string = '%s'",
                   "placeholder: string = '%s'", "summarize: int = 3"],
            shape_fn=lambda ctx: TensorShape([]))
register_op("PrintV2", inputs=["input: string"],
            attrs=["output_stream: string = 'stderr'", "end: string = '\\n'"],
            shape_fn=lambda ctx: [], stateful=True)

_LOG_STREAMS = {"info": "log(info)", "warning": "log(warning)", "warn": "log(warning)",
                "error": "log(error)"}


def _stream_name(output_stream) -> str:
    if output_stream is sys.stdout or output_stream == "stdout":
        return "stdout"
    if output_stream is sys.stderr or output_stream == "stderr":
        return "stderr"
    if isinstance(output_stream, str) and (output_stream.startswith("file://")
                                           or output_stream.startswith("log(")):
        return output_stream
    fn = getattr(output_stream, "__name__", "")
    if callable(output_stream) and fn in _LOG_STREAMS:
        return _LOG_STREAMS[fn]
    raise ValueError(f"Unsupported output stream, logging level, or file. {output_stream}. "
                     f"Supported streams are sys.stdout, sys.stderr, tf.logging.info, "
                     f"tf.logging.warning, tf.logging.error, and 'file://<path>'.")


def _placeholder(parts) -> str:
    """"{}" unless a literal part contains it; then "{1}", "{2}", ... (TF's choice)."""
    placeholder, i = "{}", 0
    while any(isinstance(p, str) and placeholder in p for p in parts):
        i += 1
        placeholder = "{" + str(i) + "}"
    return placeholder


def _is_string_scalar(inputs) -> bool:
    from tensorweave import dtypes

    return (len(inputs) == 1 and isinstance(inputs[0], Tensor)
            and inputs[0].dtype.base_dtype == dtypes.string and inputs[0].shape.ndims == 0)


def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    """`template` with each `placeholder` replaced by the next tensor of `inputs`."""
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if template.count(placeholder) != len(inputs):
        raise ValueError(f"{len(inputs)} tensors were passed in, but the template has "
                         f"{template.count(placeholder)} placeholders.")
    return apply_op("StringFormat", inputs, template=template, placeholder=placeholder,
                    summarize=summarize, name=name)


def print_v2(*inputs, **kwargs):
    """TF2 `tf.print`: prints `inputs` (tensors summarized, other values as str) joined by
    `sep` and followed by `end` to `output_stream`; returns the PrintV2 op.

    Keyword args: output_stream (sys.stderr), summarize (3), sep (" "), end ("\\n"), name.

    Raises:
      ValueError: an unsupported output stream or keyword.
    """
    output_stream = kwargs.pop("output_stream", sys.stderr)
    summarize = kwargs.pop("summarize", 3)
    sep, end, name = kwargs.pop("sep", " "), kwargs.pop("end", "\n"), kwargs.pop("name", None)
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments for tf.print: {sorted(kwargs)}")
    stream = _stream_name(output_stream)
    with name_scope(name, "PrintV2", None):
        if _is_string_scalar(inputs):  # NOTE: TF prints a lone string scalar as it is
            return apply_op("PrintV2", inputs[0], output_stream=stream, end=end)
        placeholder = _placeholder(inputs)
        parts, tensors = [], []
        for x in inputs:
            if isinstance(x, SparseTensor):
                parts.append(f"'SparseTensor(indices={placeholder}, values={placeholder}, "
                             f"shape={placeholder})'")
                tensors += [x.indices, x.values, x.dense_shape]
            elif isinstance(x, Tensor) or hasattr(x, "_as_graph_element"):
                parts.append(placeholder)
                tensors.append(x)
            else:
                parts.append(str(x))
        formatted = string_format(sep.join(parts), tensors, placeholder, summarize)
        return apply_op("PrintV2", formatted, output_stream=stream, end=end)


__all__: list[str] = []  # NOTE: exported as tf.print / tf.strings.format by the namespaces
