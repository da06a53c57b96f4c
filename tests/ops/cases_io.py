"""Checkpoint I/O ops (ops/io_ops.py). The file-writing ops are stateful and tested end to end
against real checkpoint files; the name ops run in the harness."""

import numpy as np

import tensorweave.runtime.kernels.cpu.io  # noqa: F401  (until runtime.kernels.cpu imports it)
from tensorweave.ops import array_ops, io_ops
from tests.ops.harness import OpCase


def _s(*values):
    arr = np.empty(len(values), dtype=object)
    arr[:] = [v.encode() for v in values]
    return arr


def _scalar(value: str):
    return np.array(value.encode(), dtype=object)


def _join(*arrays, sep=b""):
    arrays = [np.asarray(a, dtype=object) for a in arrays]
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    cols = [np.broadcast_to(a, shape).reshape(-1) for a in arrays]
    out = np.empty(int(np.prod(shape)), dtype=object)
    out[:] = [sep.join(row) for row in zip(*cols)]
    return out.reshape(shape)


def _vec(t):
    """A scalar string output as a 1-vector: sess.run hands scalar strings back as bytes."""
    return array_ops.reshape(t, [1])


CASES = [
    OpCase("ShardedFilename", lambda b, s, n: _vec(io_ops.sharded_filename(b, s, n)),
           [_scalar("ckpt/model"), np.int32(3), np.int32(12)],
           lambda b, s, n: _s("ckpt/model-00003-of-00012")),
    OpCase("ShardedFilespec", lambda b, n: _vec(io_ops.sharded_filespec(b, n)),
           [_scalar("m"), np.int32(2)], lambda b, n: _s("m-?????-of-00002")),
    OpCase("StringJoin", lambda a, b: io_ops.string_join([a, b], separator="/"),
           [_s("a", "bc", ""), _scalar("x")], lambda a, b: _join(a, b, sep=b"/"),
           name="broadcast_scalar"),
    OpCase("StringJoin", lambda a, b, c: io_ops.string_join([a, b, c]),
           [np.array([[b"p", b"q"], [b"r", b""]], dtype=object),
            np.array([[b"1", b"2"], [b"3", b"4"]], dtype=object), _scalar("!")],
           lambda a, b, c: _join(a, b, c), name="matrix"),
]

_COVERED_BY = "tests/training/test_checkpoint_format.py, tests/training/test_saver.py"
EXEMPT = {op: _COVERED_BY for op in ["SaveV2", "RestoreV2", "MergeV2Checkpoints"]}
