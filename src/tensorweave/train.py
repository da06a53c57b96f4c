"""`tf.train`: optimizers, schedules, moving averages, global step, graph files."""

from tensorweave.training.learning_rate_decay import (  # noqa: F401
    cosine_decay, cosine_decay_restarts, exponential_decay, inverse_time_decay,
    linear_cosine_decay, natural_exp_decay, noisy_linear_cosine_decay, piecewise_constant,
    piecewise_constant_decay, polynomial_decay,
)
from tensorweave.training.moving_averages import ExponentialMovingAverage  # noqa: F401
from tensorweave.training.optimizer import Optimizer  # noqa: F401
from tensorweave.training.optimizers import (  # noqa: F401
    AdadeltaOptimizer, AdagradOptimizer, AdamOptimizer, GradientDescentOptimizer,
    MomentumOptimizer, RMSPropOptimizer, FtrlOptimizer, ProximalAdagradOptimizer,
    ProximalGradientDescentOptimizer,
)

from tensorweave.ops.variable_scope import (  # noqa: F401
    assert_global_step, create_global_step, get_global_step, get_or_create_global_step,
    global_step,
)
from tensorweave.formats.events import summary_iterator  # noqa: F401
from tensorweave.distributed.cluster import ClusterSpec  # noqa: F401
from tensorweave.distributed.server import Server  # noqa: F401
from tensorweave.training.device_setter import replica_device_setter  # noqa: F401
from tensorweave.training.sync_replicas_optimizer import SyncReplicasOptimizer  # noqa: F401
from tensorweave.formats.example import (  # noqa: F401
    BytesList, Example, Feature, FeatureList, FeatureLists, Features, FloatList, Int64List,
    SequenceExample,
)
from tensorweave.training.checkpoint_utils import *  # noqa: F403
from tensorweave.training.graph_io import write_graph  # noqa: F401
from tensorweave.training.meta_graph import export_meta_graph, import_meta_graph  # noqa: F401
from tensorweave.training.pretrained import (  # noqa: F401
    load_pretrained, pretrained_init_fn, read_pretrained, read_safetensors_metadata,
    write_safetensors,
)
from tensorweave.training.saver import Saver, SaverDef  # noqa: F401
from tensorweave.training.input_producers import (  # noqa: F401
    batch, batch_join, input_producer, limit_epochs, range_input_producer, shuffle_batch,
    shuffle_batch_join, slice_input_producer, string_input_producer,
)
from tensorweave.training import queue_runner  # noqa: F401
from tensorweave.training.coordinator import Coordinator  # noqa: F401
from tensorweave.training.queue_runner import (  # noqa: F401
    QueueRunner, add_queue_runner, start_queue_runners,
)
# -- monitored sessions, hooks, session managers, Supervisor (TF1 training loop) -----------
from tensorweave.training.hooks import (  # noqa: F401, E402
    CheckpointSaverHook, CheckpointSaverListener, FeedFnHook, FinalOpsHook, GlobalStepWaiterHook,
    LoggingTensorHook, NanLossDuringTrainingError, NanTensorHook, ProfilerHook, SecondOrStepTimer,
    StepCounterHook, StopAtStepHook, SummarySaverHook,
)
from tensorweave.training.monitored_session import (  # noqa: F401, E402
    ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession, SessionCreator,
    SingularMonitoredSession, WorkerSessionCreator,
)
from tensorweave.training.scaffold import Scaffold  # noqa: F401, E402
from tensorweave.training.session_manager import SessionManager  # noqa: F401, E402
from tensorweave.training.session_run_hook import (  # noqa: F401, E402
    SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues,
)
from tensorweave.monitoring.summary.writer import FileWriterCache as SummaryWriterCache  # noqa: F401, E402, E501
from tensorweave.training.supervisor import Supervisor  # noqa: F401, E402
from tensorweave.training.coordinator import LooperThread  # noqa: F401, E402
from tensorweave import mixed_precision as experimental  # noqa: F401, E402
