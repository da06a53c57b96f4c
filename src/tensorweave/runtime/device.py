"""A worker's devices: their names, types and resource containers.

Device names are parsed and merged by `framework/device_spec.py` (re-exported here).
"""

from __future__ import annotations

from tensorweave.framework.device_spec import DeviceSpec, canonical, merge  # noqa: F401


class Device:
    """A concrete device of a worker: its full name, type and resource container."""

    def __init__(self, name: str, incarnation: int = 1):
        from tensorweave.runtime.resources import ResourceMgr

        self.spec = DeviceSpec.from_string(name)
        self.name = self.spec.to_string()
        self.device_type = self.spec.device_type or "CPU"
        self.incarnation = incarnation
        self.resources = ResourceMgr()

    def attributes(self) -> dict:
        """Plain data in the shape of TF's DeviceAttributes."""
        return {"name": self.name, "device_type": self.device_type,
                "memory_limit": 0, "incarnation": self.incarnation}

    def __repr__(self) -> str:
        return f"<Device {self.name}>"


def local_device_names(job: str = "localhost", task: int = 0, cpus: int = 1) -> list[str]:
    """This process's devices: `cpus` CPUs, then the XLA devices where jax is installed."""
    from tensorweave.runtime.kernels.xla.backend import device_names

    cpu = [f"/job:{job}/replica:0/task:{task}/device:CPU:{i}" for i in range(cpus)]
    return cpu + device_names(job, task)
