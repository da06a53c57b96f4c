"""The main table's three training steps as TF1 code that runs unchanged under tensorweave and,
with `--tensorflow` and the peer Python, under TensorFlow's tf.compat.v1, for the benchmark's
rounds under load (`run.py`: one busy neighbour, a 1-CPU quota), where both columns must come
from identical graphs timed the same way. The graphs and the timing (mean of N steps after
warm-up) are graph_mode.py's (graphs.py). Prints one JSON object of milliseconds:
mlp_b128_h256_step_ms, mlp_b1024_h1024_step_ms, cnn_b64_28x28_step_ms.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import graphs  # noqa: E402

tf = graphs.framework("--tensorflow" in sys.argv)


def step_ms(build, steps: int, warm: int) -> float:
    return round(graphs.train_step_s(tf, build, steps, warm) * 1e3, 3)


STEPS = {
    "mlp_b128_h256_step_ms": lambda: step_ms(lambda tf: graphs.mlp(tf, 128, 256), 200, 20),
    "mlp_b1024_h1024_step_ms": lambda: step_ms(lambda tf: graphs.mlp(tf, 1024, 1024), 20, 5),
    "cnn_b64_28x28_step_ms": lambda: step_ms(graphs.cnn, 20, 3),
}


def main() -> None:
    print(json.dumps({key: fn() for key, fn in STEPS.items()}))


if __name__ == "__main__":
    main()
