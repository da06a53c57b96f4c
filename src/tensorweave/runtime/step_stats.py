"""Step statistics: the plain data the workers collect, as TF's RunMetadata protos."""

from __future__ import annotations

import numpy as np

from tensorweave import dtypes


def fill_run_metadata(run_metadata, meta: dict) -> None:
    """Merges `meta` ({"step_stats": [...], "partition_graphs": [...]}) into a RunMetadata."""
    for dev in meta.get("step_stats", []):
        _add_device_stats(run_metadata.step_stats.dev_stats.add(), dev)
    if meta.get("partition_graphs"):
        from tensorweave.proto.convert import graph_to_proto

        for g in meta["partition_graphs"]:
            run_metadata.partition_graphs.add().CopyFrom(graph_to_proto(g))


def _add_device_stats(ds, dev: dict) -> None:
    ds.device = dev["device"]
    for n in dev["node_stats"]:
        ns = ds.node_stats.add()
        ns.node_name = n["node_name"]
        ns.all_start_micros = n["all_start_micros"]
        ns.op_start_rel_micros = n["op_start_rel_micros"]
        ns.op_end_rel_micros = n["op_end_rel_micros"]
        ns.all_end_rel_micros = n["all_end_rel_micros"]
        ns.timeline_label = n["timeline_label"]
        ns.thread_id = n["thread_id"]
        for slot, out in enumerate(n["output"]):
            _add_output(ns.output.add(), slot, out)


def _add_output(o, slot: int, out: dict) -> None:
    o.slot = slot
    td = o.tensor_description
    if out.get("dtype") is not None:   # NOTE: a RecvTensor record has bytes only, as TF's
        try:
            td.dtype = dtypes.as_dtype(np.dtype(out["dtype"])).as_datatype_enum
        except TypeError:
            pass
    for d in out["shape"]:
        td.shape.dim.add().size = d
    td.allocation_description.requested_bytes = out["bytes"]
    td.allocation_description.allocated_bytes = out["bytes"]
    td.allocation_description.allocator_name = "cpu"
