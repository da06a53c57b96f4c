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


def _saved_model_module():
    """A `saved_model_pb2` stand-in with TF's SavedModel message (saved_model_schema_version
    = 1, repeated MetaGraphDef meta_graphs = 2), for as long as tensorweave has none."""
    import types

    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    from tensorweave.proto import meta_graph_pb2

    pool = descriptor_pool.Default()
    name = "tensorweave/proto/test_saved_model_standin.proto"
    try:
        pool.FindFileByName(name)
    except KeyError:
        f = descriptor_pb2.FileDescriptorProto(name=name, package="tensorweave_test",
                                               dependency=[meta_graph_pb2.DESCRIPTOR.name])
        m = f.message_type.add(name="SavedModel")
        m.field.add(name="saved_model_schema_version", number=1, type=3, label=1)
        m.field.add(name="meta_graphs", number=2, type=11, label=3,
                    type_name=".tensorweave.MetaGraphDef")
        pool.Add(f)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("tensorweave_test.SavedModel"))
    return types.SimpleNamespace(SavedModel=cls)


def test_explain_picks_a_saved_models_meta_graph_by_tag(tmp_path, capsys, monkeypatch):
    import sys as _sys

    try:
        from tensorweave.proto import saved_model_pb2
    except ImportError:
        saved_model_pb2 = _saved_model_module()
        monkeypatch.setitem(_sys.modules, "tensorweave.proto.saved_model_pb2", saved_model_pb2)
    metas = []
    for tag, op in (("train", tf.cos), ("serve", tf.sin)):
        g = tf.Graph()
        with g.as_default():
            x = tf.placeholder(tf.float32, [None], name="x")
            op(x, name="out")
            meta = tf.train.export_meta_graph()
        meta.meta_info_def.tags.append(tag)
        metas.append(meta)
    model = saved_model_pb2.SavedModel(saved_model_schema_version=1, meta_graphs=metas)
    (tmp_path / "saved_model.pb").write_bytes(model.SerializeToString())
    argv = ["--fetch", "out:0", "--feed", "x:0"]
    assert main(["explain", str(tmp_path), *argv]) == 0
    assert "Sin x1" in capsys.readouterr().out
    assert main(["explain", str(tmp_path), "--tag", "train", *argv]) == 0
    assert "Cos x1" in capsys.readouterr().out
    assert main(["explain", str(tmp_path), "--tag", "gpu", *argv]) == 2
    assert "no MetaGraphDef tagged ['gpu'] (it has [['train'], ['serve']])" in \
        capsys.readouterr().err
