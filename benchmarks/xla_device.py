"""XLA beside TensorFlow: training steps on our CPU device, on `/device:XLA_CPU:0`, and on the
CPU device with auto-clustering (`global_jit_level=ON_1`), with TensorFlow 2.21's step of the
same TF1 code in the same run (this file runs under both: `--tensorflow` with the peer
Python). Needs jax (`pip install tensorweave[xla]`); without it prints only an `_error`.

Models: the MLP 64-256-256-10 at batch 128 and 64-1024-1024-10 at batch 1024 (Adam, digits),
the CNN 28x28 b64 (two conv+pool, dense 128, Adam) and the PTB-small LSTM language model
(2 x 200, 20 steps, batch 20, vocabulary 10k, clipped SGD). Each gives
`<model>_<mode>_step_ms` (the best of the timed steps, as models.py takes them) and
`<model>_<mode>_first_s` (the first step: placement, passes and, on XLA, compilation) with
`<model>_<mode>_init_s` (the initializers' run before it); TensorFlow's come as
`tf_<model>_step_ms`. Rounds (BENCH_ROUNDS, default 2) take turns, ours then TF's, and each
step figure is the best round's, so a busy spell on this shared machine does not land on one
side only; first-step and init figures are the first round's (cold: later rounds would find
the executables in jax's in-process compilation cache). `mlp1024_gemm_floor_ms` is the
step's eight GEMMs alone, the faster of numpy's (`..._numpy_ms`) and one XLA executable of
them (`..._xla_ms`, the threads the XLA step gets). `--only=NAME[,NAME]` runs some models.
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


def step_times(model: str, mode: str) -> tuple[float, float, float]:
    """(init s, first step s, best step ms) of `model` in `mode` (cpu, jit, xla)."""
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
            t = time.perf_counter()
            sess.run(tf.global_variables_initializer())
            init = time.perf_counter() - t
            t = time.perf_counter()
            sess.run(train, feed)
            first = time.perf_counter() - t
            sess.run(train, feed)
            times = []
            for _ in range(steps):
                t = time.perf_counter()
                sess.run(train, feed)
                times.append(time.perf_counter() - t)
    return round(init, 3), round(first, 3), round(min(times) * 1e3, 3)


def _gemms(x, w1, w2, w3, t):
    """The MLP-1024 step's GEMMs: 3 forward, 5 backward (no gradient for x), in `t`'s ops."""
    h1 = x @ w1
    h2 = h1 @ w2
    g = h2 @ w3
    g2 = g @ t(w3)
    g1 = g2 @ t(w2)
    return g, t(h2) @ g, t(h1) @ g2, t(x) @ g1


def gemm_floor_ms(batch=1024, hidden=1024, reps=10) -> dict:
    """The MLP-1024 step's GEMMs in numpy and as one XLA executable, best of `reps` each."""
    import jax

    rng = np.random.default_rng(0)
    args = [rng.random(s, dtype=np.float32) for s in ((batch, 64), (64, hidden),
                                                      (hidden, hidden), (hidden, 10))]
    on_xla = jax.jit(lambda *a: _gemms(*a, t=lambda m: m.T))
    dev = [jax.device_put(a) for a in args]
    runs = {"numpy": lambda: _gemms(*args, t=lambda m: m.T),
            "xla": lambda: jax.block_until_ready(on_xla(*dev))}
    out = {}
    for name, run in runs.items():
        run()
        best = float("inf")
        for _ in range(reps):
            t = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - t)
        out[f"mlp1024_gemm_{name}_ms"] = round(best * 1e3, 3)
    out["mlp1024_gemm_floor_ms"] = min(out.values())
    return out


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
        init, first, step = step_times(model, "cpu")
        out[f"tf_{model}_init_s"], out[f"tf_{model}_first_s"] = init, first
        out[f"tf_{model}_step_ms"] = step
    print(json.dumps(out))


def main() -> None:
    from tensorweave.runtime.kernels.xla.backend import available

    if not available():
        print(json.dumps({"_error": "XLA rows not measured: jax is not installed "
                                    "(pip install -e '.[xla]')"}))
        return
    peer = os.environ.get("PEER_PYTHON")
    out: dict = gemm_floor_ms()
    skipped: dict = {}
    for _ in range(int(os.environ.get("BENCH_ROUNDS", "2"))):
        for model in _only():
            for mode in MODES:
                try:
                    init, first, step = step_times(model, mode)
                except tf.errors.OpError as e:  # NOTE: what this device cannot run yet
                    skipped[f"{model}_{mode}"] = f"{type(e).__name__}: {e.message}"[:300]
                    continue
                out.setdefault(f"{model}_{mode}_init_s", init)    # the cold (first) round's
                out.setdefault(f"{model}_{mode}_first_s", first)
                _keep_best(out, f"{model}_{mode}_step_ms", step)
            for k, v in (_peer_step(model, peer) if peer else {}).items():
                if k == "_error":
                    out.setdefault("_error", v)
                elif k.endswith("_s"):
                    out.setdefault(k, v)
                else:
                    _keep_best(out, k, v)
    if skipped:
        out["_skipped"] = skipped
    print(json.dumps(out))


if __name__ == "__main__":
    main_tensorflow() if TENSORFLOW else main()
