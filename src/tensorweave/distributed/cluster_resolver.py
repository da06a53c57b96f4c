"""Clusters from the environment: `tf.distribute.cluster_resolver` (TF_CONFIG, Slurm, given).

`tf_config()` is the ONE reader of the TF_CONFIG environment variable (the estimator's RunConfig
and `tensorweave server --from-env` use it too). TF_CONFIG is JSON as TensorFlow reads it:

    {"cluster": {"chief": ["h0:2222"], "ps": ["h1:2222"], "worker": ["h2:2222", ...]},
     "task": {"type": "worker", "index": 0}, "rpc_layer": "grpc", "environment": "cloud",
     "session_master": "..."}

`task.type` may also be "evaluator", a task outside the cluster (it trains nothing and has
no address). A TF_CONFIG that is not a JSON object is a ValueError naming the variable.

`SlurmClusterResolver` lays out tasks as TF's does: hosts from SLURM_STEP_NODELIST
(`n[01-03],m5`), tasks per host from SLURM_STEP_TASKS_PER_NODE (`2(x3),1`), this task's rank
from SLURM_PROCID; the job-level variables (SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE,
SLURM_NTASKS) stand in outside a job step. Hosts are taken in sorted order, each host's tasks
on ports port_base, port_base+1, ...; jobs are filled in sorted job-name order by rank.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

from tensorweave.distributed.cluster import ClusterSpec

TF_CONFIG = "TF_CONFIG"


def tf_config(environ=None) -> dict:
    """The parsed TF_CONFIG of `environ` (default os.environ); {} when unset or empty.

    Raises: ValueError when it is not a JSON object."""
    raw = (os.environ if environ is None else environ).get(TF_CONFIG, "").strip()
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as e:
        raise ValueError(f"{TF_CONFIG} is not valid JSON ({e}): {raw[:200]!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{TF_CONFIG} must be a JSON object, not {type(value).__name__}")
    return value


def format_master_url(master: str, rpc_layer: str | None = None) -> str:
    """`rpc_layer://master` (`master` alone without a layer), as TF's."""
    return f"{rpc_layer}://{master}" if rpc_layer else master


def _local_accelerators() -> dict[str, int]:
    """Accelerator devices of this process by type: tensorweave's devices are CPUs (not
    accelerators), so none."""
    return {}


class ClusterResolver:
    """TF's abstract resolver: `cluster_spec()`, `master()`, `task_type`, `task_id`,
    `rpc_layer`, `environment`, `num_accelerators()`."""

    def cluster_spec(self) -> ClusterSpec:
        raise NotImplementedError

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        raise NotImplementedError

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        """Accelerators (GPU, TPU) per type of this task: none on a CPU-only host."""
        del task_type, task_id, config_proto
        return _local_accelerators()

    @property
    def environment(self) -> str:
        return ""


class SimpleClusterResolver(ClusterResolver):
    """A resolver of what it is given (`tf.distribute.cluster_resolver.SimpleClusterResolver`)."""

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None,
                 environment="", num_accelerators=None, rpc_layer=None):
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError("cluster_spec must be a `tf.train.ClusterSpec`.")
        if not isinstance(master, str):
            raise TypeError("master must be a string.")
        self._cluster_spec, self._master = cluster_spec, master
        self.task_type, self.task_id = task_type, task_id
        self._environment, self._num_accelerators = environment, num_accelerators
        self.rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        """The given master, or the address of (task_type, task_id) when both are given."""
        if task_type is not None and task_id is not None:
            master = self._cluster_spec.task_address(task_type, task_id)
        else:
            master = self._master
        return format_master_url(master, rpc_layer or self.rpc_layer)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return dict(self._num_accelerators or {})

    @property
    def environment(self) -> str:
        return self._environment


class TFConfigClusterResolver(ClusterResolver):
    """The cluster and this task from TF_CONFIG, read at each call (as TF's); the constructor's
    arguments override its values."""

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        self._task_type, self._task_id = task_type, task_id
        self._rpc_layer, self._environment = rpc_layer, environment

    @property
    def task_type(self) -> str | None:
        if self._task_type is not None:
            return str(self._task_type)
        task = tf_config().get("task") or {}
        return str(task["type"]) if "type" in task else None

    @task_type.setter
    def task_type(self, value) -> None:
        self._task_type = value

    @property
    def task_id(self) -> int | None:
        if self._task_id is not None:
            return int(self._task_id)
        task = tf_config().get("task") or {}
        return int(task["index"]) if "index" in task else None

    @task_id.setter
    def task_id(self, value) -> None:
        self._task_id = value

    @property
    def rpc_layer(self) -> str | None:
        return self._rpc_layer if self._rpc_layer is not None else tf_config().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, value) -> None:
        self._rpc_layer = value

    @property
    def environment(self):
        return self._environment

    def cluster_spec(self) -> ClusterSpec:
        return ClusterSpec(tf_config().get("cluster") or {})

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        """`session_master` when TF_CONFIG has it; '' for a cluster of one task (a local
        session); else the address of this task (or the one named) with the rpc layer."""
        config = tf_config()
        if config.get("session_master") is not None:
            return config["session_master"]
        spec = self.cluster_spec()
        if not spec.jobs or (len(spec.jobs) == 1 and spec.num_tasks(spec.jobs[0]) == 1):
            return ""
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        layer = rpc_layer if rpc_layer is not None else self.rpc_layer
        return format_master_url(spec.task_address(task_type, task_id), layer)


# -- Slurm ------------------------------------------------------------------------------------
def expand_hostlist(hostlist: str) -> list[str]:
    """Slurm's compressed host list, in order: 'n[1-2],m5,o[03-04,6]' -> n1 n2 m5 o03 o04 o6.

    Raises: ValueError naming the list when it is malformed."""
    hosts: list[str] = []
    for part in _split_outside_brackets(hostlist):
        m = re.fullmatch(r"([^,\[\]]*)(?:\[([^\]]+)\])?", part)
        if m is None or not part:
            raise ValueError(f'Invalid hostlist format "{hostlist}": bad part {part!r}')
        prefix, ranges = m.group(1), m.group(2)
        if ranges is None:
            hosts.append(prefix)
            continue
        for piece in ranges.split(","):
            lo, _, hi = piece.partition("-")
            if not lo.isdigit() or (hi and not hi.isdigit()):
                raise ValueError(f'Invalid hostlist format "{hostlist}": bad range {piece!r}')
            width = len(lo)
            hosts.extend(prefix + str(i).zfill(width) for i in range(int(lo), int(hi or lo) + 1))
    return hosts


def _split_outside_brackets(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for c in text:
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += c
    parts.append(current)
    return parts


def expand_tasks_per_node(tasks_per_node: str) -> list[int]:
    """Slurm's tasks per node, in host order: '3(x2),2,1' -> [3, 3, 2, 1]."""
    counts: list[int] = []
    for part in tasks_per_node.split(","):
        m = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", part.strip())
        if m is None:
            raise ValueError(f'Invalid tasks-per-node list format "{tasks_per_node}"')
        counts += [int(m.group(1))] * int(m.group(2) or 1)
    return counts


def _slurm(name: str, *fallbacks: str) -> str:
    for key in (name, *fallbacks):
        if key in os.environ:
            return os.environ[key]
    raise RuntimeError(f"{name} not found in environment. Not running inside a SLURM step?")


def num_gpus() -> int:
    """GPUs of this node: CUDA_VISIBLE_DEVICES, else `nvidia-smi --list-gpus`, else 0."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip()])
    try:
        out = subprocess.run(["nvidia-smi", "--list-gpus"], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(line.startswith("GPU ") for line in out.splitlines())


class SlurmClusterResolver(ClusterResolver):
    """The cluster of a Slurm job step (`tf.distribute.cluster_resolver.SlurmClusterResolver`).

    `jobs` ({job: task count}, default {"worker": all tasks}) must add up to the step's tasks.
    GPUs: `gpus_per_task` of `gpus_per_node` each (default: the node's GPUs shared evenly), set
    in CUDA_VISIBLE_DEVICES by `cluster_spec()` when `auto_set_gpu`; with no GPUs, tasks get
    none. Raises RuntimeError when a Slurm variable is missing or the counts do not fit.
    """

    def __init__(self, jobs=None, port_base=8888, gpus_per_node=None, gpus_per_task=None,
                 tasks_per_node=None, auto_set_gpu=True, rpc_layer="grpc"):
        self._rank = int(_slurm("SLURM_PROCID"))
        if isinstance(tasks_per_node, dict):
            self._layout = dict(tasks_per_node)
        elif tasks_per_node is not None:
            self._layout = {h: int(tasks_per_node) for h in self._hosts()}
        else:
            counts = expand_tasks_per_node(_slurm("SLURM_STEP_TASKS_PER_NODE",
                                                  "SLURM_TASKS_PER_NODE"))
            self._layout = dict(zip(self._hosts(), counts))
        n_tasks = sum(self._layout.values())
        if jobs is None:
            jobs = {"worker": int(_slurm("SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"))}
        self._jobs = dict(jobs)
        per_node = max(self._layout.values())
        self._gpus_per_node = num_gpus() if gpus_per_node is None else int(gpus_per_node)
        self._gpus_per_task = (self._gpus_per_node // per_node if gpus_per_task is None
                               else int(gpus_per_task))
        if per_node * self._gpus_per_task > self._gpus_per_node:
            raise RuntimeError("Requested more GPUs per node than available.")
        if sum(self._jobs.values()) != n_tasks:
            raise RuntimeError(f"Requested {sum(self._jobs.values())} tasks but only "
                               f"{n_tasks} were assigned.")
        self._port_base, self._auto_set_gpu = int(port_base), auto_set_gpu
        self.rpc_layer = rpc_layer
        self.task_type: str | None = None
        self.task_id: int | None = None

    @staticmethod
    def _hosts() -> list[str]:
        return expand_hostlist(_slurm("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"))

    def cluster_spec(self) -> ClusterSpec:
        """The spec (computed again at each call) and, as a side effect, `task_type`/`task_id`
        of this rank and its CUDA_VISIBLE_DEVICES (with `auto_set_gpu` and GPUs)."""
        addresses, gpus = [], []
        g = self._gpus_per_task
        for host, n in sorted(self._layout.items()):
            for k in range(n):
                addresses.append(f"{host}:{self._port_base + k}")
                gpus.append(",".join(str(i) for i in range(k * g, (k + 1) * g)))
        spec, start = {}, 0
        for job, n in sorted(self._jobs.items()):
            spec[job] = addresses[start:start + n]
            if start <= self._rank < start + n:
                self.task_type, self.task_id = job, self._rank - start
            start += n
        if self._auto_set_gpu and g > 0 and self._rank < len(gpus):
            os.environ["CUDA_VISIBLE_DEVICES"] = gpus[self._rank]
        return ClusterSpec(spec)

    def get_task_info(self) -> tuple[str | None, int | None]:
        return self.task_type, self.task_id

    def master(self, task_type=None, task_id=None, rpc_layer=None) -> str:
        spec = self.cluster_spec()
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        if task_type is None or task_id is None:
            return ""
        return format_master_url(spec.task_address(task_type, task_id),
                                 rpc_layer or self.rpc_layer)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None) -> dict:
        return {"GPU": self._gpus_per_task}


__all__ = ["ClusterResolver", "SimpleClusterResolver", "SlurmClusterResolver",
           "TFConfigClusterResolver", "expand_hostlist", "expand_tasks_per_node",
           "format_master_url", "tf_config"]
