"""`tf.contrib.layers.optimize_loss` (TF 1.15's contrib/layers optimizers.py): one call from
a loss to a train tensor: learning-rate variable (`OptimizeLoss/learning_rate`) and decay,
optimizer by name, class, instance or factory, gradient multipliers and clipping, UPDATE_OPS,
and `loss` / `learning_rate` / `global_gradient_norm` summaries."""

from __future__ import annotations

from tensorweave.framework.graph import GraphKeys, get_collection
from tensorweave.ops import control_flow_ops, init_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.training import optimizers as opt

OPTIMIZER_CLS_NAMES = {
    "Adagrad": opt.AdagradOptimizer,
    "Adam": opt.AdamOptimizer,
    "Ftrl": opt.FtrlOptimizer,
    "Momentum": opt.MomentumOptimizer,
    "RMSProp": opt.RMSPropOptimizer,
    "SGD": opt.GradientDescentOptimizer,
}
OPTIMIZER_SUMMARIES = ["learning_rate", "loss", "gradients", "gradient_norm",
                       "global_gradient_norm"]


def _learning_rate(learning_rate, learning_rate_decay_fn, global_step):
    if learning_rate is None:
        return None
    if isinstance(learning_rate, (int, float)):
        learning_rate = vs.get_variable(
            "learning_rate", [], trainable=False,
            initializer=init_ops.constant_initializer(learning_rate))
    if learning_rate_decay_fn is not None:
        learning_rate = learning_rate_decay_fn(learning_rate, global_step)
    return learning_rate


def _make_optimizer(optimizer, lr):
    """Raises ValueError: an unknown name, or a name/class without a learning rate."""
    if isinstance(optimizer, str):
        if optimizer not in OPTIMIZER_CLS_NAMES:
            raise ValueError(f"Optimizer name should be one of [{', '.join(OPTIMIZER_CLS_NAMES)}]"
                             f", you provided {optimizer}.")
        optimizer = OPTIMIZER_CLS_NAMES[optimizer]
    if isinstance(optimizer, type):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer "
                             f"is string ({optimizer}).")
        return optimizer(learning_rate=lr)
    if hasattr(optimizer, "compute_gradients"):
        return optimizer
    if callable(optimizer):
        return optimizer(lr) if lr is not None else optimizer()
    raise ValueError(f"Unrecognized optimizer: should be string, subclass of Optimizer, "
                     f"instance of subclass of Optimizer or function with one argument. "
                     f"Got {optimizer}.")


def _transform(gradients, gradient_multipliers, clip_gradients):
    from tensorweave.training.clip_ops import clip_by_global_norm

    if gradient_multipliers:
        gradients = [(g * gradient_multipliers[v] if g is not None and v in
                      gradient_multipliers else g, v) for g, v in gradients]
    if isinstance(clip_gradients, (int, float)) and clip_gradients:
        grads, variables = zip(*gradients)
        clipped, _ = clip_by_global_norm(list(grads), clip_gradients)
        gradients = list(zip(clipped, variables))
    elif callable(clip_gradients):
        gradients = clip_gradients(gradients)
    return gradients


def optimize_loss(loss, global_step, learning_rate, optimizer, gradient_noise_scale=None,
                  gradient_multipliers=None, clip_gradients=None, learning_rate_decay_fn=None,
                  update_ops=None, variables=None, name=None, summaries=None,
                  colocate_gradients_with_ops=False, increment_global_step=True):
    """The loss tensor, run after one optimizer step on `variables` (all trainable).

    Raises:
      ValueError: a bad optimizer (see `_make_optimizer`) or no variables to optimize.
      NotImplementedError: `gradient_noise_scale`.
    """
    from tensorweave.ops.summary_ops import scalar
    from tensorweave.ops.variable_scope import get_or_create_global_step
    from tensorweave.training.clip_ops import global_norm

    if gradient_noise_scale is not None:
        raise NotImplementedError("optimize_loss: gradient_noise_scale is not supported")
    if global_step is None:
        global_step = get_or_create_global_step()
    summaries = OPTIMIZER_SUMMARIES if summaries is None else summaries
    with vs.variable_scope(name, "OptimizeLoss", [loss, global_step]):
        update_ops = set(update_ops or get_collection(GraphKeys.UPDATE_OPS))
        if update_ops:
            loss = control_flow_ops.with_dependencies(list(update_ops), loss)
        lr = _learning_rate(learning_rate, learning_rate_decay_fn, global_step)
        if lr is not None and "learning_rate" in summaries:
            scalar("learning_rate", lr)
        optimizer = _make_optimizer(optimizer, lr)
        variables = variables if variables is not None else \
            get_collection(GraphKeys.TRAINABLE_VARIABLES)
        if not variables:
            raise ValueError("No variables to optimize.")
        gradients = optimizer.compute_gradients(
            loss, variables, colocate_gradients_with_ops=colocate_gradients_with_ops)
        gradients = _transform(gradients, gradient_multipliers, clip_gradients)
        if "loss" in summaries:
            scalar("loss", loss)
        if "global_gradient_norm" in summaries:
            scalar("global_norm/gradient_norm",
                   global_norm([g for g, _ in gradients if g is not None]))
        grad_updates = optimizer.apply_gradients(
            gradients, global_step=global_step if increment_global_step else None,
            name="train")
        return control_flow_ops.with_dependencies([grad_updates], loss)
