"""`tf.contrib.deprecated`: TF 0.12's summary functions, kept in TF 1.x for scripts written
before `tf.summary` (`scalar_summary`, `histogram_summary`, `image_summary`,
`merge_summary`, `merge_all_summaries`).

Unlike `tf.summary.*`, the tag is used exactly as given (a string or string tensor: spaces
and all, no name-scope prefix, no cleaning), and `name` only names the op (default scopes
`ScalarSummary`, `HistogramSummary`, `ImageSummary`, `MergeSummary`), as TF 1.15's
logging_ops does. `scalar_summary` takes a tags tensor of the values' shape.
"""

from __future__ import annotations

from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.scopes import name_scope
from tensorweave.ops.apply import apply_op


def _collect(val, collections, default_collections) -> None:
    for key in default_collections if collections is None else collections:
        val.graph.add_to_collection(key, val)


def scalar_summary(tags, values, collections=None, name=None):
    """A `Summary` with one `simple_value` per element of `values`, tagged by the same-shaped
    `tags`; added to `GraphKeys.SUMMARIES` (or `collections`)."""
    with name_scope(name, "ScalarSummary", [tags, values]) as scope:
        val = apply_op("ScalarSummary", tags=tags, values=values, name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def histogram_summary(tag, values, collections=None, name=None):
    """A `Summary` with a histogram of `values` under `tag` (kernel fails on NaN/inf)."""
    with name_scope(name, "HistogramSummary", [tag, values]) as scope:
        val = apply_op("HistogramSummary", tag=tag, values=values, name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def image_summary(tag, tensor, max_images=3, collections=None, name=None):
    """A `Summary` with up to `max_images` PNGs of a `[batch, h, w, c]` tensor, tagged
    `<tag>/image/<i>` (or `<tag>/image` for one), normalized as `tf.summary.image` does."""
    with name_scope(name, "ImageSummary", [tag, tensor]) as scope:
        val = apply_op("ImageSummary", tag=tag, tensor=tensor, max_images=max_images,
                       name=scope)
        _collect(val, collections, [GraphKeys.SUMMARIES])
    return val


def merge_summary(inputs, collections=None, name=None):
    """Merges serialized `Summary` tensors (op `MergeSummary`); a tag seen twice fails at
    run time with InvalidArgumentError."""
    inputs = list(inputs)
    with name_scope(name, "MergeSummary", inputs):
        val = apply_op("MergeSummary", inputs=inputs, name=name)
        _collect(val, collections, [])
    return val


def merge_all_summaries(key=GraphKeys.SUMMARIES):
    """`merge_summary` of every summary in collection `key`, or None when there is none."""
    summary_ops = get_default_graph().get_collection(key)
    if not summary_ops:
        return None
    return merge_summary(summary_ops)


__all__ = ["scalar_summary", "histogram_summary", "image_summary", "merge_summary",
           "merge_all_summaries"]
