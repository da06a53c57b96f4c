"""Saveable objects: state other than a variable that a `tf.train.Saver` checkpoints (TF's
`BaseSaverBuilder.SaveableObject` / `SaveSpec`), such as a mutable lookup table.

A SaveableObject names the tensors to write (`specs`: tensor, slice spec, checkpoint key)
and how to put restored values back (`restore(restored_tensors, restored_shapes)` returns an
op). Put one in `GraphKeys.SAVEABLE_OBJECTS` and a default Saver takes it, or pass it in a
Saver's `var_list`.
"""

from __future__ import annotations


class SaveSpec:
    """One tensor a saveable writes: `tensor` under checkpoint key `name`, `slice_spec` ""
    for a whole tensor. `tensor` may be a callable giving the tensor (built on demand)."""

    def __init__(self, tensor, slice_spec: str, name: str, dtype=None, device=None):
        self._tensor = tensor
        self.slice_spec = slice_spec
        self.name = name
        if callable(tensor):
            if dtype is None or device is None:
                raise AssertionError("When passing a callable `tensor` to a SaveSpec, an "
                                     "explicit dtype and device must be provided.")
            self.dtype, self.device = dtype, device
        else:
            self.dtype, self.device = tensor.dtype.base_dtype, tensor.device

    @property
    def tensor(self):
        return self._tensor() if callable(self._tensor) else self._tensor


class SaveableObject:
    """State with `specs` to save under `name` (keys are the specs' names); subclasses
    implement `restore`."""

    def __init__(self, op, specs, name: str):
        self.op = op
        self.specs = list(specs)
        self.name = name

    @property
    def device(self) -> str:
        return self.specs[0].device

    def restore(self, restored_tensors, restored_shapes):
        """The op that puts `restored_tensors` (one per spec, in order) back."""
        raise NotImplementedError(f"{type(self).__name__} does not say how to restore itself")


__all__ = ["SaveSpec", "SaveableObject"]
