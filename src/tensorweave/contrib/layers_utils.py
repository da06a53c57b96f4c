"""`slim.utils` (TF 1.15's contrib/layers utils.py): tensor aliases and end-point
collections. A layer called with `outputs_collections` adds its output there under an alias
(its scope name, without the trailing '/'); `convert_collection_to_dict` turns such a
collection into {alias: tensor}, the `end_points` of slim's nets.

NOTE: TF stores aliases on the Tensor object; our Tensor has fixed slots, so the aliases
live here, per graph (weakly), keyed by tensor name.
"""

from __future__ import annotations

import collections
import weakref

from tensorweave.framework.graph import add_to_collections, get_collection

_ALIASES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def append_tensor_alias(tensor, alias):
    """Records `alias` (trailing '/' removed) for `tensor`; returns the tensor."""
    if alias.endswith("/"):
        alias = alias[:-1]
    _ALIASES.setdefault(tensor.graph, {}).setdefault(tensor.name, []).append(alias)
    return tensor


def get_tensor_aliases(tensor) -> list:
    """The recorded aliases, else the tensor's name without ':0'."""
    found = _ALIASES.get(tensor.graph, {}).get(tensor.name)
    if found:
        return list(found)
    return [tensor.name[:-2] if tensor.name.endswith(":0") else tensor.name]


def collect_named_outputs(collections_, alias, outputs):
    """Adds `outputs` (aliased `alias`) to `collections_`; returns `outputs`."""
    if collections_:
        append_tensor_alias(outputs, alias)
        add_to_collections(collections_, outputs)
    return outputs


def convert_collection_to_dict(collection, clear_collection=False):
    """{alias: tensor} over a collection's tensors, in collection order."""
    from tensorweave.framework.graph import get_default_graph

    out = collections.OrderedDict(
        (alias, tensor) for tensor in get_collection(collection)
        for alias in get_tensor_aliases(tensor))
    if clear_collection:
        get_default_graph().clear_collection(collection)
    return out


def last_dimension(shape, min_rank=1):
    """The static last dimension of `shape`.

    Raises:
      ValueError: unknown rank, rank below `min_rank`, or an unknown last dimension.
    """
    from tensorweave.shapes import TensorShape

    dims = TensorShape(shape).dims
    if dims is None:
        raise ValueError("dims of shape must be known but is None")
    if len(dims) < min_rank:
        raise ValueError(f"rank of shape must be at least {min_rank} not: {len(dims)}")
    value = dims[-1]
    value = getattr(value, "value", value)
    if value is None:
        raise ValueError("last dimension shape must be known but is None")
    return value
