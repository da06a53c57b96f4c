"""Real word2vec programs run unchanged on tensorweave: TF's word2vec_basic.py (NCE loss, SGD)
and the Udacity assignment 5 (sampled softmax, Adagrad), each on a small stand-in corpus.

Each program runs in a subprocess with `tensorweave` injected as `tensorflow`. Its only edit
for the run is the number of training steps (100001 -> STEPS: the text `num_steps = 100001`
is replaced, and the test checks it was there). The programs print the average loss every
2000 steps; learning means it falls. sklearn's t-SNE is made unimportable so the NCE
program's `except ImportError` skips the plot.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
STEPS = 4001

_RUNNER = """
import sys, tensorweave
sys.modules['tensorflow'] = tensorweave
sys.modules['sklearn.manifold'] = None  # no t-SNE plot
path, steps = sys.argv[1], sys.argv[2]
source = open(path).read()
assert source.count('num_steps = 100001') == 1
source = source.replace('num_steps = 100001', 'num_steps = ' + steps)
exec(compile(source, path, 'exec'), {'__name__': '__main__'})
"""


def write_corpus(path: Path, n_words: int = 100000, n_rare: int = 52000, seed: int = 0) -> None:
    """A text8-like zip of one file of space-separated words. 1000 topic words in 40 topics:
    a sentence picks a topic and strings Zipf-distributed words of it with shared function
    words, so neighbouring words are predictable from each other. `n_rare` words occur once
    each (text8 has a long tail too): the programs index `reverse_dictionary` up to their
    vocabulary size of 50000, so the corpus has more distinct words than that."""
    rng = np.random.default_rng(seed)
    function_words = ["the", "of", "and", "in", "a", "to", "is", "was"]
    topics = [[f"w{t}x{i}" for i in range(25)] for t in range(40)]
    zipf = 1.0 / np.arange(1, 26)
    zipf /= zipf.sum()
    words: list[str] = []
    while len(words) < n_words:
        topic = topics[rng.integers(len(topics))]
        for _ in range(rng.integers(6, 14)):
            words.append(topic[rng.choice(25, p=zipf)])
            if rng.random() < 0.3:
                words.append(function_words[rng.integers(len(function_words))])
    words = words[:n_words]
    for i, at in enumerate(sorted(rng.integers(0, n_words, n_rare).tolist(), reverse=True)):
        words.insert(at, f"rare{i}")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("text8", " ".join(words))


def _run(program: str, tmp_path: Path) -> str:
    write_corpus(tmp_path / "text8.zip")
    proc = subprocess.run([sys.executable, "-c", _RUNNER, str(HERE / program), str(STEPS)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    return out


def _losses(out: str) -> list[float]:
    found = re.findall(r"Average loss at step\s+(\d+)\s*:\s*([0-9.eE+-]+)", out)
    assert len(found) == STEPS // 2000 + 1, out[-3000:]
    return [float(v) for _, v in found]


@pytest.mark.slow
def test_word2vec_basic_nce_learns(tmp_path):
    out = _run("word2vec_basic.py", tmp_path)
    losses = _losses(out)
    assert losses[-1] < 0.5 * losses[0], losses
    assert "Nearest to" in out and "Please install sklearn" in out


@pytest.mark.slow
def test_udacity_sampled_softmax_learns(tmp_path):
    out = _run("udacity_5_word2vec.py", tmp_path)
    losses = _losses(out)
    assert losses[-1] < 0.8 * losses[0], losses
    assert "Nearest to" in out
