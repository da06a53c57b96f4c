"""`tf.estimator` (TF 1.15): Estimator, its specs and run config, local train_and_evaluate,
numpy/pandas input_fns, and the canned DNN, linear and wide-and-deep models.

`export_saved_model` raises NotImplementedError: SavedModel is a later issue.
"""

from tensorweave.estimator import inputs
from tensorweave.estimator.canned.estimators import (
    DNNClassifier,
    DNNLinearCombinedClassifier,
    DNNRegressor,
    LinearClassifier,
    LinearRegressor,
)
from tensorweave.estimator.estimator import Estimator
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorweave.estimator.run_config import RunConfig
from tensorweave.estimator.training import EvalSpec, TrainSpec, train_and_evaluate


class export:  # noqa: N801 - TF's module name
    """`tf.estimator.export`: serving input receivers need SavedModel (a later issue)."""

    @staticmethod
    def _unavailable(*args, **kwargs):
        raise NotImplementedError("tf.estimator.export needs SavedModel, which tensorweave "
                                  "does not write yet (a later issue).")

    ServingInputReceiver = TensorServingInputReceiver = _unavailable
    build_parsing_serving_input_receiver_fn = build_raw_serving_input_receiver_fn = _unavailable
    PredictOutput = ClassificationOutput = RegressionOutput = _unavailable


__all__ = [
    "DNNClassifier", "DNNLinearCombinedClassifier", "DNNRegressor", "Estimator",
    "EstimatorSpec", "EvalSpec", "LinearClassifier", "LinearRegressor", "ModeKeys",
    "RunConfig", "TrainSpec", "export", "inputs", "train_and_evaluate",
]
