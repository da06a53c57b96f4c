"""Placement: give every node a concrete device.

A node's requested device (a possibly partial spec) must match one of the session's devices;
unconstrained nodes go to the first device. With `allow_soft_placement`, a request that
matches nothing falls back to the first device instead of failing.
"""

from __future__ import annotations

from tensorweave import errors, ir
from tensorweave.runtime.device import DeviceSpec


def place(nodes: list[ir.NodeDef], devices: list[str], allow_soft: bool = False,
          placed: dict[str, str] | None = None) -> dict[str, str]:
    """Returns {node name: device name} for `nodes`; entries in `placed` are kept (sticky).

    Raises:
      InvalidArgumentError: a requested device matches none of `devices` (listed).
    """
    out = dict(placed or {})
    specs = [DeviceSpec.from_string(d) for d in devices]
    for n in nodes:
        if n.name in out:
            continue
        out[n.name] = _choose(n, devices, specs, allow_soft)
    return out


def _choose(node: ir.NodeDef, devices, specs, allow_soft) -> str:
    if not node.device:
        return devices[0]
    want = DeviceSpec.from_string(node.device)
    for name, spec in zip(devices, specs):
        if want.matches(spec):
            return name
    if allow_soft:
        return devices[0]
    raise errors.InvalidArgumentError(
        node, None,
        f"Cannot assign a device for operation {node.name}: {node.op} was explicitly assigned "
        f"to {node.device} but available devices are [ {', '.join(devices)} ]. Make sure the "
        "device specification refers to a valid device.")
