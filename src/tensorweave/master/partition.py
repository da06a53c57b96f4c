"""Partition: split a placed graph into one graph per device, joined by `_Send`/`_Recv`.

For every data edge whose ends sit on different devices, the source device gets a `_Send`
and the destination a `_Recv` (one recv per (tensor, destination device), shared by all
consumers there); the rendezvous name of the tensor is `edge_<id>_<src node>`, as TF names
it. A control edge across devices becomes a dummy constant on the source side (depending on
the source) sent to a `_Recv` the destination depends on. Ref-typed outputs are sent as
their value (the `_Send` input is not a ref).
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes, ir
from tensorweave.master.prune import output_dtypes


def partition(graph: ir.GraphDef, placement: dict[str, str],
              incarnations: dict[str, int] | None = None) -> dict[str, ir.GraphDef]:
    """Returns {device: partition graph}. Pure: `graph` is not modified.

    Raises:
      KeyError: a node has no placement (an internal error: place before partitioning).
    """
    incarnations = incarnations or {}
    parts: dict[str, list[ir.NodeDef]] = {}
    copies = {n.name: n.copy() for n in graph.nodes}
    for n in graph.nodes:
        parts.setdefault(placement[n.name], []).append(copies[n.name])
        copies[n.name].device = placement[n.name]
    state = _State(placement, incarnations, parts, copies)
    for n in graph.nodes:
        copies[n.name].inputs = [state.rewire(n, i) for i in n.inputs]
    return {dev: ir.GraphDef(nodes=nodes, library=graph.library) for dev, nodes in parts.items()}


class _State:
    def __init__(self, placement, incarnations, parts, copies):
        self.placement = placement
        self.incarnations = incarnations
        self.parts = parts
        self.copies = copies
        self.recvs: dict[tuple[str, str], str] = {}   # (tensor or ^node, dst device) → recv
        self.edge_id = 0

    def rewire(self, dst: ir.NodeDef, inp: str) -> str:
        src, slot, ctl = ir.parse_input(inp)
        src_dev, dst_dev = self.placement[src], self.placement[dst.name]
        if src_dev == dst_dev:
            return inp
        key = (f"^{src}" if ctl else ir.tensor_name(src, slot), dst_dev)
        recv = self.recvs.get(key)
        if recv is None:
            recv = self.recvs[key] = self._add_pair(src, slot, ctl, src_dev, dst_dev)
        return f"^{recv}" if ctl else recv

    def _add_pair(self, src, slot, ctl, src_dev, dst_dev) -> str:
        self.edge_id += 1
        tensor_name = f"edge_{self.edge_id}_{src}"
        if ctl:
            dummy = ir.NodeDef(f"{src}/_ctl_{self.edge_id}", "Const", [f"^{src}"], src_dev,
                               {"dtype": dtypes.float32, "value": np.float32(0)})
            self.parts[src_dev].append(dummy)
            sent, dt = dummy.name, dtypes.float32
        else:
            sent, dt = ir.tensor_name(src, slot), output_dtypes(self.copies[src])[slot].base_dtype
        common = {"tensor_name": tensor_name, "send_device": src_dev,
                  "send_device_incarnation": self.incarnations.get(src_dev, 1),
                  "recv_device": dst_dev, "client_terminated": False}
        send = ir.NodeDef(f"{src}/_send_{self.edge_id}", "_Send", [sent], src_dev,
                          dict(common, T=dt))
        recv = ir.NodeDef(f"{src}/_recv_{self.edge_id}", "_Recv", [], dst_dev,
                          dict(common, tensor_type=dt))
        self.parts[src_dev].append(send)
        self.parts[dst_dev].append(recv)
        return recv.name
