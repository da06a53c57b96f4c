"""`tf.GradientTape` in graph mode, as TF 1.15 runs it under a Graph.

A tape records the ops created in the default graph while it is active (between `__enter__`
and `__exit__`, outside `stop_recording()`). `gradient(target, sources)` builds ordinary
gradient ops with `tf.gradients`, but only along recorded ops and only with respect to watched
sources: tensors passed to `watch`, variables passed to `watch`, and (with
`watch_accessed_variables`, the default) trainable variables read by a recorded op. A source
that is not watched, or not connected to the target through recorded ops, gets None (or zeros
with `UnconnectedGradients.ZERO`). A non-persistent tape computes one set of gradients.
"""

from __future__ import annotations

import contextlib

from tensorweave.autodiff.gradients import UnconnectedGradients, gradients
from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import creation_ops
from tensorweave.ops.control_flow_util import flatten, pack_sequence_as

__all__ = ["GradientTape"]


def _all_variables(graph) -> list:
    seen, out = set(), []
    for key in (GraphKeys.GLOBAL_VARIABLES, GraphKeys.LOCAL_VARIABLES,
                GraphKeys.TRAINABLE_VARIABLES):
        for v in graph.get_collection(key):
            if id(v) not in seen and hasattr(v, "_ref"):
                seen.add(id(v))
                out.append(v)
    return out


class GradientTape:
    """Records ops for differentiation (TF's `tf.GradientTape`, graph mode).

    Args:
      persistent: allow several `gradient` calls (else the second raises RuntimeError).
      watch_accessed_variables: watch every trainable variable a recorded op reads.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._graph = None
        self._ranges: list[list] = []      # [start version, end version or None]
        self._watched_tensors: list = []
        self._watched_vars: list = []
        self._recording = False
        self._used = False

    # -- recording ------------------------------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to "
                             "re-enter an already-active tape.")
        self._graph = self._graph or get_default_graph()
        self._start()
        return self

    def __exit__(self, *exc):
        if self._recording:
            self._stop()
        return False

    def _start(self) -> None:
        self._ranges.append([self._graph.version, None])
        self._recording = True

    def _stop(self) -> None:
        self._ranges[-1][1] = self._graph.version
        self._recording = False

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops created inside this block are not recorded.

        Raises:
          RuntimeError: the tape is not recording.
        """
        if not self._recording:
            raise RuntimeError("Trying to stop recording a tape which is not recording.")
        self._stop()
        try:
            yield
        finally:
            self._start()

    def reset(self) -> None:
        """Forgets everything recorded and watched (recording goes on inside `with`)."""
        recording = self._recording
        self._ranges, self._watched_tensors, self._watched_vars = [], [], []
        if recording:
            self._start()

    def watch(self, tensor) -> None:
        """Watches a Tensor, a Variable, or a nested structure of them."""
        for t in flatten(tensor):
            if hasattr(t, "_ref"):
                if all(v is not t for v in self._watched_vars):
                    self._watched_vars.append(t)
            else:
                t = convert_to_tensor(t)
                if not t.dtype.base_dtype.is_floating and not t.dtype.base_dtype.is_complex:
                    continue        # TF ignores non-differentiable dtypes when watching
                if all(w is not t for w in self._watched_tensors):
                    self._watched_tensors.append(t)

    def _recorded_ops(self) -> list:
        if self._graph is None:
            return []
        out = []
        for start, end in self._ranges:
            stop = self._graph.version if end is None else end
            out.extend(self._graph.get_operations()[start:stop])
        return out

    def watched_variables(self) -> tuple:
        """The variables watched: explicitly, and the trainable ones recorded ops read."""
        found = list(self._watched_vars)
        if self._watch_accessed and self._graph is not None:
            read = {id(t) for op in self._recorded_ops() for t in op.inputs}
            for v in _all_variables(self._graph):
                if not v.trainable or any(w is v for w in found):
                    continue
                if id(v._ref()) in read or id(v._as_graph_element()) in read:
                    found.append(v)
        return tuple(found)

    # -- gradients ------------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d target / d sources, along the recorded ops, shaped like `sources`.

        Raises:
          RuntimeError: a second call on a non-persistent tape, or no tape was ever entered.
        """
        if self._graph is None:
            raise RuntimeError("GradientTape.gradient called on a tape that recorded nothing")
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        self._used = True
        was_recording = self._recording
        if was_recording:
            self._stop()
        try:
            return self._gradient(target, sources, output_gradients, unconnected_gradients)
        finally:
            if was_recording:
                self._start()

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """d target[i...] / d source[j...], of shape target.shape + source.shape per source.

        Built as one gradient per target element, so the target's size must be known when
        the graph is built.

        Raises:
          ValueError: the target's shape is not fully defined.
          RuntimeError: a second call on a non-persistent tape.
        """
        from tensorweave.ops import array_ops, joining_ops

        target = convert_to_tensor(target)
        if not target.shape.is_fully_defined():
            raise ValueError("GradientTape.jacobian here needs a target of fully defined "
                             f"shape, got {target.shape}")
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        was_recording = self._recording
        if was_recording:
            self._stop()
        try:
            start = self._graph.version       # the element picks are recorded, as TF's pfor
            flat = array_ops.reshape(target, [-1])
            elements = [flat[i] for i in range(target.shape.num_elements())]
            self._ranges.append([start, self._graph.version])
            rows = [flatten(self._gradient(e, sources, None, unconnected_gradients))
                    for e in elements]
        finally:
            if was_recording:
                self._start()
        self._used = True
        out = []
        for j, src in enumerate(flatten(sources)):
            column = [r[j] for r in rows]
            if any(c is None for c in column):
                out.append(None)
                continue
            stacked = joining_ops.stack(column)
            src_shape = array_ops.shape(convert_to_tensor(src))
            out.append(array_ops.reshape(stacked, joining_ops.concat(
                [target.shape.as_list(), src_shape], 0)))
        return pack_sequence_as(sources, out)

    def _gradient(self, target, sources, output_gradients, unconnected):
        targets = [convert_to_tensor(t) for t in flatten(target)]
        flat_sources = flatten(sources)
        grad_ys = None if output_gradients is None else flatten(output_gradients)
        watched_vars = self.watched_variables()
        recorded = {id(op) for op in self._recorded_ops()}
        source_tensors, bridges = [], set()
        for s in flat_sources:
            var = next((v for v in watched_vars if v is s), None)
            if var is not None:
                source_tensors.append(var)
                bridges.update({id(var._ref()), id(var._as_graph_element())})
                continue
            t = s if not hasattr(s, "_ref") else None
            t = None if t is None else convert_to_tensor(t)
            watched = t is not None and any(w is t for w in self._watched_tensors)
            source_tensors.append(t if watched else None)
            if watched:
                bridges.add(id(t))
        stops = self._stop_tensors(recorded, bridges)
        stops += [t for t in targets if id(t.op) not in recorded and id(t) not in bridges]
        live = [s for s in source_tensors if s is not None]
        grads = gradients(targets, live, grad_ys=grad_ys, stop_gradients=stops or None,
                          unconnected_gradients=unconnected) if live else []
        it = iter(grads)
        out = []
        for s, src in zip(source_tensors, flat_sources):
            if s is not None:
                out.append(next(it))
            elif unconnected == UnconnectedGradients.ZERO or unconnected == "zero":
                out.append(creation_ops.zeros_like(convert_to_tensor(src)))
            else:
                out.append(None)
        return pack_sequence_as(sources, out)

    def _stop_tensors(self, recorded: set, bridges: set) -> list:
        """Inputs of recorded ops made outside the tape: gradients do not flow past them."""
        stops, seen = [], set()
        for op in self._recorded_ops():
            for t in op.inputs:
                if id(t.op) in recorded or id(t) in bridges or id(t) in seen:
                    continue
                if t.op.type == "Identity" and t.op.inputs and id(t.op.inputs[0]) in bridges:
                    continue     # a variable's snapshot, read by a recorded op
                seen.add(id(t))
                stops.append(t)
        return stops
