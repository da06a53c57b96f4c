"""`map_fn`, `scan`, `foldl`, `foldr`: loops over the first dimension of tensors.

Built as in TF1: the inputs are unstacked into TensorArrays, a `while_loop` reads element i,
applies `fn` and writes the result into an accumulator TensorArray, which is stacked at the end.
"""

from __future__ import annotations

from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_util as nest
from tensorweave.ops.constant_op import constant
from tensorweave.ops.tensor_array_ops import TensorArray
from tensorweave.ops.while_loop import while_loop
from tensorweave.shapes import Dimension, TensorShape


def _flat_pack(structure):
    """(flatten, pack) functions for values shaped like `structure`."""
    if nest.is_sequence(structure):
        return nest.flatten, lambda x: nest.pack_sequence_as(structure, x)
    return (lambda x: [x]), (lambda x: x[0])


def _leading(elems_flat, what: str):
    """The static first dimension when known, else a tensor computing it."""
    shape = elems_flat[0].shape
    if shape.ndims is not None and shape.ndims < 1:
        if len(elems_flat) == 1:
            raise ValueError(f"{what} must be a 1+ dimensional Tensor, not a scalar")
        raise ValueError(f"elements in {what} must be 1+ dimensional Tensors, not scalars")
    n = shape[0].value if shape.ndims else None
    if n is not None:
        return n
    from tensorweave.ops import array_ops, slicing_ops  # noqa: F401 - Tensor.__getitem__

    return array_ops.shape(elems_flat[0])[0]


def _unstacked(elems_flat, n, element_shape: bool = False):
    tas = []
    for elem in elems_flat:
        shape = elem.shape[1:] if element_shape and elem.shape.ndims else None
        ta = TensorArray(dtype=elem.dtype, size=n, dynamic_size=False, element_shape=shape,
                         infer_shape=True)
        tas.append(ta.unstack(elem))
    return tas


def _set_leading_shape(results_flat, elems_flat) -> None:
    n_static = Dimension(None)
    for elem in elems_flat:
        shape = elem.shape
        if shape.ndims:
            n_static = n_static.merge_with(shape[0])
    for r in results_flat:
        if r.shape.ndims is not None:
            r.set_shape(TensorShape([n_static.value]).concatenate(r.shape[1:]))


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True,
           swap_memory=False, infer_shape=True, name=None):
    """`fn` applied to each slice of `elems` along dimension 0, results stacked.

    `elems` may be a (nested) structure of tensors with the same first dimension; `fn`
    receives the same structure of slices. `dtype` gives the output structure/dtypes when it
    differs from `elems`.
    """
    if not callable(fn):
        raise TypeError("fn must be callable.")
    parallel_iterations = parallel_iterations or 10
    in_flat, in_pack = _flat_pack(elems)
    out_flat, out_pack = _flat_pack(dtype) if dtype is not None else (in_flat, in_pack)
    with name_scope(name, "map", in_flat(elems)):
        elems_flat = [convert_to_tensor(e, name="elem") for e in in_flat(elems)]
        dtype = dtype if dtype is not None else in_pack([e.dtype for e in elems_flat])
        n = _leading(elems_flat, "elems")
        elems_ta = _unstacked(elems_flat, n)
        i = constant(0)
        accs_ta = [TensorArray(dtype=dt, size=n, dynamic_size=False, infer_shape=infer_shape)
                   for dt in out_flat(dtype)]

        def compute(i, tas):
            packed = in_pack([ta.read(i) for ta in elems_ta])
            values = fn(packed)
            nest.assert_same_structure(dtype if dtype is not None else elems, values)
            tas = [ta.write(i, v) for ta, v in zip(tas, out_flat(values))]
            return (i + 1, tas)

        _, r_a = while_loop(lambda i, _: i < n, compute, (i, accs_ta),
                            parallel_iterations=parallel_iterations, back_prop=back_prop,
                            swap_memory=swap_memory, maximum_iterations=n)
        results = [r.stack() for r in r_a]
        _set_leading_shape(results, elems_flat)
        return out_pack(results)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """The running accumulation `a = fn(a, x)` over slices `x` of `elems`, stacked."""
    if not callable(fn):
        raise TypeError("fn must be callable.")
    in_flat, in_pack = _flat_pack(elems)
    out_flat, out_pack = _flat_pack(initializer) if initializer is not None \
        else (in_flat, in_pack)
    with name_scope(name, "scan", in_flat(elems)):
        elems_flat = [convert_to_tensor(e, name="elem") for e in in_flat(elems)]
        n = _leading(elems_flat, "elems")
        elems_ta = _unstacked(elems_flat, n, element_shape=True)
        if initializer is None:
            a_flat = [ta.read(n - 1 if reverse else 0) for ta in elems_ta]
            start = 1
        else:
            a_flat = [convert_to_tensor(x) for x in out_flat(initializer)]
            start = 0
        accs_ta = [TensorArray(dtype=a.dtype, size=n, dynamic_size=False,
                               element_shape=a.shape if infer_shape else None,
                               infer_shape=infer_shape) for a in a_flat]
        if initializer is None:
            accs_ta = [ta.write(n - 1 if reverse else 0, a) for ta, a in zip(accs_ta, a_flat)]

        def compute(i, a_flat, tas):
            packed_elems = in_pack([ta.read(i) for ta in elems_ta])
            a_out = fn(out_pack(a_flat), packed_elems)
            nest.assert_same_structure(elems if initializer is None else initializer, a_out)
            flat_out = out_flat(a_out)
            tas = [ta.write(i, v) for ta, v in zip(tas, flat_out)]
            return (i - 1 if reverse else i + 1, flat_out, tas)

        if reverse:
            initial, condition = n - 1 - start, (lambda i, _1, _2: i >= 0)
        else:
            initial, condition = start, (lambda i, _1, _2: i < n)
        _, _, r_a = while_loop(condition, compute, (initial, a_flat, accs_ta),
                               parallel_iterations=parallel_iterations, back_prop=back_prop,
                               swap_memory=swap_memory, maximum_iterations=n)
        results = [r.stack() for r in r_a]
        _set_leading_shape(results, elems_flat)
        return out_pack(results)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """`fn(...fn(fn(initializer, x0), x1)..., xn-1)` over slices of `elems`."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 reverse=False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """`fn(...fn(fn(initializer, xn-1), xn-2)..., x0)` over slices of `elems`."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 reverse=True)


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, reverse):
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with name_scope(name, "foldr" if reverse else "foldl", [elems]):
        elems_flat = [convert_to_tensor(e, name="elem") for e in nest.flatten(elems)]
        n = _leading(elems_flat, "elems")
        tas = _unstacked(elems_flat, n)
        elems_ta = nest.pack_sequence_as(elems, tas) if nest.is_sequence(elems) else tas[0]

        def read(i):
            return nest.map_structure(lambda ta: ta.read(i), elems_ta)

        if initializer is None:
            i0 = n - 1 if reverse else 1
            a = read(n - 1 if reverse else 0)
        else:
            i0 = n if reverse else 0
            a = initializer
        i = convert_to_tensor(i0)

        if reverse:
            def compute(i, a):
                i = i - 1
                return [i, fn(a, read(i))]

            def condition(i, a):
                return i > 0
        else:
            def compute(i, a):
                return [i + 1, fn(a, read(i))]

            def condition(i, a):
                return i < n

        _, r_a = while_loop(condition, compute, [i, a], parallel_iterations=parallel_iterations,
                            back_prop=back_prop, swap_memory=swap_memory, maximum_iterations=n)
        return r_a


__all__ = ["map_fn", "scan", "foldl", "foldr"]
