"""Summary ops (TF's logging_ops.cc schemas) and TF1's `tf.summary.*` graph API.

Each summary op outputs a string scalar: a serialized `Summary` proto, which
`FileWriter.add_summary` writes to an event file. Tags follow TF1: the summary's name, made
unique and prefixed by the enclosing name scopes (`train/loss`, `loss_1`); with a `family`
the op lives in `<scopes>/<family>/<name>` and the tag is `<family>/<scopes>/<family>/<name>`.
Summaries are added to `GraphKeys.SUMMARIES` (or `collections`), which `merge_all` merges.
"""

from __future__ import annotations

import contextlib
import logging
import re

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import common_shapes
from tensorweave.ops.apply import apply_op
from tensorweave.ops.registry import AttrSpec, register_op
from tensorweave.proto import summary_pb2

_log = logging.getLogger("tensorweave.summary")

register_op("ScalarSummary", inputs=["tags: string", "values: T"], outputs=["summary: string"],
            attrs=["T: realnumbertype"], shape_fn=common_shapes.scalar)
register_op("HistogramSummary", inputs=["tag: string", "values: T"],
            outputs=["summary: string"], attrs=["T: realnumbertype = DT_FLOAT"],
            shape_fn=common_shapes.scalar)
_IMAGE = register_op(
    "ImageSummary", inputs=["tag: string", "tensor: T"], outputs=["summary: string"],
    attrs=["max_images: int >= 1 = 3", "T: {uint8, float, half, float64} = DT_FLOAT",
           "bad_color: tensor"],
    shape_fn=common_shapes.scalar)
# NOTE: TF's default is a TensorProto text (uint8 [255, 0, 0, 255], opaque red); the spec
# parser has no tensor literals, so the default is set here.
_IMAGE.attrs["bad_color"] = AttrSpec("bad_color", "tensor",
                                     np.array([255, 0, 0, 255], dtype=np.uint8))
register_op("TensorSummaryV2",
            inputs=["tag: string", "tensor: T", "serialized_summary_metadata: string"],
            outputs=["summary: string"], attrs=["T: type"], shape_fn=common_shapes.scalar)
register_op("MergeSummary", inputs=["inputs: N * string"], outputs=["summary: string"],
            attrs=["N: int >= 1"], shape_fn=common_shapes.scalar)

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def clean_tag(name: str | None) -> str | None:
    """`name` with characters other than `[-/\\w.]` replaced by `_` and leading `/` removed
    (TF logs the change at INFO)."""
    if name is not None:
        new_name = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
        if new_name != name:
            _log.info("Summary name %s is illegal; using %s instead.", name, new_name)
            name = new_name
    return name


@contextlib.contextmanager
def summary_scope(name, family=None, default_name=None, values=None):
    """Enters the summary's name scope; yields `(tag, scope)` as TF's summary_op_util does."""
    name, family = clean_tag(name), clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with name_scope(base, default_name, values=values) as scope:
        tag = scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}"
        yield tag, scope


def _collect(val, collections, default_collections) -> None:
    for key in default_collections if collections is None else collections:
        val.graph.add_to_collection(key, val)


def scalar(name, tensor, collections=None, family=None):
    """A `Summary` with one scalar value (`simple_value`), tagged as the module docstring says.

    Args:
      name: the summary's name (becomes its tag and op name).
      tensor: a real numeric scalar.
      collections: graph collections to add the op to (default `[GraphKeys.SUMMARIES]`).
      family: optional tag prefix, shown as a tab in TensorBoard.
    Returns:
      A string scalar Tensor (the serialized `Summary`).
    Raises:
      ValueError: `tensor`'s static shape is known and not a scalar (TF fails at run time).
    """
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        _check_scalar(tag, tensor)
        val = apply_op("ScalarSummary", tags=tag, values=tensor, name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def _check_scalar(tag: str, tensor) -> None:
    is_tensor = isinstance(tensor, Tensor)
    shape = tensor.shape if is_tensor else np.shape(tensor)
    ndims = shape.ndims if is_tensor else len(shape)
    if ndims not in (None, 0):
        raise ValueError(f"tf.summary.scalar '{tag}' needs a scalar tensor, got shape "
                         f"{shape} ({getattr(tensor, 'name', 'a Python value')})")


def histogram(name, values, collections=None, family=None):
    """A `Summary` with a histogram of `values` (any shape; the kernel fails on NaN/inf)."""
    with summary_scope(name, family, values=[values]) as (tag, scope):
        val = apply_op("HistogramSummary", tag=tag, values=values, name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """A `Summary` with up to `max_outputs` PNG images of a `[batch, h, w, c]` tensor.

    `c` is 1 (gray), 3 (RGB) or 4 (RGBA). uint8 pixels are kept; float/half/double images are
    normalized one at a time as TF1's ImageSummary does (all >= 0: scaled so the maximum is
    255; otherwise scaled by 127/max|v| around 128; non-finite pixels become red). Tags are
    `<tag>/image/<i>`, or `<tag>/image` when `max_outputs` is 1.
    """
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = apply_op("ImageSummary", tag=tag, tensor=tensor, max_images=max_outputs,
                       name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def tensor_summary(name, tensor, summary_description=None, collections=None,
                   summary_metadata=None, family=None, display_name=None):
    """A `Summary` holding `tensor` as a TensorProto (op TensorSummaryV2), with metadata."""
    metadata = summary_pb2.SummaryMetadata()
    if summary_metadata is not None:
        metadata.CopyFrom(summary_metadata)
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        val = apply_op("TensorSummaryV2", tag=tag, tensor=tensor,
                       serialized_summary_metadata=metadata.SerializeToString(), name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def text(name, tensor, collections=None):
    """A text summary (TensorBoard's Text dashboard) of a string tensor of any shape.

    Raises:
      ValueError: `tensor` is not a string tensor.
    """
    tensor = convert_to_tensor(tensor)
    if tensor.dtype.base_dtype != dtypes.string:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got "
                         f"{tensor.dtype}")
    metadata = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name, tensor, summary_metadata=metadata, collections=collections)


def merge(inputs, collections=None, name=None):
    """Merges serialized `Summary` tensors into one (op `MergeSummary`, in scope `Merge`).

    At run time a tag seen twice is an InvalidArgumentError ("Duplicate tag ...").
    """
    inputs = list(inputs)
    with name_scope(name, "Merge", inputs):
        val = apply_op("MergeSummary", inputs=inputs, name=name)
        _collect(val, collections, [])
    return val


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """Merges every summary in collection `key` (optionally filtered by `scope`), or returns
    None when there is none."""
    summary_ops = get_default_graph().get_collection(key, scope=scope)
    if not summary_ops:
        return None
    return merge(summary_ops, name=name)


__all__ = ["scalar", "histogram", "image", "text", "tensor_summary", "merge", "merge_all"]
