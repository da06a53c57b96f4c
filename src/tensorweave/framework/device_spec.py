"""Device names: parsing, merging and printing as TensorFlow does.

`/job:localhost/replica:0/task:0/device:CPU:0`, the legacy `/cpu:0`, and partial specs such as
`/device:CPU:*` or `/job:ps`. A partial spec merges over another field by field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

_PART = re.compile(r"^(job|replica|task|device|cpu|gpu|CPU|GPU)(?::(.*))?$")


@dataclass(frozen=True)
class DeviceSpec:
    """A (possibly partial) device name. Unset fields are None; `device_index` None means `*`."""

    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None

    @staticmethod
    def from_string(spec: str) -> DeviceSpec:
        """Parses `spec`. Raises ValueError on a malformed name."""
        if spec is None or spec == "":
            return DeviceSpec()
        if isinstance(spec, DeviceSpec):
            return spec
        fields: dict = {}
        for part in [p for p in spec.strip().split("/") if p]:
            _parse_part(part, fields, spec)
        return DeviceSpec(**fields)

    def merge_from(self, other: DeviceSpec) -> DeviceSpec:
        """Fields set in `other` override ours (TF's `DeviceSpec.merge_from`)."""
        upd = {k: v for k, v in other.__dict__.items() if v is not None}
        if "device_type" in upd and other.device_index is None:
            upd["device_index"] = None
        return replace(self, **upd)

    def to_string(self) -> str:
        out = []
        if self.job is not None:
            out.append(f"/job:{self.job}")
        if self.replica is not None:
            out.append(f"/replica:{self.replica}")
        if self.task is not None:
            out.append(f"/task:{self.task}")
        if self.device_type is not None:
            idx = "*" if self.device_index is None else str(self.device_index)
            out.append(f"/device:{self.device_type}:{idx}")
        return "".join(out)

    def __str__(self) -> str:
        return self.to_string()

    def is_fully_specified(self) -> bool:
        return None not in (self.job, self.replica, self.task, self.device_type,
                            self.device_index)

    def matches(self, full: DeviceSpec) -> bool:
        """Whether the concrete device `full` satisfies this (partial) spec."""
        for k, v in self.__dict__.items():
            if v is not None and getattr(full, k) != v:
                if k == "device_type" and str(v).upper() == str(getattr(full, k)).upper():
                    continue
                return False
        return True


def _parse_part(part: str, fields: dict, spec: str) -> None:
    m = _PART.match(part)
    if not m:
        raise ValueError(f"Unknown attribute: '{part}' in '{spec}'")
    key, val = m.group(1), m.group(2)
    if key in ("cpu", "gpu", "CPU", "GPU"):
        fields["device_type"] = key.upper()
        fields["device_index"] = None if val in (None, "*") else int(val)
    elif key == "device":
        dtype, _, idx = (val or "").partition(":")
        fields["device_type"] = dtype.upper() if dtype.lower() in ("cpu", "gpu") else dtype
        fields["device_index"] = None if idx in ("", "*") else int(idx)
    elif key == "job":
        fields["job"] = val
    else:
        fields[key] = None if val in (None, "*") else int(val)


def canonical(spec: str) -> str:
    """`/cpu:0` → `/device:CPU:0`; empty stays empty."""
    return DeviceSpec.from_string(spec).to_string() if spec else ""


def merge(outer: str, inner: str) -> str:
    """The device string for a scope `inner` nested in scope `outer`."""
    if not outer:
        return canonical(inner)
    return DeviceSpec.from_string(outer).merge_from(DeviceSpec.from_string(inner)).to_string()


__all__ = ["DeviceSpec", "canonical", "merge"]
