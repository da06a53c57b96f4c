"""`RunConfig`: where an Estimator writes and how often, and the cluster from `TF_CONFIG`."""

from __future__ import annotations

import copy
import json
import os

from tensorweave.distributed.cluster import ClusterSpec


class TaskType:
    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


_DEFAULT_SECS = 600


class RunConfig:
    """An Estimator's run settings (TF 1.15's defaults: checkpoints every 600 s, 5 kept,
    summaries every 100 steps, a loss log every 100 steps).

    The cluster, task and chief role come from the `TF_CONFIG` environment variable
    (`{"cluster": {...}, "task": {"type": ..., "index": ...}}`), as TF reads it.

    Raises:
      ValueError: both save_checkpoints_steps and save_checkpoints_secs, or a bad TF_CONFIG.
    """

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=None, save_checkpoints_secs=_DEFAULT_SECS,
                 session_config=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None,
                 eval_distribute=None, experimental_distribute=None,
                 experimental_max_worker_delay_secs=None, session_creation_timeout_secs=7200):
        if save_checkpoints_steps is not None and save_checkpoints_secs not in (
                None, _DEFAULT_SECS):
            raise ValueError("Can not provide both save_checkpoints_steps and "
                             "save_checkpoints_secs.")
        if save_checkpoints_steps is not None:
            save_checkpoints_secs = None
        self._model_dir = os.fspath(model_dir) if model_dir is not None else None
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._train_distribute = train_distribute
        self._device_fn = device_fn
        self._session_creation_timeout_secs = session_creation_timeout_secs
        self._read_tf_config(json.loads(os.environ.get("TF_CONFIG") or "{}"))

    def _read_tf_config(self, cfg: dict) -> None:
        cluster = cfg.get("cluster") or {}
        task = cfg.get("task") or {}
        self._cluster_spec = ClusterSpec(cluster) if cluster else ClusterSpec({})
        self._task_type = task.get("type", TaskType.WORKER)
        self._task_id = int(task.get("index", 0))
        if cluster and self._task_type not in cluster and self._task_type != \
                TaskType.EVALUATOR:
            raise ValueError(f"{self._task_type} is not a valid task_type in the cluster_spec "
                             f"{cluster}")
        if not cluster:
            self._master, self._num_ps, self._num_workers = "", 0, 1
            self._is_chief = True
            return
        jobs = {k: list(v) if isinstance(v, (list, tuple)) else list(v.values())
                for k, v in cluster.items()}
        self._num_ps = len(jobs.get(TaskType.PS, []))
        self._num_workers = len(jobs.get(TaskType.WORKER, [])) + (
            1 if TaskType.CHIEF in jobs or TaskType.MASTER in jobs else 0)
        if self._task_type == TaskType.EVALUATOR:
            # NOTE: as TF's: the evaluator runs alone, on the checkpoints the chief writes
            self._master, self._is_chief, self._num_ps, self._num_workers = "", False, 0, 0
            return
        self._master = f"grpc://{jobs[self._task_type][self._task_id]}"
        chief = TaskType.CHIEF if TaskType.CHIEF in jobs else (
            TaskType.MASTER if TaskType.MASTER in jobs else TaskType.WORKER)
        self._is_chief = self._task_type == chief and self._task_id == 0
        if self._session_config is None and self._task_type != TaskType.PS:
            self._session_config = _distributed_session_config(self._task_type, self._task_id)

    def replace(self, **kwargs) -> RunConfig:
        """A copy with the given settings changed."""
        new = copy.copy(self)
        for k, v in kwargs.items():
            if not hasattr(new, f"_{k}"):
                raise ValueError(f"{k} is not a RunConfig property")
            setattr(new, f"_{k}", v)
        if kwargs.get("save_checkpoints_steps") is not None:
            new._save_checkpoints_secs = None
        return new

    model_dir = property(lambda self: self._model_dir)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    session_config = property(lambda self: self._session_config)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    train_distribute = property(lambda self: self._train_distribute)
    device_fn = property(lambda self: self._device_fn)
    cluster_spec = property(lambda self: self._cluster_spec)
    task_type = property(lambda self: self._task_type)
    task_id = property(lambda self: self._task_id)
    master = property(lambda self: self._master)
    is_chief = property(lambda self: self._is_chief)
    num_ps_replicas = property(lambda self: self._num_ps)
    num_worker_replicas = property(lambda self: self._num_workers)
    evaluation_master = property(lambda self: "")
    global_id_in_cluster = property(lambda self: self._task_id)
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs)


def _distributed_session_config(task_type: str, task_id: int):
    """TF 1.15's default session config of a training task: it sees the ps tasks and itself
    only (a worker's session never waits for the other workers or the evaluator)."""
    from tensorweave.proto import config_pb2

    return config_pb2.ConfigProto(allow_soft_placement=True,
                                  device_filters=["/job:ps", f"/job:{task_type}/task:{task_id}"])
