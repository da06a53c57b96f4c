"""`tf.data.Iterator` (graph mode): an iterator resource op plus `get_next`.

`make_one_shot_iterator(ds)` initializes itself the first time `get_next` runs;
`make_initializable_iterator(ds)` has an `initializer` to run first (and to rerun with new
feeds: the dataset's inputs, e.g. placeholders, are read when the initializer runs);
`Iterator.from_structure` is reusable across datasets of one structure (`make_initializer`).
"""

from __future__ import annotations

from tensorweave.data import structure as nest
from tensorweave.ops import dataset_ops  # noqa: F401 - registers the ops
from tensorweave.ops.apply import apply_op


class Iterator:
    """An iterator over the elements of datasets of one structure."""

    def __init__(self, resource, initializer, structure):
        self._resource = resource
        self._initializer = initializer
        self._structure = structure

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    @property
    def output_types(self):
        return nest.map_structure(lambda s: s.dtype, self._structure)

    @property
    def output_shapes(self):
        return nest.map_structure(lambda s: s.shape, self._structure)

    def _flat_attrs(self) -> dict:
        flat = nest.flatten(self._structure)
        return {"output_types": [s.dtype for s in flat],
                "output_shapes": [s.shape for s in flat]}

    def get_next(self, name=None):
        """The next element's tensors, in the dataset's structure. Running them past the end
        raises OutOfRangeError ("End of sequence")."""
        out = apply_op("IteratorGetNext", self._resource, name=name, **self._flat_attrs())
        flat = out if isinstance(out, list) else [out]
        if len(flat) == 1 and isinstance(flat[0], list):
            flat = flat[0]
        return nest.pack(self._structure, flat)

    def make_initializer(self, dataset, name=None):
        """An op that (re)starts this iterator on `dataset` (same structure required)."""
        want, got = nest.flatten(self._structure), nest.flatten(dataset._structure)
        if [s.dtype for s in got] != [s.dtype for s in want]:
            raise TypeError(f"Expected output types {self.output_types} but got dataset with "
                            f"output types {dataset.output_types}.")
        if not all(w.shape.is_compatible_with(g.shape) for w, g in zip(want, got)):
            raise TypeError(f"Expected output shapes compatible with {self.output_shapes} but "
                            f"got dataset with output shapes {dataset.output_shapes}.")
        return apply_op("MakeIterator", dataset._variant_tensor, self._resource, name=name)

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None,
                       output_classes=None):
        """An uninitialized iterator for datasets with this structure."""
        structure = nest.specs_from(output_types, output_shapes)
        res = _iterator_resource(structure, shared_name)
        return Iterator(res, None, structure)


def _iterator_resource(structure, shared_name):
    flat = nest.flatten(structure)
    return apply_op("IteratorV2", shared_name=shared_name or "", container="",
                    output_types=[s.dtype for s in flat],
                    output_shapes=[s.shape for s in flat], name="Iterator")


def make_one_shot_iterator(dataset) -> Iterator:
    """An iterator that starts on its first `get_next` (no initializer to run)."""
    flat = nest.flatten(dataset._structure)
    res = apply_op("_OneShotIterator", dataset._variant_tensor,
                   output_types=[s.dtype for s in flat],
                   output_shapes=[s.shape for s in flat], name="OneShotIterator")
    return Iterator(res, None, dataset._structure)


def make_initializable_iterator(dataset, shared_name=None) -> Iterator:
    """An iterator whose `initializer` op (re)starts it on `dataset`."""
    res = _iterator_resource(dataset._structure, shared_name)
    it = Iterator(res, None, dataset._structure)
    it._initializer = it.make_initializer(dataset)
    return it


__all__ = ["Iterator", "make_one_shot_iterator", "make_initializable_iterator"]
