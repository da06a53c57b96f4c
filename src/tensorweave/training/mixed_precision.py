"""TF1 mixed precision: loss scales, `MixedPrecisionLossScaleOptimizer` and
`enable_mixed_precision_graph_rewrite` (TF's training/experimental/loss_scale*.py and
mixed_precision.py).

`enable_mixed_precision_graph_rewrite(opt)` does what TensorFlow does where it has no GPU to
rewrite for: it wraps `opt` in a loss-scale optimizer and leaves the graph in float32 (TF's
auto_mixed_precision pass skips itself without a suitable GPU, and tensorweave's devices are
CPUs and XLA; nothing is cast to float16). Dynamic loss scaling is TF's: the scale starts at
2**15; a step whose gradients are all finite applies them and counts a good step, and every
`increment_period` good steps the scale is multiplied by `multiplier`; a step with a
non-finite gradient skips the update (the global step does not advance), divides the scale
by `multiplier` (never below 1) and resets the count.
"""

from __future__ import annotations

import logging

from tensorweave import dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import control_flow_ops, math_ops, reduction_ops
from tensorweave.ops.indexed_slices import IndexedSlices
from tensorweave.ops.variables import Variable
from tensorweave.training.optimizer import Optimizer

_LOG = logging.getLogger("tensorweave")


class LossScale:
    """A loss scale: `__call__()` gives the current scale as a float32 tensor; `update(grads)`
    gives `(update_op, should_apply_gradients)`."""

    def __call__(self):
        raise NotImplementedError

    def update(self, grads):
        raise NotImplementedError


class FixedLossScale(LossScale):
    """A constant loss scale; gradients are always applied."""

    def __init__(self, loss_scale_value):
        if not isinstance(loss_scale_value, (int, float)):
            raise ValueError(f"loss_scale_value must be a Python int or float, got "
                             f"{loss_scale_value!r}")
        if loss_scale_value < 1:
            raise ValueError("loss_scale_value must be at least 1.")
        self._loss_scale_value = float(loss_scale_value)

    def __call__(self):
        return convert_to_tensor(self._loss_scale_value, dtype=dtypes.float32)

    def update(self, grads):
        return control_flow_ops.no_op(), True

    def __repr__(self) -> str:
        return f"FixedLossScale({self._loss_scale_value})"


def _all_finite(grads):
    parts = [reduction_ops.reduce_all(math_ops.is_finite(
        g.values if isinstance(g, IndexedSlices) else g)) for g in grads if g is not None]
    return reduction_ops.reduce_all(parts)


class DynamicLossScale(LossScale):
    """TF's dynamic loss scale over two non-trainable variables, `current_loss_scale`
    (float32) and `good_steps` (int64)."""

    def __init__(self, initial_loss_scale=2 ** 15, increment_period=2000, multiplier=2.0):
        self._initial_loss_scale = float(initial_loss_scale)
        self._increment_period = int(increment_period)
        self._multiplier = float(multiplier)
        self._current_loss_scale = Variable(self._initial_loss_scale, trainable=False,
                                            name="current_loss_scale", dtype=dtypes.float32)
        self._num_good_steps = Variable(0, trainable=False, name="good_steps",
                                        dtype=dtypes.int64)

    initial_loss_scale = property(lambda self: self._initial_loss_scale)
    increment_period = property(lambda self: self._increment_period)
    multiplier = property(lambda self: self._multiplier)

    def __call__(self):
        return self._current_loss_scale.value()

    @property
    def weights(self) -> list:
        return [self._current_loss_scale, self._num_good_steps]

    def update(self, grads):
        """`(update_op, is_finite)`: the scale's update for this step's `grads` and whether
        they are all finite (then they are to be applied)."""
        is_finite = _all_finite(grads)
        scale, good = self._current_loss_scale, self._num_good_steps

        def grow():
            new_scale = scale * self._multiplier
            keep = control_flow_ops.cond(math_ops.is_finite(new_scale),
                                         lambda: scale.assign(new_scale).op,
                                         control_flow_ops.no_op)
            return control_flow_ops.group(keep, good.assign(0))

        def finite():
            return control_flow_ops.cond(good + 1 >= self._increment_period, grow,
                                         lambda: good.assign_add(1).op)

        def not_finite():
            return control_flow_ops.group(
                good.assign(0), scale.assign(math_ops.maximum(scale / self._multiplier, 1.0)))

        return control_flow_ops.cond(is_finite, finite, not_finite), is_finite

    def __repr__(self) -> str:
        return (f"DynamicLossScale(initial_loss_scale={self._initial_loss_scale}, "
                f"increment_period={self._increment_period}, multiplier={self._multiplier})")


def get(identifier) -> LossScale | None:
    """A number: FixedLossScale; "dynamic": DynamicLossScale; a LossScale; None.

    Raises:
      ValueError: anything else.
    """
    if isinstance(identifier, (int, float)):
        return FixedLossScale(identifier)
    if identifier == "dynamic":
        return DynamicLossScale()
    if identifier is None or isinstance(identifier, LossScale):
        return identifier
    raise ValueError(f"Could not interpret loss scale identifier: {identifier}")


class MixedPrecisionLossScaleOptimizer(Optimizer):
    """Wraps `opt`: scales the loss by the loss scale before differentiating, divides the
    gradients by it, and (dynamic scale) applies them only when all are finite.

    Raises:
      ValueError: `opt` is not a tf.train.Optimizer, or `loss_scale` is None.
    """

    def __init__(self, opt, loss_scale):
        if not isinstance(opt, Optimizer):
            raise ValueError(f'"opt" must be an instance of Optimizer, but got: {type(opt)}')
        super().__init__(opt._use_locking, opt.get_name())
        self._optimizer = opt
        self._loss_scale = get(loss_scale)
        if self._loss_scale is None:
            raise ValueError("loss_scale cannot be None")

    def compute_gradients(self, loss, var_list=None, gate_gradients=Optimizer.GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        """The wrapped optimizer's gradients of `loss * scale`, each divided by `scale`."""
        loss = loss() if callable(loss) else loss
        scaled = loss * math_ops.cast(self._loss_scale(), loss.dtype)
        grads_and_vars = self._optimizer.compute_gradients(
            scaled, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        reciprocal = 1.0 / self._loss_scale()
        return [(_unscale(g, reciprocal), v) for g, v in grads_and_vars]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The wrapped optimizer's update, under a cond on the gradients being finite (for a
        dynamic scale), grouped with the scale's update; named `name`."""
        if not isinstance(self._loss_scale, DynamicLossScale):
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)
        name = name if name is not None else self.get_name()
        grads_and_vars = tuple(grads_and_vars)
        update_op, should_apply = self._loss_scale.update([g for g, _ in grads_and_vars])
        maybe_apply = control_flow_ops.cond(
            should_apply,
            lambda: self._optimizer.apply_gradients(grads_and_vars, global_step,
                                                    name + "-wrapped"),
            control_flow_ops.no_op)
        return control_flow_ops.group(maybe_apply, update_op, name=name)

    def get_slot(self, var, name):
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self) -> list[str]:
        return self._optimizer.get_slot_names()

    def variables(self) -> list:
        extra = getattr(self._loss_scale, "weights", [])
        return self._optimizer.variables() + list(extra)


def _unscale(grad, reciprocal):
    if grad is None:
        return None
    if isinstance(grad, IndexedSlices):
        return IndexedSlices(grad.values * math_ops.cast(reciprocal, grad.values.dtype),
                             grad.indices, grad.dense_shape)
    return grad * math_ops.cast(reciprocal, grad.dtype)


def enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic"):
    """`opt` wrapped in a MixedPrecisionLossScaleOptimizer with `loss_scale`. The float16
    rewrite itself has no device to run for here (see the module docstring), as TF's skips
    itself without a GPU; the graph stays float32.

    Raises:
      ValueError: `opt` is already a loss-scale optimizer, or is not a tf.train.Optimizer.
    """
    if isinstance(opt, MixedPrecisionLossScaleOptimizer):
        raise ValueError('"opt" must not already be an instance of a '
                         'MixedPrecisionLossScaleOptimizer. `enable_mixed_precision_graph_'
                         'rewrite` will automatically wrap the optimizer with a '
                         'MixedPrecisionLossScaleOptimizer.')
    if not isinstance(opt, Optimizer):
        raise ValueError('"opt" must be an instance of a tf.train.Optimizer or a '
                         f'tf.keras.optimizers.Optimizer, but got: {opt}')
    _LOG.warning("enable_mixed_precision_graph_rewrite: no GPU to rewrite for, so the graph "
                 "stays float32 (as TensorFlow skips auto_mixed_precision without one); "
                 "the optimizer is wrapped with loss scaling.")
    return MixedPrecisionLossScaleOptimizer(opt, loss_scale)


def disable_mixed_precision_graph_rewrite() -> None:
    """Nothing was rewritten (see enable_mixed_precision_graph_rewrite); optimizers already
    wrapped keep their loss scaling, as in TF."""


__all__ = ["LossScale", "FixedLossScale", "DynamicLossScale", "MixedPrecisionLossScaleOptimizer",
           "enable_mixed_precision_graph_rewrite", "disable_mixed_precision_graph_rewrite"]
