"""Partition: split a placed graph into one graph per device, joined by `_Send`/`_Recv`.

For every data edge whose ends sit on different devices, the source device gets a `_Send`
and the destination a `_Recv` (one recv per (tensor, destination device), shared by all
consumers there, except for refs: below); the rendezvous name of the tensor is
`edge_<id>_<src node>`, as TF names it. A control edge across devices becomes a dummy
constant on the source side (depending on the source) sent to a `_Recv` the destination
depends on. Ref-typed outputs are sent as their value (the `_Send` input is not a ref).

Reads of a ref across devices are ordered as TF orders them (graph_partition.cc,
`AddReadControl`): a ref-typed edge gets its own `_Recv` (never shared), and that recv depends
on every other input of the consumer: same-partition data and control inputs by name, inputs
from other partitions through their recvs. So in `with control_dependencies([assign_add(v, 1)]):
identity(v.read_value())` with `v` on another device (the `read` Identity is placed beside the
consumer, its input is the ref), the value is fetched only after the update ran; the sent
tensor aliases the variable's buffer until the transfer, so the receiver sees the update. (A
plain `identity(v)` reads through `v/read`, colocated with `v`: a non-ref edge, not ordered,
as in TF, which also returns the value from before the update there.) No cycle or deadlock
follows: the consumer already waited for all of those inputs, and the recv feeds only the
consumer.
"""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes, errors, ir
from tensorweave.master.prune import output_dtypes


def partition(graph: ir.GraphDef, placement: dict[str, str],
              incarnations: dict[str, int] | None = None) -> dict[str, ir.GraphDef]:
    """Returns {device: partition graph}. Pure: `graph` is not modified.

    Raises:
      KeyError: a node has no placement (an internal error: place before partitioning).
      InvalidArgumentError: an input names a node not in the graph (as the worker's plan
        would say of a graph run on one device).
    """
    incarnations = incarnations or {}
    parts: dict[str, list[ir.NodeDef]] = {}
    copies = {n.name: n.copy() for n in graph.nodes}
    for n in graph.nodes:
        parts.setdefault(placement[n.name], []).append(copies[n.name])
        copies[n.name].device = placement[n.name]
    state = _State(placement, incarnations, parts, copies)
    for n in graph.nodes:
        copies[n.name].inputs = state.rewire_all(n)
    return {dev: ir.GraphDef(nodes=nodes, library=graph.library) for dev, nodes in parts.items()}


_REF_RECV, _SAME_DEVICE_REF, _OTHER = "ref recv", "same-device ref", "other"


class _State:
    def __init__(self, placement, incarnations, parts, copies):
        self.placement = placement
        self.incarnations = incarnations
        self.parts = parts
        self.copies = copies
        self.recvs: dict[tuple[str, str], str] = {}   # (tensor or ^node, dst device) → recv
        self.recv_nodes: dict[str, ir.NodeDef] = {}
        self.edge_id = 0

    def rewire_all(self, dst: ir.NodeDef) -> list[str]:
        """`dst`'s inputs in its partition; the recvs of its ref inputs wait for the others."""
        inputs: list[str] = []
        ref_recvs: list[str] = []
        others: list[str] = []
        for inp in dst.inputs:
            new, role = self.rewire(dst, inp)
            inputs.append(new)
            if role != _SAME_DEVICE_REF:  # NOTE: TF neither orders by nor orders those
                (ref_recvs if role == _REF_RECV else others).append(ir.parse_input(new)[0])
        for recv in ref_recvs:
            node = self.recv_nodes[recv]
            node.inputs = list(dict.fromkeys(node.inputs + [f"^{o}" for o in others]))
        return inputs

    def rewire(self, dst: ir.NodeDef, inp: str) -> tuple[str, str]:
        """(the input in `dst`'s partition, its role: `_REF_RECV`, `_SAME_DEVICE_REF` or
        `_OTHER`)."""
        src, slot, ctl = ir.parse_input(inp)
        if src not in self.copies:
            raise errors.InvalidArgumentError(
                dst, None, f"Node '{dst.name}': input '{inp}' refers to a node not in the graph")
        is_ref = not ctl and output_dtypes(self.copies[src])[slot].is_ref_dtype
        src_dev, dst_dev = self.placement[src], self.placement[dst.name]
        if src_dev == dst_dev:
            return inp, (_SAME_DEVICE_REF if is_ref else _OTHER)
        if is_ref:  # NOTE: never shared: its recv waits for this consumer's other inputs
            return self._add_pair(src, slot, ctl, src_dev, dst_dev), _REF_RECV
        key = (f"^{src}" if ctl else ir.tensor_name(src, slot), dst_dev)
        recv = self.recvs.get(key)
        if recv is None:
            recv = self.recvs[key] = self._add_pair(src, slot, ctl, src_dev, dst_dev)
        return (f"^{recv}" if ctl else recv), _OTHER

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
        self.recv_nodes[recv.name] = recv
        return recv.name
