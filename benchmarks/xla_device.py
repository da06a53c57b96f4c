"""XLA beside TensorFlow: training steps on our CPU device, on `/device:XLA_CPU:0`, and on the
CPU device with auto-clustering (`global_jit_level=ON_1`), with TensorFlow 2.21's step of the
same TF1 code in the same run (this file runs under both: `--tensorflow` with the peer
Python). Needs jax (`pip install tensorweave[xla]`); without it prints only an `_error`.

Models: the MLP 64-256-256-10 at batch 128 and 64-1024-1024-10 at batch 1024 (Adam, digits),
the CNN 28x28 b64 (two conv+pool, dense 128, Adam) and the PTB-small LSTM language model
(2 x 200, 20 steps, batch 20, vocabulary 10k, clipped SGD). Each gives
`<model>_<mode>_step_ms` (the best of the timed steps, as models.py takes them) and
`<model>_<mode>_first_s` (the first step: placement, passes and, on XLA, compilation);
TensorFlow's come as `tf_<model>_step_ms`. Rounds (BENCH_ROUNDS, default 2) take turns, ours
then TF's, and each figure is the best round's, so a busy spell on this shared machine does
not land on one side only. `mlp1024_gemm_floor_ms` is the step's seven GEMMs in numpy (its
floor). `--only=NAME[,NAME]` runs some models.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import graphs  # noqa: E402

TENSORFLOW = "--tensorflow" in sys.argv
tf = graphs.framework(TENSORFLOW)

MODES = ("cpu", "jit", "xla")
XLA_DEVICE = "/device:XLA_CPU:0"


# model → (builder, timed steps)
MODELS = {
    "mlp_b128": (lambda: graphs.mlp(tf, 128, 256), 200),
    "mlp_b1024_h1024": (lambda: graphs.mlp(tf, 1024, 1024), 15),
    "cnn_b64": (lambda: graphs.cnn(tf), 15),
    "lstm_ptb": (lambda: graphs.lstm_ptb(tf), 8),
}


def _config(mode):
    if TENSORFLOW or mode == "cpu":
        return None
    config = tf.ConfigProto(allow_soft_placement=True)
    if mode == "jit":
        config.graph_options.optimizer_options.global_jit_level = \
            tf.OptimizerOptions.ON_1
    return config


def step_times(model: str, mode: str) -> tuple[float, float]:
    """(first step s, best step ms) of `model` in `mode` (cpu, jit, xla)."""
    build, steps = MODELS[model]
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        if mode == "xla":
            with tf.device(XLA_DEVICE):
                step = build()
        else:
            step = build()
        train, feed = [step.loss, step.train], step.feed
        with tf.Session(config=_config(mode)) as sess:
            sess.run(tf.global_variables_initializer())
            t = time.perf_counter()
            sess.run(train, feed)
            first = time.perf_counter() - t
            sess.run(train, feed)
            times = []
            for _ in range(steps):
                t = time.perf_counter()
                sess.run(train, feed)
                times.append(time.perf_counter() - t)
    return round(first, 3), round(min(times) * 1e3, 3)


def gemm_floor_ms(batch=1024, hidden=1024, reps=5) -> float:
    """The MLP-1024 step's GEMMs (3 forward, 4 backward) in numpy, best of `reps`."""
    rng = np.random.default_rng(0)
    x = rng.random((batch, 64), dtype=np.float32)
    w1, w2, w3 = (rng.random(s, dtype=np.float32) for s in ((64, hidden), (hidden, hidden),
                                                            (hidden, 10)))
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        h1 = x @ w1
        h2 = h1 @ w2
        g = h2 @ w3
        _ = h2.T @ g
        g2 = g @ w3.T
        _ = h1.T @ g2
        g1 = g2 @ w2.T
        _ = x.T @ g1
        best = min(best, time.perf_counter() - t)
    return round(best * 1e3, 3)


def _peer_step(model: str, python: str) -> dict:
    out = subprocess.run([python, __file__, "--tensorflow", f"--only={model}"],
                         capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        return {"_error": f"TF peer, {model}: {out.stderr.strip()[-300:]}"}
    return json.loads(out.stdout[out.stdout.index("{"):])


def _only() -> list[str]:
    only = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")), "")
    return [m for m in MODELS if not only or any(m.startswith(p) for p in only.split(","))]


def _keep_best(out: dict, key: str, value) -> None:
    if isinstance(value, (int, float)) and (key not in out or value < out[key]):
        out[key] = value


def main_tensorflow() -> None:
    out = {}
    for model in _only():
        first, step = step_times(model, "cpu")
        out[f"tf_{model}_first_s"], out[f"tf_{model}_step_ms"] = first, step
    print(json.dumps(out))


def main() -> None:
    from tensorweave.runtime.kernels.xla.backend import available

    if not available():
        print(json.dumps({"_error": "XLA rows not measured: jax is not installed "
                                    "(pip install -e '.[xla]')"}))
        return
    peer = os.environ.get("PEER_PYTHON")
    out: dict = {"mlp1024_gemm_floor_ms": gemm_floor_ms()}
    skipped: dict = {}
    for _ in range(int(os.environ.get("BENCH_ROUNDS", "2"))):
        for model in _only():
            for mode in MODES:
                try:
                    first, step = step_times(model, mode)
                except tf.errors.OpError as e:  # NOTE: what this device cannot run yet
                    skipped[f"{model}_{mode}"] = f"{type(e).__name__}: {e.message}"[:300]
                    continue
                _keep_best(out, f"{model}_{mode}_first_s", first)
                _keep_best(out, f"{model}_{mode}_step_ms", step)
            for k, v in (_peer_step(model, peer) if peer else {}).items():
                if k == "_error":
                    out.setdefault("_error", v)
                _keep_best(out, k, v)
    if skipped:
        out["_skipped"] = skipped
    print(json.dumps(out))


if __name__ == "__main__":
    main_tensorflow() if TENSORFLOW else main()
