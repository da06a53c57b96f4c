"""`ModeKeys` and `EstimatorSpec`: what a model_fn is called with and must return."""

from __future__ import annotations

from collections import namedtuple

from tensorweave.framework.operation import Operation, Tensor


class ModeKeys:
    """The three modes a model_fn is built for (TF's string values)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


def _tensor_or_op(x) -> bool:
    return isinstance(x, (Tensor, Operation))


class EstimatorSpec(namedtuple("EstimatorSpec", [
        "mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
        "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks",
        "prediction_hooks"])):
    """What a model_fn returns: the ops of one mode.

    TRAIN needs `loss` and `train_op`, EVAL needs `loss`, PREDICT needs `predictions` (a
    Tensor or a dict of Tensors). `eval_metric_ops` maps names to (value, update_op) pairs.

    Raises:
      ValueError: a mode's required field is missing.
      TypeError: a field is not of the kind expected (the message names it).
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(f"mode={mode!r} is not one of ModeKeys.TRAIN/EVAL/PREDICT")
        if mode == ModeKeys.TRAIN and train_op is None:
            raise ValueError("Missing train_op.")
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL) and loss is None:
            raise ValueError("Missing loss.")
        if mode == ModeKeys.PREDICT and predictions is None:
            raise ValueError("Missing predictions.")
        if loss is not None and not (isinstance(loss, Tensor) and loss.shape.ndims in (0, None)
                                     or isinstance(loss, Tensor) and loss.shape.num_elements()
                                     == 1):
            raise TypeError(f"loss must be a scalar Tensor, given: {loss!r}")
        if train_op is not None and not _tensor_or_op(train_op):
            raise TypeError(f"train_op must be Operation or Tensor, given: {train_op!r}")
        preds = predictions.values() if isinstance(predictions, dict) else (
            [] if predictions is None else [predictions])
        for p in preds:
            if not isinstance(p, Tensor):
                raise TypeError(f"predictions must be Tensor or dict of Tensor, given: "
                                f"{predictions!r}")
        eval_metric_ops = dict(eval_metric_ops or {})
        for k, v in eval_metric_ops.items():
            if not (isinstance(v, tuple) and len(v) == 2):
                raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) "
                                f"tuples, given: {v!r} for key: {k}")
        hooks = [tuple(h or ()) for h in (training_chief_hooks, training_hooks,
                                         evaluation_hooks, prediction_hooks)]
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metric_ops,
                               export_outputs, *hooks[:2], scaffold, *hooks[2:])
