"""The master knows workers only through a `WorkerCache` and `WorkerInterface`: a step's
partitions are registered, run and (one partition) called through them, the local path
included."""

from __future__ import annotations

import numpy as np

import tensorweave as tf
from tensorweave import ir
from tensorweave.master.master import LocalMaster
from tensorweave.master.worker_cache import LocalWorkerCache
from tensorweave.runtime.device import local_device_names
from tensorweave.runtime.worker import LocalWorker


class _CountingWorker(LocalWorker):
    def __init__(self, names):
        super().__init__(names)
        self.calls: list[str] = []

    def runner(self, handle):
        self.calls.append("runner")
        return super().runner(handle)

    def run_graph(self, handle, step_id, args, options, ctx=None):
        self.calls.append("run_graph")
        return super().run_graph(handle, step_id, args, options, ctx)


class _CountingCache(LocalWorkerCache):
    def __init__(self, worker):
        super().__init__(worker)
        self.calls: list[str] = []

    def worker_for(self, device):
        self.calls.append("worker_for")
        return super().worker_for(device)

    def new_step(self, participants):
        self.calls.append(f"new_step({participants})")
        return super().new_step(participants)


def _graph(two_devices: bool) -> ir.GraphDef:
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [], name="x")
        with tf.device("/cpu:1" if two_devices else "/cpu:0"):
            y = tf.multiply(x, 3.0, name="y")
        tf.identity(y, name="out")
    return g._as_ir()


def test_a_one_partition_step_is_called_through_the_workers_runner():
    worker = _CountingWorker(local_device_names(cpus=1))
    cache = _CountingCache(worker)
    m = LocalMaster(cache)
    h = m.create_session(_graph(False), {})
    cid, _ = m.make_callable(h, ["x:0"], ["out:0"], [])
    for _ in range(3):
        out, _ = m.run_callable(h, cid, [np.float32(2.0)])
        assert out[0] == 6.0
    assert worker.calls == ["runner"]        # asked once, then called directly
    assert "worker_for" in cache.calls
    m.close_session(h)


def test_a_two_device_step_runs_through_the_cache_and_the_interface():
    worker = _CountingWorker(local_device_names(cpus=2))
    cache = _CountingCache(worker)
    m = LocalMaster(cache)
    h = m.create_session(_graph(True), {"device_count": {"CPU": 2}})
    assert [d["name"] for d in m.list_devices(h)] == local_device_names(cpus=2)
    cid, _ = m.make_callable(h, ["x:0"], ["out:0"], [])
    out, _ = m.run_callable(h, cid, [np.float32(2.0)])
    assert out[0] == 6.0
    assert "new_step(2)" in cache.calls and worker.calls.count("run_graph") == 2
    m.close_session(h)
