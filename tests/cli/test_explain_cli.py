"""The `tensorweave explain` command on a GraphDef file."""

import numpy as np

import tensorweave as tf
from tensorweave.cli.main import main


def test_explain_command_prints_stages(tmp_path, capsys):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        tf.sin(tf.cos(x * np.float32(2.0)), name="out")
    tf.train.write_graph(g, str(tmp_path), "g.pb", as_text=False)
    dot = tmp_path / "g.dot"
    assert main(["explain", str(tmp_path / "g.pb"), "--fetch", "out:0", "--feed", "x:0",
                 "--dot", str(dot)]) == 0
    out = capsys.readouterr().out
    assert "== full: " in out and "== partitioned: " in out and "out = " in out
    assert dot.read_text().startswith("digraph")
    assert main(["explain", str(tmp_path / "g.pb"), "--fetch", "out:0", "--feed", "x:0",
                 "--counts"]) == 0
    assert "pruned" in capsys.readouterr().out
