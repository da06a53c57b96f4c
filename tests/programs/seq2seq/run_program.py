"""Runs the Udacity character seq2seq notebook (sequence_to_sequence_implementation.py)
unchanged in a working directory of its own, with tensorweave as `tensorflow`:

    python run_program.py WORKDIR [LINES]

Writes the stand-in data first: LINES random lowercase words of 3 to 7 letters
(data/letters_source.txt) and each word's letters sorted (data/letters_target.txt), the
shape of the notebook's 10,000-line files. `tensorflow.python.layers.core` (where the
notebook imports `Dense` from) is tensorweave's layers module, and `tensorflow.__version__`
reads "1.15.0", the TF API tensorweave implements, for the notebook's version check.
"""

import os
import runpy
import sys
import types
from pathlib import Path

import numpy as np

import tensorweave
from tensorweave.training.layers import core as layers_core

HERE = Path(__file__).resolve().parent


def write_data(workdir: Path, lines: int) -> None:
    rng = np.random.RandomState(0)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, rng.randint(3, 8))) for _ in range(lines)]
    (workdir / "data").mkdir(parents=True, exist_ok=True)
    (workdir / "data" / "letters_source.txt").write_text("\n".join(words))
    (workdir / "data" / "letters_target.txt").write_text(
        "\n".join("".join(sorted(w)) for w in words))


class _TensorFlow(types.ModuleType):
    """`tensorflow`: tensorweave's namespace, with TF's version string."""

    __version__ = "1.15.0"

    def __getattr__(self, name):
        return getattr(tensorweave, name)


def install() -> None:
    sys.modules["tensorflow"] = _TensorFlow("tensorflow")
    python = types.ModuleType("tensorflow.python")
    layers = types.ModuleType("tensorflow.python.layers")
    python.layers, layers.core = layers, layers_core
    sys.modules.update({"tensorflow.python": python, "tensorflow.python.layers": layers,
                        "tensorflow.python.layers.core": layers_core})


if __name__ == "__main__":
    workdir = Path(sys.argv[1])
    write_data(workdir, int(sys.argv[2]) if len(sys.argv) > 2 else 2816)
    install()
    os.chdir(workdir)
    sys.path.insert(0, str(HERE))
    runpy.run_path(str(HERE / "sequence_to_sequence_implementation.py"), run_name="__main__")
