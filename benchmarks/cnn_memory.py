"""Peak memory (max RSS, MB) of a process that trains the CNN of ../shared/peers/tf_graph_mode.py
for 20 steps. The same file runs under tensorweave and, with `--tensorflow` and the peer Python,
under TensorFlow's tf.compat.v1, so both numbers come from identical code. Prints JSON."""

import json
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import graphs  # noqa: E402

tf = graphs.framework("--tensorflow" in sys.argv)


def main() -> None:
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tf.set_random_seed(0)
    step = graphs.cnn(tf)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(20):
            s.run(step.train, step.feed)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"cnn_train_peak_rss_MB": round(peak, 1),
                      "after_imports_rss_MB": round(base, 1)}))


if __name__ == "__main__":
    main()
