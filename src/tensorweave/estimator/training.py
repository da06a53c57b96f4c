"""`TrainSpec`, `EvalSpec` and local `train_and_evaluate`: train, then evaluate after each
chunk of training until `max_steps` (TF's local loop: evaluations follow checkpoints)."""

from __future__ import annotations

from collections import namedtuple


class TrainSpec(namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks"])):
    """What to train on and for how long. Raises ValueError/TypeError for bad values."""

    def __new__(cls, input_fn, max_steps=None, hooks=None):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn, max_steps, tuple(hooks or ()))


class EvalSpec(namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters",
                                       "start_delay_secs", "throttle_secs"])):
    """What to evaluate on: `steps` batches (None: the whole input) every `throttle_secs`."""

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        return super().__new__(cls, input_fn, steps, name, tuple(hooks or ()),
                               tuple(exporters or ()), start_delay_secs, throttle_secs)


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains `estimator` to `train_spec.max_steps`, evaluating after each chunk of
    `save_checkpoints_steps` steps (or once at the end). Returns (last metrics, exports).

    Raises:
      TypeError: the specs are not TrainSpec/EvalSpec.
    """
    from tensorweave.estimator.estimator import Estimator
    if not isinstance(estimator, Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`, given "
                        f"{type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`, given "
                        f"{type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`, given "
                        f"{type(eval_spec)}")
    chunk = estimator.config.save_checkpoints_steps
    metrics = None
    while True:
        before = estimator._global_step_on_disk()
        target = train_spec.max_steps
        if chunk and target is not None:
            target = min(target, before + chunk)
        elif chunk:
            target = before + chunk
        estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks), max_steps=target)
        metrics = estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps,
                                     hooks=list(eval_spec.hooks), name=eval_spec.name)
        after = estimator._global_step_on_disk()
        done = train_spec.max_steps is not None and after >= train_spec.max_steps
        if done or after == before or not chunk:
            return metrics, []
