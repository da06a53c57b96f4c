"""`tf.test`'s module-level helpers: `main`, `get_temp_dir`, device queries,
`create_local_cluster`, `assert_equal_graph_def`, `Benchmark`, `StubOutForTesting`."""

from __future__ import annotations

import importlib.util
import os
import socket
import sys
import tempfile
import time

_TEMP_DIR: list[str] = []


def get_temp_dir() -> str:
    """One temporary directory for the whole process (test cases make theirs inside)."""
    if not _TEMP_DIR:
        base = os.environ.get("TEST_TMPDIR") or tempfile.gettempdir()
        _TEMP_DIR.append(tempfile.mkdtemp(prefix="tensorweave_test_", dir=base))
    return _TEMP_DIR[0]


def main(argv=None):
    """Runs the tests of `__main__` with absltest, flags parsed as `tf.app.run` does (unknown
    ones left to absltest/unittest); exits with the result."""
    from absl import app as absl_app
    from absl import flags as absl_flags
    from absl.testing import absltest

    return absl_app.run(main=lambda args: absltest.main(argv=args),
                        argv=sys.argv if argv is None else argv,
                        flags_parser=lambda args: absl_flags.FLAGS(args, known_only=True))


def _local_device_types() -> list[str]:
    from tensorweave.client.session import Session
    from tensorweave.framework.graph import Graph

    with Session(graph=Graph()) as sess:
        return [d.device_type for d in sess.list_devices()]


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None) -> bool:
    """True when this process has a GPU device."""
    del cuda_only, min_cuda_compute_capability
    return "GPU" in _local_device_types()


def gpu_device_name() -> str:
    """'/device:GPU:0' when there is a GPU, else ''."""
    return "/device:GPU:0" if is_gpu_available() else ""


def is_built_with_cuda() -> bool:
    return is_gpu_available()


def is_built_with_gpu_support() -> bool:
    return is_gpu_available()


def is_built_with_rocm() -> bool:
    return False


def is_built_with_xla() -> bool:
    """True when jax (the XLA device's backend) can be imported."""
    return importlib.util.find_spec("jax") is not None


def is_cpu_target_available(cpu) -> bool:
    del cpu
    return True


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def create_local_cluster(num_workers, num_ps, protocol="grpc", worker_config=None,
                         ps_config=None):
    """Starts `num_workers` worker and `num_ps` ps servers in this process on free local
    ports; returns (workers, ps_servers) — lists of `tf.train.Server`."""
    from tensorweave.distributed.cluster import ClusterSpec
    from tensorweave.distributed.server import Server

    ports = _free_ports(num_workers + num_ps)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports[:num_workers]]}
    if num_ps:
        cluster["ps"] = [f"127.0.0.1:{p}" for p in ports[num_workers:]]
    spec = ClusterSpec(cluster)
    workers = [Server(spec, "worker", i, protocol=protocol, config=worker_config)
               for i in range(num_workers)]
    ps_servers = [Server(spec, "ps", i, protocol=protocol, config=ps_config)
                  for i in range(num_ps)]
    return workers, ps_servers


def _node_map(graph_def) -> dict:
    return {node.name: node for node in graph_def.node}


def assert_equal_graph_def(actual, expected, checkpoint_v2=False,
                           hash_table_shared_name=False) -> None:
    """Asserts two GraphDefs have the same nodes (order ignored).

    Raises:
      TypeError: not GraphDefs. AssertionError: naming the first difference.
    """
    del checkpoint_v2, hash_table_shared_name
    for name, value in (("actual", actual), ("expected", expected)):
        if not hasattr(value, "node"):
            raise TypeError(f"Expected tf.GraphDef for {name}, got {type(value).__name__}")
    got, want = _node_map(actual), _node_map(expected)
    if set(got) != set(want):
        raise AssertionError(f"Graph differs: only in actual {sorted(set(got) - set(want))}, "
                             f"only in expected {sorted(set(want) - set(got))}")
    for name, node in want.items():
        if got[name] != node:
            raise AssertionError(f"Node {name!r} differs:\nactual:\n{got[name]}\n"
                                 f"expected:\n{node}")


class Benchmark:
    """TF's benchmark base: `report_benchmark` prints one entry per call."""

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None,
                         extras=None, name=None, metrics=None):
        fields = {"iters": iters, "cpu_time": cpu_time, "wall_time": wall_time,
                  "throughput": throughput, "extras": extras, "metrics": metrics}
        shown = ", ".join(f"{k}={v}" for k, v in fields.items() if v is not None)
        print(f"entry {{ name: {name or type(self).__name__} {shown} }}")

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters=2,
                         min_iters=10, store_trace=False, store_memory_usage=True, name=None,
                         extras=None, mbs=0):
        """Runs `op_or_tensor` `min_iters` times after `burn_iters`; reports the median."""
        del store_trace, store_memory_usage, mbs
        for _ in range(burn_iters):
            sess.run(op_or_tensor, feed_dict=feed_dict)
        times = []
        for _ in range(min_iters):
            start = time.time()
            sess.run(op_or_tensor, feed_dict=feed_dict)
            times.append(time.time() - start)
        wall = sorted(times)[len(times) // 2]
        self.report_benchmark(iters=min_iters, wall_time=wall, name=name, extras=extras)
        return {"iters": min_iters, "wall_time": wall, "extras": extras or {}}

    def evaluate(self, tensors):
        from tensorweave.framework.default_session import get_default_session
        return get_default_session().run(tensors)


def benchmark_config():
    """A ConfigProto for benchmarks (TF switches its graph rewrites off; ours is plain)."""
    from tensorweave.proto.config_pb2 import ConfigProto
    return ConfigProto()


class StubOutForTesting:
    """Replaces attributes for a test and puts them back (`UnsetAll`, or on `with` exit)."""

    def __init__(self):
        self._saved: list = []

    def Set(self, parent, child_name, new_child):  # noqa: N802 - TF's name
        old = getattr(parent, child_name)
        self._saved.append((parent, child_name, old))
        setattr(parent, child_name, new_child)

    SmartSet = Set

    def UnsetAll(self):  # noqa: N802
        for parent, name, old in reversed(self._saved):
            setattr(parent, name, old)
        self._saved = []

    SmartUnsetAll = UnsetAll
    CleanUp = UnsetAll

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.UnsetAll()


def disable_with_predicate(pred, skip_message):
    """Decorator: skips the test when `pred()` is true."""
    def decorator(fn):
        def wrapper(self, *args, **kwargs):
            if pred():
                self.skipTest(skip_message)
            return fn(self, *args, **kwargs)
        return wrapper
    return decorator


def with_eager_op_as_function(cls=None, only_as_function=False):
    """TF2's eager decorator; graph-mode tests are unchanged by it."""
    del only_as_function
    return cls if cls is not None else (lambda c: c)


def test_src_dir_path(relative_path) -> str:
    """`relative_path` under the source tree of tensorweave."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(root, relative_path)
