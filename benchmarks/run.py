"""Runs the benchmark suite beside its peers and writes BENCHMARKS.md.

Each script runs in its own process and prints one JSON object: ours (benchmarks/*.py), the
numpy floor (../shared/peers/numpy_floor.py, with our Python) and, when PEER_PYTHON names a
Python with TensorFlow (../shared/peers/setup_tf_peer.sh), the TensorFlow peer — all in the
same run, so the ratios compare like with like on a noisy machine.

The main table's three scripts run ROUNDS times (BENCH_ROUNDS, default 3), taking turns, and
each figure is the best of its rounds, for every column alike: the machine's neighbours come
and go within minutes, and a single run can land one side in a busy spell. The ratio of each
round is listed too, so the spread stays visible.

The load section runs every training step (training_steps.py, and models.py's training rows:
the same TF1 file under both) three ways, ours then TF's each time: quiet, beside one busy
neighbour process the benchmark starts, and in a child limited to one CPU (`limits.py`: a
cgroup of its own where the machine allows, else one core and two busy neighbours).

Sections: BENCH_SECTIONS=main,load,suites (default: all) runs some of them; the others are
taken from the last run's benchmarks/last_run.json, and BENCHMARKS.md says when each section
ran and what the machine's load average was then.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from benchmarks import limits

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT.parent / "shared" / "peers"

# (label, our key, TF key, numpy-floor key, target as a ratio to TF or None, target text)
ROWS = [
    ("session.run, fed scalar add (µs)", "run_latency_add_us", "run_latency_add_us", None,
     0.2, "≤ 0.2× TF"),
    ("session.run, numpy-scalar feed (µs)", "run_latency_add_npfeed_us",
     "run_latency_add_npfeed_us", None, None, ""),
    ("session.run, constant add (µs)", "run_latency_const_us", "run_latency_const_us", None,
     None, ""),
    ("1000-op sin chain, per op (µs)", "chain1000_per_op_us", "chain1000_per_op_us",
     "np_sin_scalar_per_op_us", None, "≤ 1.0 µs/op"),
    ("100-op sin chain, whole run (µs)", "chain100_run_us", "chain100_run_us", None, None, ""),
    ("30k-node graph, first run (s)", "big_graph_30k_first_run_s", "big_graph_30k_first_run_s",
     None, 0.3, "≤ 0.3× TF"),
    ("30k-node graph, steady run (ms)", "big_graph_30k_steady_run_ms",
     "big_graph_30k_steady_run_ms", None, 1.5, "≤ 1.5× TF (≤ 2× before passes)"),
    ("MLP 64-256-256-10 b128 Adam step (ms)", "mlp_b128_h256_step_ms", "mlp_b128_h256_step_ms",
     "np_mlp_b128_h256_step_ms", 1.2, "≤ 1.2× TF"),
    ("MLP 64-1024-1024-10 b1024 step (ms)", "mlp_b1024_h1024_step_ms",
     "mlp_b1024_h1024_step_ms", "np_mlp_b1024_h1024_step_ms", 1.1, "≤ 1.1× TF"),
    ("CNN 28×28 b64 Adam step (ms)", "cnn_b64_28x28_step_ms", "cnn_b64_28x28_step_ms",
     "np_cnn_b64_28x28_step_ms", 2.0, "≤ 2× TF"),
]

# (label, key with the feature, key without it): what a master feature buys, ours only
GAINS = [
    ("fusion (remapper), MLP b128 step", "mlp_b128_h256_step_ms",
     "mlp_b128_h256_step_nofusion_ms"),
    ("fusion (remapper), CNN b64 step", "cnn_b64_28x28_step_ms", "cnn_b64_28x28_step_nofusion_ms"),
    ("inter-op parallelism (2 threads), 16 independent 128² matmul+tanh", "wide_matmul_ms",
     "wide_matmul_1thread_ms"),
    ("all passes, 30k-node graph steady run", "big_graph_30k_steady_run_ms",
     "big_graph_30k_steady_nopasses_ms"),
] + [(f"pass `{p}` alone switched off, 30k-node graph", "big_graph_30k_steady_run_ms",
      f"big_graph_30k_steady_no_{p}_ms")
     for p in ("constant_folding", "arithmetic", "cse", "dependency", "remapper")]


# A suite whose script measures its peer itself, in turns with ours (its peer keys are in
# its own output).
SELF_PEER = "(measured by the script)"

# Other suites: (title, our script, peer script or None, [(label, our key, peer key, target)])
SUITES = [
    ("Input pipeline (50k Examples of 784 floats + label; records/s, higher is better)",
     "tfdata_pipeline.py", "tf_input_pipeline.py", [
         ("TFRecord write", "write_records_per_s", "write_records_per_s", "≥ 1.0× TF"),
         ("read+parse+batch(128), 1 parallel call", "read_parse_batch_par1_records_per_s",
          "read_parse_batch_par1_records_per_s", "≥ 1.0× TF"),
         ("read+parse+batch(128), 2 parallel calls", "read_parse_batch_par2_records_per_s",
          "read_parse_batch_par2_records_per_s", "≥ 1.0× TF"),
         ("RSS growth over 5 shuffled epochs (MB)", "shuffle_5_epochs_rss_growth_MB", None,
          "bounded"),
     ]),
    ("Distributed (ps and worker servers in one process, talking over 127.0.0.1)",
     "distributed.py", "tf_distributed.py", [
        ("remote run latency, trivial graph (µs)", "remote_run_latency_us",
         "remote_run_latency_us", "≤ TF"),
        ("1 MB transfer (GB/s)", "transfer_1MB_GBps", "transfer_1MB_GBps", "≥ 1.0× TF"),
        ("64 MB transfer (GB/s)", "transfer_64MB_GBps", "transfer_64MB_GBps", "≥ 1.5× TF"),
    ]),
    ("Cluster steps, each task its own process on this host (2 ps, 2 workers over 127.0.0.1; "
     "ms; the same TF1 code under both, ours and TF's in turns)", "cluster_processes.py",
     SELF_PEER, [
        ("MLP 64-256-256-10 b128 step, 1 ps + 2 worker towers", "mlp_ps2w_step_ms",
         "tf_mlp_ps2w_step_ms", "≤ 1.2× TF"),
        ("word2vec step, 1,000,000 × 64 tables in 2 parts on 2 ps", "sharded_embedding_step_ms",
         "tf_sharded_embedding_step_ms", "≤ 1.2× TF"),
        ("bytes that crossed the network in that step", "sharded_embedding_bytes_per_step",
         "tf_sharded_embedding_bytes_per_step", "≤ 1.05× TF"),
    ]),
    ("Tasks on network-namespace hosts (4 hosts on a bridge, tests/distributed/netns.py; ms; "
     "needs root: skipped without)", "namespace_hosts.py", SELF_PEER, [
        ("ps → worker transfer, 1 MB", "transfer_1MB_ms", "tf_transfer_1MB_ms", "≤ 1.0× TF"),
        ("ps → worker transfer, 64 MB", "transfer_64MB_ms", "tf_transfer_64MB_ms", "≤ 1.0× TF"),
        ("MLP step, 1 ps + 2 worker towers", "mlp_ps2w_step_ms", "tf_mlp_ps2w_step_ms",
         "≤ 1.2× TF"),
        ("word2vec step, tables in 2 parts on 2 ps", "sharded_embedding_step_ms",
         "tf_sharded_embedding_step_ms", "≤ 1.2× TF"),
        ("bytes that crossed the network in that step", "sharded_embedding_bytes_per_step",
         "tf_sharded_embedding_bytes_per_step", "≤ 1.05× TF"),
    ]),
    ("Checkpoints (1 GiB of float32; seconds; the peer column is plain numpy file I/O)",
     "checkpoint.py", None, [
         ("save vs numpy tofile", "checkpoint_save_s", "numpy_write_s", "≤ 1.5×"),
         ("restore vs numpy fromfile", "checkpoint_restore_s", "numpy_read_s", "≤ 1.5×"),
     ]),
    ("Peak memory of the CNN training process (MB, max RSS; the same script runs under TF)",
     "cnn_memory.py", "cnn_memory.py", [
         ("train 20 CNN steps", "cnn_train_peak_rss_MB", "cnn_train_peak_rss_MB", "≤ TF"),
     ]),
    ("More kinds of models (ms; the same TF1 file runs under TensorFlow)", "models.py",
     "models.py", [
         ("ResNet-20 32×32×3 b128 step, batch norm, momentum", "resnet20_b128_step_ms",
          "resnet20_b128_step_ms", "≤ 1.0× TF"),
         ("LSTM LM 2×200, 20 steps, b20, vocab 10k step", "lstm_ptb_small_step_ms",
          "lstm_ptb_small_step_ms", "≤ 1.0× TF"),
         ("demo CNN inference, batch 1", "cnn_infer_b1_ms", "cnn_infer_b1_ms", "≤ 1.0× TF"),
         ("tf.keras model.fit, digits CNN, per batch of 64", "keras_fit_cnn_b64_step_ms",
          "keras_fit_cnn_b64_step_ms", "≤ 1.0× TF"),
         ("word2vec NCE step, vocab 10k", "word2vec_nce_10k_step_ms",
          "word2vec_nce_10k_step_ms", "≤ 1.0× TF"),
         ("word2vec NCE step, vocab 50k", "word2vec_nce_50k_step_ms",
          "word2vec_nce_50k_step_ms", "≤ 1.0× TF"),
         ("word2vec NCE step, vocab 200k", "word2vec_nce_200k_step_ms",
          "word2vec_nce_200k_step_ms", "≤ 1.2× the 10k step"),
         ("tf.while_loop counting to 10k, per iteration (µs)",
          "while_counter_10k_us_per_iteration", "while_counter_10k_us_per_iteration", "—"),
     ]),
    ("Serving the demo CNN with `tensorweave serve` (gRPC Predict; no TF Serving binary installs "
     "here, so the TF column is TF's Session.run of the same SavedModel in process)",
     "serving.py", "serving.py", [
         ("batch 1 latency p50 (ms)", "grpc_b1_p50_ms", "session_b1_p50_ms", "—"),
         ("batch 1 latency p99 (ms)", "grpc_b1_p99_ms", "session_b1_p99_ms", "—"),
         ("our Session.run of the SavedModel, p50 (ms)", "session_b1_p50_ms",
          "session_b1_p50_ms", "≤ 1.0× TF"),
         ("32 clients, no batching (requests/s)", "grpc_32_clients_no_batching_req_per_s",
          None, ""),
         ("32 clients, batching 32 / 2 ms (requests/s)", "grpc_32_clients_batching_req_per_s",
          None, ""),
         ("server peak RSS, batching (MB)", "server_rss_batching_MB", None, ""),
     ]),
    ("XLA through jax (ms; `xla` = the graph on /device:XLA_CPU:0, `jit` = the CPU device "
     "with global_jit_level=ON_1; TF's step is measured by the script, in turns with ours. "
     "Needs `pip install -e '.[xla]'`: without jax these rows stay empty)",
     "xla_device.py", SELF_PEER, [
         ("LSTM LM PTB-small step, our CPU device", "lstm_ptb_cpu_step_ms",
          "tf_lstm_ptb_step_ms", "—"),
         ("LSTM LM PTB-small step, XLA_CPU", "lstm_ptb_xla_step_ms", "tf_lstm_ptb_step_ms",
          "≤ 1.0× TF"),
         ("LSTM LM PTB-small step, auto-clustering", "lstm_ptb_jit_step_ms",
          "tf_lstm_ptb_step_ms", "≤ 1.0× TF"),
         ("LSTM: XLA_CPU vs our CPU device", "lstm_ptb_xla_step_ms", "lstm_ptb_cpu_step_ms",
          "≤ 0.5×"),
         ("LSTM: auto-clustering vs our CPU device", "lstm_ptb_jit_step_ms",
          "lstm_ptb_cpu_step_ms", "≤ 0.5×"),
         ("MLP 64-256-256-10 b128 step, XLA_CPU", "mlp_b128_xla_step_ms",
          "tf_mlp_b128_step_ms", "≤ 0.8× TF"),
         ("MLP 64-256-256-10 b128 step, auto-clustering", "mlp_b128_jit_step_ms",
          "tf_mlp_b128_step_ms", "≤ 0.8× TF"),
         ("MLP-1024 b1024 step, XLA_CPU vs its GEMM floor", "mlp_b1024_h1024_xla_step_ms",
          "mlp1024_gemm_floor_ms", "≤ 1.1×"),
         ("MLP-1024 b1024 step, auto-clustering vs its GEMM floor",
          "mlp_b1024_h1024_jit_step_ms", "mlp1024_gemm_floor_ms", "≤ 1.1×"),
         ("CNN b64 step, auto-clustering vs without", "cnn_b64_jit_step_ms",
          "cnn_b64_cpu_step_ms", "≤ 1.0×"),
         ("CNN b64 step, XLA_CPU vs TF", "cnn_b64_xla_step_ms", "tf_cnn_b64_step_ms", "—"),
         ("first step (s), CNN on XLA_CPU", "cnn_b64_xla_first_s", None, "≤ 2 s"),
         ("first step (s), CNN auto-clustering", "cnn_b64_jit_first_s", None, "≤ 2 s"),
         ("initializers' run (s), CNN on XLA_CPU", "cnn_b64_xla_init_s", None, "reported"),
         ("first step (s), LSTM on XLA_CPU", "lstm_ptb_xla_first_s", None, "reported"),
         ("first step (s), LSTM auto-clustering", "lstm_ptb_jit_first_s", None, "reported"),
         ("first step (s), MLP b128 on XLA_CPU", "mlp_b128_xla_first_s", None, "reported"),
         ("first step (s), MLP b128 auto-clustering", "mlp_b128_jit_first_s", None,
          "reported"),
         ("first step (s), MLP-1024 on XLA_CPU", "mlp_b1024_h1024_xla_first_s", None,
          "reported"),
         ("first step (s), MLP-1024 auto-clustering", "mlp_b1024_h1024_jit_first_s", None,
          "reported"),
     ]),
    ("Resource watcher overhead (% of step time)", "monitoring.py", None, [
        ("watcher at its default interval", "overhead_percent", None, "< 1%"),
    ]),
]


def run_json(python: str, script: Path | str, module: bool = False, env=None,
             args: tuple = (), preexec=None) -> dict:
    cmd = [python, "-m", str(script)] if module else [python, str(script), *args]
    e = dict(os.environ, **(env or {}))
    try:
        out = subprocess.run(cmd, cwd=ROOT if module else Path(script).parent, env=e,
                             capture_output=True, text=True, timeout=1800,
                             preexec_fn=preexec)
    except subprocess.TimeoutExpired:
        return {"_error": f"{script}: timed out"}
    if out.returncode != 0:
        return {"_error": f"{script}: exit {out.returncode}: {out.stderr.strip()[-600:]}"}
    return json.loads(out.stdout[out.stdout.index("{"):])


ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))


def best_of(runs: list[dict]) -> dict:
    """Per key, the lowest value over the runs (every figure here is a time); the first run's
    other entries (errors, skipped sections) are kept."""
    out = dict(runs[0]) if runs else {}
    for r in runs[1:]:
        for k, v in r.items():
            if isinstance(v, (int, float)) and isinstance(out.get(k), (int, float)):
                out[k] = min(out[k], v)
            elif k not in out:
                out[k] = v
    return out


def round_ratios(ours_runs: list[dict], tf_runs: list[dict]) -> str:
    """One line per targeted figure: ours / TF in each round."""
    lines = []
    for label, key, tf_key, _, target, _ in ROWS:
        if target is None:
            continue
        rs = [o[key] / t[tf_key] for o, t in zip(ours_runs, tf_runs)
              if o.get(key) is not None and t.get(tf_key)]
        if rs:
            lines.append(f"- {label}: " + ", ".join(f"{r:.3g}×" for r in rs))
    return "\n".join(lines)


TRAINING_NOTES = """\
On the training rows: the numpy floor's CNN is a plain im2col convolution (the whole batch's
patch matrix, then one BLAS matmul), and its MLPs the same GEMMs as ours without a graph. Our
CNN step runs the compiled loops of `runtime/kernels/cpu/native` (direct convolution for the
grayscale layer, patch matrices a few images at a time, one-pass pooling and epilogues) in
*pool mode*: BLAS on one thread, the work shared out per core (`cpu/parallel.py`). The
MLP 64-1024-1024-10 step is bound by its three 1024^3 GEMMs (~32 ms of it here; TensorFlow's
oneDNN GEMM is ~2-3% faster than numpy's OpenBLAS on this machine). This machine has slow
spells of tens of seconds in which our MLP step loses 10-20% and TF's does not: compare the
per-round ratios above."""


def fmt(v) -> str:
    if v is None:
        return "—"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"


def render(ours: dict, tf: dict, floor: dict, peer: str | None, per_round: str = "") -> str:
    lines = [
        "# Benchmarks",
        "",
        f"Written by `make bench` on {datetime.date.today()} ({platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}). All columns come from one "
        "`make bench` on the same machine; compare the ratios, not absolute times from other runs. "
        f"The table below: best of {ROUNDS} rounds in which ours, the numpy floor and TF took "
        "turns (per-round ratios under it).",
        f"TensorFlow peer: {_peer_text(peer)}. numpy floor: ../shared/peers/numpy_floor.py "
        "(hand-written numpy, no graph).",
        "",
        "| figure | tensorweave | TensorFlow | ours / TF | numpy floor | target | met |",
        "|---|---:|---:|---:|---:|---|:-:|",
    ]
    for label, key, tf_key, floor_key, target, target_text in ROWS:
        v, t = ours.get(key), tf.get(tf_key)
        f = floor.get(floor_key) if floor_key else None
        ratio = v / t if v is not None and t else None
        met = _met(key, v, ratio, target)
        lines.append(f"| {label} | {fmt(v)} | {fmt(t)} | {fmt(ratio) + '×' if ratio else '—'} "
                     f"| {fmt(f)} | {target_text} | {met} |")
    if per_round:
        lines += ["", "Per round (ours / TF):", per_round]
    lines += ["", TRAINING_NOTES]
    lines += ["", "## What the master's features buy (tensorweave only)", "",
              "| feature | with (ms) | without (ms) | speed-up |", "|---|---:|---:|---:|"]
    for label, with_key, without_key in GAINS:
        a, b = ours.get(with_key), ours.get(without_key)
        gain = f"{b / a:.2f}×" if a and b else "—"
        lines.append(f"| {label} | {fmt(a)} | {fmt(b)} | {gain} |")
    for name, d in (("ours", ours), ("TensorFlow", tf), ("numpy floor", floor)):
        for k, why in d.get("_skipped", {}).items():
            lines.append(f"\n- {name}: section `{k}` not measured — {why}")
        if "_error" in d:
            lines.append(f"\n- {name}: {d['_error']}")
    lines.append("")
    return "\n".join(lines)


def render_suite(title, rows, ours: dict, peer: dict, peer_name: str) -> str:
    lines = ["", f"## {title}", "", f"| figure | tensorweave | {peer_name} | ratio | target |",
             "|---|---:|---:|---:|---|"]
    for label, key, peer_key, target in rows:
        v = ours.get(key)
        t = (peer or ours).get(peer_key) if peer_key else None
        ratio = f"{v / t:.2f}×" if isinstance(v, (int, float)) and t else "—"
        lines.append(f"| {label} | {fmt(v)} | {fmt(t)} | {ratio} | {target} |")
    for d in (ours, peer or {}):
        if "_error" in d:
            lines.append(f"\n- {d['_error']}")
        for k, why in d.get("_skipped", {}).items():
            lines.append(f"\n- `{k}` not measured: {why}")
    return "\n".join(lines) + "\n"


def _peer_text(peer) -> str:
    return f"`{peer}` (TF 2.21, tf.compat.v1)" if peer else "not measured (set PEER_PYTHON)"


def _met(key, v, ratio, target) -> str:
    if key == "chain1000_per_op_us" and v is not None:
        return "yes" if v <= 1.0 else "no"
    if target is None or ratio is None:
        return ""
    return "yes" if ratio <= target else "no"


# -- training steps under load ---------------------------------------------------------------
# (label, key, script): every training row of the main table and of the models suite
LOAD_ROWS = [(label.replace(" (ms)", ""), key, "training_steps.py")
             for label, key, *_ in ROWS if key.endswith("_step_ms")] + [
    ("ResNet-20 32×32×3 b128 step", "resnet20_b128_step_ms", "models.py"),
    ("LSTM LM PTB-small step", "lstm_ptb_small_step_ms", "models.py"),
    ("tf.keras model.fit, per batch of 64", "keras_fit_cnn_b64_step_ms", "models.py"),
    ("word2vec NCE step, vocab 10k", "word2vec_nce_10k_step_ms", "models.py"),
    ("word2vec NCE step, vocab 50k", "word2vec_nce_50k_step_ms", "models.py"),
    ("word2vec NCE step, vocab 200k", "word2vec_nce_200k_step_ms", "models.py"),
]
LOAD_ARGS = {"training_steps.py": (), "models.py": ("--only=resnet20,lstm,keras,word2vec",)}
CONDITIONS = ("quiet", "busy", "quota")
BUSY_TARGET, QUIET_TARGET = 1.2, 2.0    # ours / TF under load; ours loaded / ours quiet


def _steps(python: str | None, tensorflow: bool, preexec=None) -> dict:
    """Every load row's step time from one side (ours, or TF's with `tensorflow`)."""
    out: dict = {}
    if python is None:
        return out
    for script, args in LOAD_ARGS.items():
        extra = ("--tensorflow", *args) if tensorflow else args
        r = run_json(python, ROOT / "benchmarks" / script, args=extra, preexec=preexec,
                     env={"TF_USE_LEGACY_KERAS": "1"} if tensorflow else None)
        if "_error" in r:
            out.setdefault("_errors", []).append(r["_error"])
        out.update({k: v for k, v in r.items() if not k.startswith("_")})
    return out


def _condition(name: str, peer: str | None) -> dict:
    """Ours and TF's steps under one condition: quiet, busy (one neighbour), quota."""
    load = _load_avg()
    if name == "quiet":
        ours, tf = _steps(sys.executable, False), _steps(peer, True)
        how = "nothing started by the benchmark"
    elif name == "busy":
        with limits.busy_neighbours(1):
            ours, tf = _steps(sys.executable, False), _steps(peer, True)
        how = "one busy neighbour process (a Python loop) started by the benchmark"
    else:
        with limits.one_cpu() as limit:
            ours = _steps(sys.executable, False, limit.preexec)
            tf = _steps(peer, True, limit.preexec)
        how = limit.text
    return {"ours": ours, "tensorflow": tf, "how": how, "load_avg": load}


def run_load(peer: str | None) -> dict:
    return {name: _condition(name, peer) for name in CONDITIONS}


def _ratio(a, b):
    return a / b if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else None


def _x(r) -> str:
    return f"{r:.2f}×" if r is not None else "—"


def _met_load(vs_tf, vs_quiet) -> str:
    if vs_tf is None or vs_quiet is None:
        return ""
    return "yes" if vs_tf <= BUSY_TARGET and vs_quiet <= QUIET_TARGET else "no"


LOAD_NOTES = """\
How the two runtimes meet a loaded machine: our steps with GEMMs or convolutions hold numpy's
BLAS to one thread and share their work out over threads that block when idle
(`cpu/parallel.py`); TensorFlow's Eigen/oneDNN pools spin briefly before they sleep. Under the
1-CPU quota our process sees one CPU (`cpu/cpus.py` reads the cgroup's quota) and runs every
kernel and node on one thread; TensorFlow's pools keep the sizes its own defaults pick. "quiet"
is only as quiet as the machine was: the load averages above say what else was running."""


def render_load(load: dict) -> str:
    quiet, busy, quota = (load.get(c, {}) for c in CONDITIONS)
    lines = ["", "## Training steps under load (ms; the same TF1 file under both; ours, then "
             "TF's, in each condition of this run)", ""]
    for c in CONDITIONS:
        d = load.get(c, {})
        la = d.get("load_avg")
        lines.append(f"- {c}: {d.get('how', 'not run')}"
                     + (f"; machine load average {la[0]:.1f} as it began" if la else ""))
    lines += ["", f"Targets: under load ≤ {BUSY_TARGET}× TF under the same load, and ≤ "
              f"{QUIET_TARGET}× our own quiet figure.", "",
              "| step | quiet | TF quiet | busy | TF busy | busy / TF | busy / quiet | met "
              "| 1 CPU | TF 1 CPU | 1 CPU / TF | 1 CPU / quiet | met |",
              "|---|---:|---:|---:|---:|---:|---:|:-:|---:|---:|---:|---:|:-:|"]
    for label, key, _ in LOAD_ROWS:
        q, tq = quiet.get("ours", {}).get(key), quiet.get("tensorflow", {}).get(key)
        b, tb = busy.get("ours", {}).get(key), busy.get("tensorflow", {}).get(key)
        c, tc = quota.get("ours", {}).get(key), quota.get("tensorflow", {}).get(key)
        rb, rbq, rc, rcq = _ratio(b, tb), _ratio(b, q), _ratio(c, tc), _ratio(c, q)
        lines.append(f"| {label} | {fmt(q)} | {fmt(tq)} | {fmt(b)} | {fmt(tb)} | {_x(rb)} | "
                     f"{_x(rbq)} | {_met_load(rb, rbq)} | {fmt(c)} | {fmt(tc)} | {_x(rc)} | "
                     f"{_x(rcq)} | {_met_load(rc, rcq)} |")
    lines += ["", LOAD_NOTES]
    for c in CONDITIONS:
        for side in ("ours", "tensorflow"):
            for err in load.get(c, {}).get(side, {}).get("_errors", []):
                lines.append(f"\n- {c}, {side}: {err}")
    return "\n".join(lines) + "\n"


# -- sections -----------------------------------------------------------------------------------
def _load_avg() -> list[float] | None:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return None


def run_main(peer: str | None) -> dict:
    rounds: dict[str, list[dict]] = {"ours": [], "tensorflow": [], "numpy_floor": []}
    for _ in range(max(ROUNDS, 1)):
        rounds["ours"].append(run_json(sys.executable, "benchmarks.graph_mode", module=True))
        rounds["numpy_floor"].append(run_json(sys.executable, PEERS / "numpy_floor.py"))
        rounds["tensorflow"].append(run_json(peer, PEERS / "tf_graph_mode.py",
                                             env={"TF_USE_LEGACY_KERAS": "1"}) if peer else {})
    best = {k: best_of(v) for k, v in rounds.items()}
    return {**best, "rounds": rounds}


def run_suites(peer: str | None) -> dict:
    out = {}
    for _title, script, peer_script, _rows in SUITES:
        mine = run_json(sys.executable, ROOT / "benchmarks" / script)
        if peer and peer_script == script:  # our script, run under TensorFlow
            theirs = run_json(peer, ROOT / "benchmarks" / script, args=("--tensorflow",))
        elif peer_script == SELF_PEER:
            theirs = None
        else:
            theirs = run_json(peer, PEERS / peer_script) if peer and peer_script else None
        out[script] = {"ours": mine, "peer": theirs}
    return out


SECTIONS = {"main": run_main, "load": run_load, "suites": run_suites}


def render_all(raw: dict, peer: str | None) -> str:
    main = raw.get("main", {})
    text = render(main.get("ours", {}), main.get("tensorflow", {}), main.get("numpy_floor", {}),
                  peer, round_ratios(main.get("rounds", {}).get("ours", []),
                                     main.get("rounds", {}).get("tensorflow", [])))
    text += render_when(raw)
    if "load" in raw:
        text += render_load(raw["load"])
    if "suites" not in raw:
        text += ("\nThe other suites (input pipeline, distributed, cluster steps, namespace hosts, "
                 "checkpoints, memory, models "
                 "at rest, serving, watcher) were not run in this `make bench` "
                 "(`BENCH_SECTIONS`); their last figures are in this file's git history.\n")
    for title, script, peer_script, rows in SUITES:
        got = raw.get("suites", {}).get(script)
        if got is not None:
            name = "TensorFlow" if peer_script else "numpy"
            text += render_suite(title, rows, got["ours"], got["peer"], name)
    return text


def render_when(raw: dict) -> str:
    lines = ["", "When each section ran (UTC) and the machine's 1-minute load average before "
             "and after it (other engineers' jobs share this machine; ours and TF's runs "
             "interleave, so the ratios stay comparable):", ""]
    for name in SECTIONS:
        w = raw.get("_when", {}).get(name)
        if w:
            lines.append(f"- {name}: {w['start']} – {w['end']} at commit {w.get('commit')}, "
                         f"load {_one(w['load_before'])}"
                         f" → {_one(w['load_after'])}"
                         + (" (from an earlier run)" if w.get("reused") else ""))
    return "\n".join(lines) + "\n"


def _one(load) -> str:
    return f"{load[0]:.1f}" if load else "?"


def _previous() -> dict:
    try:
        raw = json.loads((ROOT / "benchmarks" / "last_run.json").read_text())
    except (OSError, ValueError):
        return {}
    return raw if "_when" in raw else {}   # NOTE: a run from before sections: not reusable


def main() -> None:
    peer = os.environ.get("PEER_PYTHON") or None
    wanted = [s for s in os.environ.get("BENCH_SECTIONS", ",".join(SECTIONS)).split(",") if s]
    unknown = set(wanted) - set(SECTIONS)
    if unknown:
        sys.exit(f"BENCH_SECTIONS: unknown section(s) {sorted(unknown)}; have {list(SECTIONS)}")
    raw = _previous() if set(wanted) != set(SECTIONS) else {}
    for w in raw.get("_when", {}).values():
        w["reused"] = True
    for name in wanted:
        start, before, commit = _now(), _load_avg(), _commit()
        raw[name] = SECTIONS[name](peer)
        raw.setdefault("_when", {})[name] = {"start": start, "end": _now(), "commit": commit,
                                             "load_before": before, "load_after": _load_avg()}
        (ROOT / "benchmarks" / "last_run.json").write_text(json.dumps(raw, indent=1))
    (ROOT / "BENCHMARKS.md").write_text(render_all(raw, peer))
    print((ROOT / "BENCHMARKS.md").read_text())


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True, timeout=30).stdout.strip()
    return out.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M")


if __name__ == "__main__":
    main()
