"""The standard `SessionRunHook`s of `tf.train` (TF's basic_session_run_hooks)."""

from tensorweave.training.hooks.basic import (  # noqa: F401
    FeedFnHook,
    FinalOpsHook,
    GlobalStepWaiterHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    StopAtStepHook,
)
from tensorweave.training.hooks.checkpoint import (  # noqa: F401
    CheckpointSaverHook,
    CheckpointSaverListener,
)
from tensorweave.training.hooks.profiler import ProfilerHook  # noqa: F401
from tensorweave.training.hooks.summary import StepCounterHook, SummarySaverHook  # noqa: F401
from tensorweave.training.hooks.timers import NeverTriggerTimer, SecondOrStepTimer  # noqa: F401
