"""Loss scaling for mixed precision (TF 1.15's `tf.train.experimental`): `LossScale`,
`FixedLossScale`, `DynamicLossScale`, `MixedPrecisionLossScaleOptimizer` and
`enable_mixed_precision_graph_rewrite` / `disable_mixed_precision_graph_rewrite`.

The optimizer multiplies the loss by the loss scale before differentiating and divides the
gradients by it after. With a dynamic scale (variables `current_loss_scale`, float32, from
2**15, and `good_steps`, int64) a step whose gradients are all finite is applied and counts
a good step (after `increment_period` of them the scale is multiplied by `multiplier`); a
step with an inf/NaN gradient is skipped and the scale divided by `multiplier` (not below 1).

TF's graph rewrite to float16 (grappler's auto_mixed_precision) acts on GPUs only and skips
CPU-only machines; tensorweave runs on the CPU, so enabling the rewrite gives the
loss-scaling optimizer and leaves the graph's dtypes as they are, which is what TF does on a
CPU.
"""

from __future__ import annotations

import logging

from tensorweave import dtypes
from tensorweave.ops.control_flow_ops import cond, group, no_op
from tensorweave.ops.indexed_slices import IndexedSlices
from tensorweave.ops.math_ops import cast, is_finite, maximum
from tensorweave.ops.reduction_ops import reduce_all
from tensorweave.ops.variables import Variable
from tensorweave.training.optimizer import Optimizer

_LOG = logging.getLogger("tensorweave")
_REWRITE = {"enabled": False}


class LossScale:
    """A loss scale: `loss_scale()` is its current value (a float32 tensor),
    `update(grads)` returns (the update op, whether to apply the gradients)."""

    def __call__(self):
        raise NotImplementedError

    def update(self, grads):
        raise NotImplementedError


class FixedLossScale(LossScale):
    """A constant scale; gradients are always applied."""

    def __init__(self, loss_scale_value):
        if not isinstance(loss_scale_value, (int, float)):
            raise ValueError(f"loss_scale_value must be a Python int or float, got "
                             f"{loss_scale_value!r}")
        if loss_scale_value < 1:
            raise ValueError("loss_scale_value must be at least 1.")
        self._value = float(loss_scale_value)

    def __call__(self):
        from tensorweave.framework.tensor_conversion import convert_to_tensor
        return convert_to_tensor(self._value, dtype=dtypes.float32)

    def update(self, grads):
        del grads
        return no_op(), True


class DynamicLossScale(LossScale):
    """A scale that grows after `increment_period` finite steps and shrinks on a bad one."""

    def __init__(self, initial_loss_scale=2 ** 15, increment_period=2000, multiplier=2.0):
        self._initial = float(initial_loss_scale)
        self._increment_period = int(increment_period)
        self._multiplier = float(multiplier)
        self._current = Variable(self._initial, name="current_loss_scale",
                                 dtype=dtypes.float32, trainable=False)
        self._good_steps = Variable(0, name="good_steps", dtype=dtypes.int64, trainable=False)

    initial_loss_scale = property(lambda self: self._initial)
    increment_period = property(lambda self: self._increment_period)
    multiplier = property(lambda self: self._multiplier)

    def __call__(self):
        return self._current.read_value() if hasattr(self._current, "read_value") else \
            self._current.value()

    def update(self, grads):
        finite = _all_finite(grads)

        def grow_or_count():
            def grow():
                new = self._current * self._multiplier
                keep = cond(is_finite(new), lambda: group(self._current.assign(new)), no_op)
                return group(keep, self._good_steps.assign(0))
            return cond(self._good_steps + 1 >= self._increment_period, grow,
                        lambda: group(self._good_steps.assign_add(1)))

        def shrink():
            new = maximum(self._current / self._multiplier, 1.0)
            return group(self._good_steps.assign(0), self._current.assign(new))

        return cond(finite, grow_or_count, shrink), finite


def _all_finite(grads):
    per_grad = [reduce_all(is_finite(g.values if isinstance(g, IndexedSlices) else g))
                for g in grads if g is not None]
    return reduce_all(per_grad)


def get(identifier) -> LossScale | None:
    """'dynamic' → DynamicLossScale(), a number → FixedLossScale, a LossScale as it is."""
    if isinstance(identifier, LossScale) or identifier is None:
        return identifier
    if isinstance(identifier, (int, float)):
        return FixedLossScale(identifier)
    if identifier == "dynamic":
        return DynamicLossScale()
    raise ValueError(f"Could not interpret loss scale identifier: {identifier}")


class MixedPrecisionLossScaleOptimizer(Optimizer):
    """Wraps `opt` (a tf.train.Optimizer): the loss is scaled before differentiating, the
    gradients unscaled after; with a dynamic scale a step with a non-finite gradient is
    skipped (see the module docstring)."""

    def __init__(self, opt, loss_scale):
        if not isinstance(opt, Optimizer):
            raise ValueError(f'"opt" must be an instance of Optimizer, but got: {type(opt)}')
        super().__init__(opt._use_locking, opt.get_name())
        self._optimizer = opt
        self._loss_scale = get(loss_scale)
        if self._loss_scale is None:
            raise ValueError("loss_scale cannot be None")

    @property
    def loss_scale(self) -> LossScale:
        return self._loss_scale

    def compute_gradients(self, loss, var_list=None, gate_gradients=Optimizer.GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops=False,
                          grad_loss=None):
        scale = self._loss_scale()
        if callable(loss):
            inner = loss
            loss = lambda: inner() * cast(scale, inner().dtype)  # noqa: E731
        else:
            loss = loss * cast(scale, loss.dtype)
        grads_and_vars = self._optimizer.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        reciprocal = 1.0 / scale
        return [(None if g is None else _scaled(g, reciprocal), v) for g, v in grads_and_vars]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = tuple(grads_and_vars)
        if not isinstance(self._loss_scale, DynamicLossScale):
            return self._optimizer.apply_gradients(grads_and_vars, global_step, name)
        name = name if name is not None else self.get_name()
        update, finite = self._loss_scale.update([g for g, _ in grads_and_vars])
        apply = cond(finite, lambda: group(self._optimizer.apply_gradients(
            grads_and_vars, global_step, name + "-wrapped")), no_op)
        return group(apply, update, name=name)

    def get_slot(self, var, name):
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self):
        return self._optimizer.get_slot_names()

    def variables(self):
        return self._optimizer.variables()


def _scaled(grad, factor):
    if isinstance(grad, IndexedSlices):
        return IndexedSlices(grad.values * cast(factor, grad.values.dtype), grad.indices,
                             grad.dense_shape)
    return grad * cast(factor, grad.dtype)


def enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic"):
    """`opt` wrapped in a MixedPrecisionLossScaleOptimizer, and the float16 rewrite marked
    enabled (a no-op on the CPU, as in TF; see the module docstring).

    Raises:
      ValueError: `opt` is not a tf.train.Optimizer, or it is already wrapped.
    """
    if isinstance(opt, MixedPrecisionLossScaleOptimizer):
        raise ValueError('"opt" must not already be an instance of a '
                         'MixedPrecisionLossScaleOptimizer. enable_mixed_precision_graph_'
                         'rewrite will automatically wrap the optimizer with a '
                         'MixedPrecisionLossScaleOptimizer.')
    if not isinstance(opt, Optimizer):
        raise ValueError(f'"opt" must be an instance of a tf.train.Optimizer or a '
                         f'tf.keras.optimizers.Optimizer, but got: {type(opt)}')
    _REWRITE["enabled"] = True
    _LOG.info("No (suitable) GPUs detected, skipping auto_mixed_precision graph optimizer")
    return MixedPrecisionLossScaleOptimizer(opt, loss_scale)


def disable_mixed_precision_graph_rewrite() -> None:
    """Marks the rewrite disabled again (optimizers already wrapped stay wrapped)."""
    if not _REWRITE["enabled"]:
        _LOG.warning("You called disable_mixed_precision_graph_rewrite() but you never "
                     "called enable_mixed_precision_graph_rewrite(). This call will have no "
                     "effect.")
    _REWRITE["enabled"] = False


__all__ = ["DynamicLossScale", "FixedLossScale", "LossScale",
           "MixedPrecisionLossScaleOptimizer", "disable_mixed_precision_graph_rewrite",
           "enable_mixed_precision_graph_rewrite"]
