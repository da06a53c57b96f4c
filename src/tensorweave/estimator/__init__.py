"""`tf.estimator` (TF 1.15): Estimator, its specs and run config, local train_and_evaluate,
numpy/pandas input_fns, and the canned DNN, linear and wide-and-deep models.

`Estimator.export_saved_model` writes a SavedModel (saved_model/export.py); `tf.estimator.export`
has the serving input receivers and export outputs; the exporters of an EvalSpec
(`LatestExporter`, `BestExporter`, `FinalExporter`) export after train_and_evaluate's
evaluations.
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
from tensorweave.estimator.exporter import BestExporter, Exporter, FinalExporter, LatestExporter
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys
from tensorweave.estimator.run_config import RunConfig
from tensorweave.estimator.training import EvalSpec, TrainSpec, train_and_evaluate
from tensorweave.saved_model import export as _export_module

export = _export_module  # `tf.estimator.export`


__all__ = [
    "BestExporter", "DNNClassifier", "DNNLinearCombinedClassifier", "DNNRegressor",
    "Estimator", "EstimatorSpec", "EvalSpec", "Exporter", "FinalExporter",
    "LatestExporter", "LinearClassifier", "LinearRegressor", "ModeKeys",
    "RunConfig", "TrainSpec", "export", "inputs", "train_and_evaluate",
]
