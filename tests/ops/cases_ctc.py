"""CTC ops in the harness, with TensorFlow's outputs (tests/data/ctc_expected.npz) as the
reference; test_ctc.py covers the options, errors and gradients."""

from pathlib import Path

import numpy as np

from tensorweave.ops.apply import apply_op
from tests.ops import ctc_cases
from tests.ops.harness import OpCase

_TF = np.load(Path(__file__).resolve().parents[1] / "data" / "ctc_expected.npz")
_IDX = np.array(ctc_cases.IDX, np.int64)
_VALS = np.array(ctc_cases.VALS, np.int32)


def _tf(name, n):
    return lambda *_: [_TF[f"{name}/{i}"] for i in range(n)]


def _unweighted_grad(*_):
    # NOTE: the op's gradient output is d(sum of losses)/d logits; the fixture's is weighted
    # per batch entry by WEIGHTS, so divide it back out.
    return [_TF["loss/0"], _TF["loss/1"] / ctc_cases.WEIGHTS[None, :, None]]


def _beam(x, seq):
    ix, val, shape, log_prob = apply_op("CTCBeamSearchDecoder", x, seq, beam_width=3,
                                        top_paths=3)
    return [*ix, *val, *shape, log_prob]


def _beam_ref(*_):
    """The fixture's per-path (indices, values, shape) triples in the op's output order."""
    parts = [_TF[f"beam_3_top3/{i}"] for i in range(10)]
    return parts[0:9:3] + parts[1:9:3] + parts[2:9:3] + [parts[9]]


CASES = [
    OpCase("CTCLoss", lambda x, i, v, s: apply_op("CTCLoss", x, i, v, s),
           [ctc_cases.LOGITS, _IDX, _VALS, ctc_cases.SEQ], _unweighted_grad,
           rtol=2e-5, atol=2e-5),
    OpCase("CTCGreedyDecoder", lambda x, s: apply_op("CTCGreedyDecoder", x, s,
                                                     merge_repeated=True),
           [ctc_cases.LOGITS, ctc_cases.SEQ], _tf("greedy", 4), rtol=1e-6,
           exact_static_shape=False),
    OpCase("CTCBeamSearchDecoder", _beam, [ctc_cases.LOGITS, ctc_cases.SEQ], _beam_ref,
           rtol=2e-5, atol=2e-5, exact_static_shape=False),
]
