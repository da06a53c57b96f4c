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


def test_explain_reads_meta_graph_files_as_the_saver_writes_them(tmp_path, capsys):
    """The `.meta` beside a checkpoint (the demo writes one each epoch) explains like the
    GraphDef of the same graph."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable(tf.ones([2, 3]), name="w")
        tf.nn.softmax(tf.matmul(x, w), name="probs")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"), global_step=1)
    tf.train.write_graph(g, str(tmp_path), "g.pbtxt")
    argv = ["--fetch", "probs:0", "--feed", "x:0", "--counts"]
    assert main(["explain", str(tmp_path / "model.ckpt-1.meta"), *argv]) == 0
    from_meta = capsys.readouterr().out
    assert main(["explain", str(tmp_path / "g.pbtxt"), *argv]) == 0
    assert from_meta == capsys.readouterr().out and "partitioned" in from_meta


def test_explain_a_saved_model_directory(tmp_path, capsys):
    """A SavedModel: its MetaGraphDef by tag when tensorweave has the SavedModel proto; until
    then, one line saying so."""
    (tmp_path / "saved_model.pb").write_bytes(b"")
    code = main(["explain", str(tmp_path), "--fetch", "out"])
    err = capsys.readouterr().err
    try:
        import tensorweave.proto.saved_model_pb2  # noqa: F401
    except ImportError:
        assert code == 2 and "cannot read yet" in err and err.count("\n") == 1
    else:
        assert code == 2 and "no MetaGraphDef tagged ['serve']" in err
