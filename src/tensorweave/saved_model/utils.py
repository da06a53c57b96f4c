"""`tf.saved_model.utils`: TensorInfo from a Tensor (or SparseTensor) and back."""

from __future__ import annotations

from tensorweave.framework.graph import get_default_graph
from tensorweave.ops.sparse_tensor import SparseTensor
from tensorweave.proto import convert, meta_graph_pb2
from tensorweave.training.meta_graph import prepend_name_scope


def build_tensor_info(tensor) -> meta_graph_pb2.TensorInfo:
    """The TensorInfo (name, dtype, static shape) of a Tensor or a SparseTensor (COO)."""
    info = meta_graph_pb2.TensorInfo(dtype=tensor.dtype.as_datatype_enum)
    if isinstance(tensor, SparseTensor):
        info.coo_sparse.values_tensor_name = tensor.values.name
        info.coo_sparse.indices_tensor_name = tensor.indices.name
        info.coo_sparse.dense_shape_tensor_name = tensor.dense_shape.name
    else:
        info.name = tensor.name
    info.tensor_shape.CopyFrom(convert.shape_to_proto(tensor.get_shape()))
    return info


def get_tensor_from_tensor_info(tensor_info, graph=None, import_scope=None):
    """The Tensor (or SparseTensor) a TensorInfo names, in `graph` (default graph).

    Raises:
      KeyError: the named tensor is not in the graph.
      ValueError: the TensorInfo names nothing.
    """
    graph = graph or get_default_graph()

    def get(name):
        return graph.get_tensor_by_name(prepend_name_scope(name, import_scope))

    kind = tensor_info.WhichOneof("encoding")
    if kind == "name":
        return get(tensor_info.name)
    if kind == "coo_sparse":
        coo = tensor_info.coo_sparse
        return SparseTensor(get(coo.indices_tensor_name), get(coo.values_tensor_name),
                            get(coo.dense_shape_tensor_name))
    raise ValueError(f"Invalid TensorInfo.encoding: {kind}")


__all__ = ["build_tensor_info", "get_tensor_from_tensor_info"]
