"""`ClusterSpec`: jobs and their tasks' addresses, as TF's `tf.train.ClusterSpec`."""

from __future__ import annotations

import json


class ClusterSpec:
    """A cluster: `{"ps": ["host:port", ...], "worker": {0: "host:port", 2: ...}}`.

    Accepts a dict of lists (task i = position i) or dicts (sparse task indices), a JSON
    string of the same, another ClusterSpec, or a ClusterDef proto.
    Raises:
      TypeError / ValueError: a malformed spec (named in the message).
    """

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            self._jobs = {j: dict(t) for j, t in cluster._jobs.items()}
        elif isinstance(cluster, str):
            self._jobs = _from_dict(json.loads(cluster))
        elif isinstance(cluster, dict):
            self._jobs = _from_dict(cluster)
        elif hasattr(cluster, "job"):
            self._jobs = {j.name: {int(k): v for k, v in j.tasks.items()} for j in cluster.job}
        else:
            raise TypeError(f"Cannot make a ClusterSpec from {type(cluster).__name__}")

    @property
    def jobs(self) -> list[str]:
        return sorted(self._jobs)

    def num_tasks(self, job_name: str) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        return sorted(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._job(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index} in job {job_name}")
        return tasks[task_index]

    def job_tasks(self, job_name: str) -> list:
        """Addresses by task index; None for indices missing from a sparse job."""
        tasks = self._job(job_name)
        return [tasks.get(i) for i in range(max(tasks) + 1)] if tasks else []

    def as_dict(self) -> dict:
        out = {}
        for job, tasks in self._jobs.items():
            dense = sorted(tasks) == list(range(len(tasks)))
            out[job] = [tasks[i] for i in sorted(tasks)] if dense else dict(tasks)
        return out

    def as_cluster_def(self):
        from tensorweave.proto import cluster_pb2

        cd = cluster_pb2.ClusterDef()
        for job in self.jobs:
            j = cd.job.add(name=job)
            for i, addr in sorted(self._jobs[job].items()):
                j.tasks[i] = addr
        return cd

    def tasks(self) -> list[tuple[str, int, str]]:
        """Every (job, task index, address), sorted."""
        return [(j, i, self._jobs[j][i]) for j in self.jobs for i in sorted(self._jobs[j])]

    def _job(self, job_name: str) -> dict[int, str]:
        if job_name not in self._jobs:
            raise ValueError(f"No such job in cluster: {job_name!r} (jobs: {self.jobs})")
        return self._jobs[job_name]

    def __eq__(self, other) -> bool:
        return isinstance(other, ClusterSpec) and self._jobs == other._jobs

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __repr__(self) -> str:
        return f"ClusterSpec({self.as_dict()!r})"


def _from_dict(d: dict) -> dict[str, dict[int, str]]:
    jobs: dict[str, dict[int, str]] = {}
    for job, tasks in d.items():
        if not isinstance(job, str):
            raise TypeError(f"Job names must be strings, got {job!r}")
        if isinstance(tasks, dict):
            jobs[job] = {int(k): _addr(v, job) for k, v in tasks.items()}
        elif isinstance(tasks, (list, tuple)):
            jobs[job] = {i: _addr(v, job) for i, v in enumerate(tasks)}
        else:
            raise TypeError(f"Tasks of job {job!r} must be a list or dict, got {tasks!r}")
    return jobs


def _addr(v, job: str) -> str:
    if not isinstance(v, str) or ":" not in v:
        raise ValueError(f"Task address {v!r} of job {job!r} must be 'host:port'")
    return v
