"""Runs sherjilozair/char-rnn-tensorflow (train.py, model.py, utils.py, kept unchanged beside
this file) with tensorweave as `tensorflow`, in a working directory of its own:

    python run_program.py WORKDIR [train.py arguments...]

Writes a stand-in data/tinyshakespeare/input.txt first (a short verse repeated with
variations: a small character model learns it within a few epochs), runs train.py's `main()`
with the arguments given, then restores the last checkpoint into `Model(saved_args,
training=False)` (the one-step graph with legacy_seq2seq's loop_function) and prints 200
greedily sampled characters, as the repository's sample.py does with `--sample 0`.
"""

import os
import pickle
import runpy
import sys
from pathlib import Path

import numpy as np

import tensorweave

HERE = Path(__file__).resolve().parent
VERSE = ("the quick brown fox jumps over the lazy dog. "
         "a stitch in time saves nine. all that glitters is not gold. ")


def write_data(workdir: Path) -> None:
    rng = np.random.RandomState(0)
    lines = [VERSE if rng.uniform() < 0.8 else VERSE.upper() for _ in range(60)]
    data = workdir / "data" / "tinyshakespeare"
    data.mkdir(parents=True, exist_ok=True)
    (data / "input.txt").write_text("".join(lines))


def install() -> None:
    sys.modules["tensorflow"] = tensorweave
    sys.modules["tensorflow.contrib"] = tensorweave.contrib


def sample(save_dir: str) -> str:
    from model import Model

    tf = tensorweave
    with open(os.path.join(save_dir, "config.pkl"), "rb") as f:
        saved_args = pickle.load(f)
    with open(os.path.join(save_dir, "chars_vocab.pkl"), "rb") as f:
        chars, vocab = pickle.load(f)
    with tf.Graph().as_default():
        model = Model(saved_args, training=False)
        with tf.Session() as sess:
            tf.global_variables_initializer().run()
            saver = tf.train.Saver(tf.global_variables())
            ckpt = tf.train.get_checkpoint_state(save_dir)
            saver.restore(sess, ckpt.model_checkpoint_path)
            return model.sample(sess, chars, vocab, 200, "the ", 0)


if __name__ == "__main__":
    workdir = Path(sys.argv[1])
    write_data(workdir)
    install()
    os.chdir(workdir)
    sys.path.insert(0, str(HERE))
    sys.argv = ["train.py"] + sys.argv[2:]
    runpy.run_path(str(HERE / "train.py"), run_name="__main__")
    print("SAMPLE:", sample("save"))
