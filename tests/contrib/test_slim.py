"""tf.contrib.layers / framework / slim against TF 1.15's contrib semantics: a slim model's
variable names, regularization-loss names, forward values and three training steps equal
`tf_slim`'s (tests/data/slim_expected.npz, make_slim_expected.py); arg_scope rules; the
variable helpers; checkpoint restore helpers; the slim train loop."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import slim_cases  # noqa: E402

slim = tf.contrib.slim
EXPECTED = HERE.parent / "data" / "slim_expected.npz"


@pytest.fixture(scope="module")
def parity():
    return slim_cases.run(tf, slim), np.load(EXPECTED)


def test_slim_model_names_match_tf_slim(parity):
    got, exp = parity
    for key in ("names/global", "names/model", "names/regularization", "names/logits"):
        assert list(np.atleast_1d(got[key])) == list(np.atleast_1d(exp[key])), key
    assert "Conv/BatchNorm/moving_mean" in list(got["names/global"])


def test_slim_model_values_and_training_match_tf_slim(parity):
    got, exp = parity
    np.testing.assert_allclose(got["logits0"], exp["logits0"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got["losses"], exp["losses"], rtol=1e-5, atol=1e-5)
    for key in exp.files:
        if key.startswith("var/"):   # after 3 SGD steps and 3 moving-average updates
            np.testing.assert_allclose(got[key], exp[key], rtol=1e-4, atol=1e-5,
                                       err_msg=key)


# -- arg_scope --------------------------------------------------------------------------------
def test_arg_scope_sets_defaults_nests_and_call_arguments_win():
    with tf.Graph().as_default():
        x = tf.zeros([2, 4])
        with slim.arg_scope([slim.fully_connected], activation_fn=None) as outer:
            with slim.arg_scope([slim.fully_connected], biases_initializer=None) as inner:
                a = slim.fully_connected(x, 3, scope="a")
                b = slim.fully_connected(x, 3, activation_fn=tf.nn.relu, scope="b")
            c = slim.fully_connected(x, 3, scope="c")
        key = tf.contrib.framework.arg_scope_func_key(slim.fully_connected)
        assert outer[key] == {"activation_fn": None}
        assert inner[key] == {"activation_fn": None, "biases_initializer": None}
        assert a.op.type == "MatMul" and b.op.type == "Relu" and c.op.type == "BiasAdd"
        with slim.arg_scope(inner):
            d = slim.fully_connected(x, 3, scope="d")
        assert d.op.type == "MatMul"
        assert tf.contrib.framework.current_arg_scope() == {}


def test_arg_scope_errors():
    def plain(x, y=1):
        return x

    with pytest.raises(ValueError, match="is not decorated with @add_arg_scope"):
        with slim.arg_scope([plain], y=2):
            pass
    with pytest.raises(TypeError, match="list_ops_or_scope must either be"):
        with slim.arg_scope(slim.conv2d, padding="VALID"):
            pass
    with pytest.raises(ValueError, match="kwargs must be empty"):
        with slim.arg_scope({}, padding="VALID"):
            pass


def test_add_arg_scope_on_a_user_function():
    @slim.add_arg_scope
    def scaled(x, factor=1):
        return x * factor

    with slim.arg_scope([scaled], factor=3):
        assert scaled(2) == 6
        assert scaled(2, factor=5) == 10
    assert scaled(2) == 2
    assert slim.has_arg_scope(scaled) and slim.arg_scoped_arguments(scaled) == ["factor"]


# -- layers -------------------------------------------------------------------------------------
def test_conv_pool_names_shapes_and_defaults():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 28, 28, 1])
        net = slim.conv2d(x, 32, [5, 5])                    # SAME, ReLU
        assert net.op.type == "Relu" and net.shape.as_list() == [None, 28, 28, 32]
        net = slim.max_pool2d(net, [2, 2])                  # stride 2, VALID
        assert net.shape.as_list() == [None, 14, 14, 32] and net.op.name.startswith("MaxPool2D")
        net = slim.avg_pool2d(net, 3, stride=1, padding="SAME")
        assert net.shape.as_list() == [None, 14, 14, 32] and net.op.name.startswith("AvgPool2D")
        slim.conv2d(net, 8, 3, stride=2, padding="VALID", scope="c2")
        names = [v.op.name for v in slim.get_model_variables()]
        assert names == ["Conv/weights", "Conv/biases", "c2/weights", "c2/biases"]
        assert slim.get_variables_by_name("weights")[1].op.name == "c2/weights"
        assert [v.op.name for v in slim.get_variables("c2")] == ["c2/weights", "c2/biases"]
        assert [v.op.name for v in slim.get_variables(suffix="biases")] == \
            ["Conv/biases", "c2/biases"]


def test_batch_norm_updates_collections_none_runs_updates_with_the_output():
    with tf.Graph().as_default():
        x = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2))
        y = slim.batch_norm(x, decay=0.5, updates_collections=None, is_training=True)
        assert not tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        mean = slim.get_variables_by_name("moving_mean")[0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run(y)
            np.testing.assert_allclose(sess.run(mean), [2.5, 3.0], rtol=1e-6)
        np.testing.assert_allclose(out.mean(0), [0, 0], atol=1e-5)


def test_batch_norm_inference_uses_moving_statistics():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 3.0]])
        y = slim.batch_norm(x, is_training=False, center=False)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(y), [[1.0, 3.0]] / np.sqrt(1.001), rtol=1e-5)


def test_layer_norm_matches_numpy_and_checks_rank():
    data = np.random.RandomState(0).normal(size=(2, 3, 4)).astype(np.float32)
    with tf.Graph().as_default():
        y = slim.layer_norm(tf.constant(data), begin_norm_axis=-1)
        assert [v.op.name for v in slim.get_model_variables()] == ["LayerNorm/beta",
                                                                   "LayerNorm/gamma"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(y)
        mu, var = data.mean(-1, keepdims=True), data.var(-1, keepdims=True)
        np.testing.assert_allclose(got, (data - mu) / np.sqrt(var + 1e-12), atol=1e-5)
        with pytest.raises(ValueError, match="undefined rank"):
            slim.layer_norm(tf.placeholder(tf.float32))
        with pytest.raises(ValueError, match="must be < rank"):
            slim.layer_norm(tf.constant(data), begin_norm_axis=3)


def test_dropout_one_hot_repeat_stack():
    with tf.Graph().as_default():
        x = tf.ones([1000, 10])
        kept = slim.dropout(x, 0.8)                        # is_training defaults to True
        same = slim.dropout(x, 0.8, is_training=False)
        onehot = slim.one_hot_encoding(tf.constant([0, 2]), 3)
        assert onehot.op.name.startswith("OneHotEncoding")
        net = slim.repeat(tf.zeros([1, 4]), 2, slim.fully_connected, 5)
        net = slim.stack(net, slim.fully_connected, [6, 7], scope="fc")
        names = [v.op.name for v in slim.get_model_variables(suffix="weights")]
        assert names == ["Repeat/fully_connected_1/weights", "Repeat/fully_connected_2/weights",
                         "fc/fc_1/weights", "fc/fc_2/weights"]
        assert net.shape.as_list() == [1, 7]
        with pytest.raises(ValueError, match="stack_args need to be a list or tuple"):
            slim.stack(net, slim.fully_connected, 3)
        with tf.Session() as sess:
            k, s, o = sess.run([kept, same, onehot])
        assert abs((k > 0).mean() - 0.8) < 0.03 and set(np.unique(k)) <= {0.0, 1.25}
        np.testing.assert_array_equal(s, np.ones([1000, 10]))
        np.testing.assert_array_equal(o, [[1, 0, 0], [0, 0, 1]])


def test_optimize_loss_trains_and_names_the_learning_rate():
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=tf.constant([3.0]))
        loss = tf.reduce_sum(tf.square(w))
        step = tf.train.get_or_create_global_step()
        train = tf.contrib.layers.optimize_loss(loss, step, 0.25, "SGD", clip_gradients=1.0)
        assert any(v.op.name == "OptimizeLoss/learning_rate" for v in tf.global_variables())
        with pytest.raises(ValueError, match="Optimizer name should be one of"):
            tf.contrib.layers.optimize_loss(loss, step, 0.1, "Nope")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            np.testing.assert_allclose(sess.run(w), [2.75])     # gradient 6 clipped to 1
            assert sess.run(step) == 1


# -- variables and checkpoints -----------------------------------------------------------------
def test_get_variables_to_restore_and_assign_from_checkpoint_fn(tmp_path):
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        slim.model_variable("a/w", initializer=tf.constant([1.0, 2.0]))
        slim.variable("b/w", initializer=tf.constant([5.0]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, path)
    with tf.Graph().as_default():
        a = slim.model_variable("a/w", initializer=tf.constant([0.0, 0.0]))
        b = slim.variable("b/w", initializer=tf.constant([0.0]))
        c = slim.variable("c/w", initializer=tf.constant([7.0]))
        assert slim.get_model_variables() == [a]
        assert slim.get_variables_to_restore(exclude=["c"]) == [a, b]
        assert slim.get_variables_to_restore(include=["a", "c"]) == [a, c]
        with pytest.raises(TypeError, match="exclude is provided but is not a list"):
            slim.get_variables_to_restore(exclude="c")
        with pytest.raises(ValueError, match="var_list cannot be empty"):
            slim.assign_from_checkpoint_fn(path, [])
        init_fn = slim.assign_from_checkpoint_fn(path, [a, b, c], ignore_missing_vars=True)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            init_fn(sess)
            assert sess.run(a).tolist() == [1.0, 2.0] and sess.run(b).tolist() == [5.0]
            assert sess.run(c).tolist() == [7.0]


# -- the train loop ------------------------------------------------------------------------------
def test_learning_train_runs_number_of_steps_calls_init_fn_and_checkpoints(tmp_path):
    calls = []
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=tf.constant(4.0))
        total = slim.losses.mean_squared_error(tf.reshape(w, [1]), tf.constant([1.0]))
        assert tf.get_collection(tf.GraphKeys.LOSSES) == [total]
        train_op = slim.learning.create_train_op(total, tf.train.GradientDescentOptimizer(0.1))
        assert tf.get_collection(tf.GraphKeys.TRAIN_OP)[-1] is train_op
        final = slim.learning.train(train_op, str(tmp_path), number_of_steps=7,
                                    log_every_n_steps=0, init_fn=calls.append,
                                    save_summaries_secs=0, save_interval_secs=0)
    assert len(calls) == 1
    expected = 4.0
    for _ in range(6):
        expected -= 0.1 * 2 * (expected - 1.0)
    np.testing.assert_allclose(final, (expected - 1.0) ** 2, rtol=1e-5)
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-7")
    with tf.Graph().as_default():          # a second call resumes at step 7 and stops
        w = tf.get_variable("w", initializer=tf.constant(4.0))
        total = slim.losses.mean_squared_error(tf.reshape(w, [1]), tf.constant([1.0]))
        train_op = slim.learning.create_train_op(total, tf.train.GradientDescentOptimizer(0.1))
        slim.learning.train(train_op, str(tmp_path), number_of_steps=8, log_every_n_steps=0,
                            save_summaries_secs=0, save_interval_secs=0)
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-8")


def test_learning_train_argument_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="train_op cannot be None"):
            slim.learning.train(None, None)
        with pytest.raises(ValueError, match="Cannot provide saver because logdir=None"):
            slim.learning.train(tf.constant(1.0), None, saver=tf.train.Saver(allow_empty=True))


def test_slim_metrics_and_evaluation():
    with tf.Graph().as_default():
        values, updates = slim.metrics.aggregate_metric_map({
            "mse": slim.metrics.streaming_mean_squared_error(tf.constant([1.0, 3.0]),
                                                             tf.constant([0.0, 0.0])),
            "acc": slim.metrics.streaming_accuracy(tf.constant([1, 2]), tf.constant([1, 0])),
        })
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            got = slim.evaluation.evaluation(sess, num_evals=2, eval_op=updates.values(),
                                             final_op=values.values())
        assert dict(zip(values, got)) == {"mse": 5.0, "acc": 0.5}


def test_evaluate_once_restores_the_checkpoint_and_writes_summaries(tmp_path):
    ckpt = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=tf.constant([2.0]))
        step = tf.train.get_or_create_global_step()
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), step.assign(9)])
            sess.run(w.assign([3.0]))
            tf.train.Saver().save(sess, ckpt)
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=tf.constant([0.0]))
        value, update = slim.metrics.streaming_mean_squared_error(w, tf.constant([1.0]))
        tf.summary.scalar("mse", value)
        got = slim.evaluation.evaluate_once("", ckpt, str(tmp_path / "eval"), num_evals=3,
                                            eval_op=[update], final_op=value)
    assert got == 4.0
    events = list((tmp_path / "eval").glob("events.out.tfevents.*"))
    assert len(events) == 1
    steps = [e.step for e in tf.train.summary_iterator(str(events[0])) if e.summary.value]
    assert steps == [9]


def test_slim_nets_vgg16_names_and_end_points():
    vgg = slim.nets.vgg
    with tf.Graph().as_default():
        images = tf.placeholder(tf.float32, [2, 224, 224, 3])
        with slim.arg_scope(vgg.vgg_arg_scope()):
            logits, end_points = vgg.vgg_16(images, num_classes=1000)
        assert logits.shape.as_list() == [2, 1000] and logits.op.name == "vgg_16/fc8/squeezed"
        names = [v.op.name for v in slim.get_model_variables()]
        assert len(names) == 32 and names[:2] == ["vgg_16/conv1/conv1_1/weights",
                                                  "vgg_16/conv1/conv1_1/biases"]
        assert names[-2:] == ["vgg_16/fc8/weights", "vgg_16/fc8/biases"]
        assert slim.get_model_variables("vgg_16/fc6")[0].shape.as_list() == [7, 7, 512, 4096]
        assert list(end_points)[:3] == ["vgg_16/conv1/conv1_1", "vgg_16/conv1/conv1_2",
                                        "vgg_16/pool1"]
        assert end_points["vgg_16/pool5"].shape.as_list() == [2, 7, 7, 512]
        assert end_points["vgg_16/fc8"] is logits
        assert len(tf.losses.get_regularization_losses()) == 16
    with tf.Graph().as_default():
        with slim.arg_scope(vgg.vgg_arg_scope()):
            logits, _ = vgg.vgg_a(tf.ones([1, 32, 32, 3]), num_classes=5, is_training=False,
                                  fc_conv_padding="SAME")
        assert logits.shape.as_list() == [1, 5]   # (fc6 alone holds 100M weights: no run)
        assert [v.op.name for v in slim.get_model_variables()][:4] == [
            "vgg_a/conv1/conv1_1/weights", "vgg_a/conv1/conv1_1/biases",
            "vgg_a/conv2/conv2_1/weights", "vgg_a/conv2/conv2_1/biases"]


def test_create_train_op_gradient_multipliers_clipping_and_update_ops():
    with tf.Graph().as_default():
        a = tf.get_variable("a", initializer=tf.constant([1.0]))
        b = tf.get_variable("b", initializer=tf.constant([1.0]))
        counter = tf.get_variable("counter", initializer=tf.constant(0.0), trainable=False)
        tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, tf.assign_add(counter, 1.0))
        loss = tf.reduce_sum(3.0 * a + 3.0 * b)           # both gradients 3
        train_op = slim.learning.create_train_op(
            loss, tf.train.GradientDescentOptimizer(1.0), clip_gradient_norm=2.0,
            gradient_multipliers={"a": 0.5})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(train_op) == 6.0
            # a: 3 * 0.5 = 1.5 (under the norm 2); b: 3 clipped to 2
            got_a, got_b, got_counter = sess.run([a, b, counter])
            np.testing.assert_allclose([got_a[0], got_b[0], got_counter], [-0.5, -1.0, 1.0])
            assert sess.run(tf.train.get_global_step()) == 1


def test_assign_from_checkpoint_feeds_the_values(tmp_path):
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        tf.get_variable("w", initializer=tf.constant([[1.0, 2.0]]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, path)
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=tf.zeros([1, 2]))
        other = tf.get_variable("other", initializer=tf.zeros([1]))
        with pytest.raises(ValueError, match=r"Checkpoint is missing variable \[other\]"):
            slim.assign_from_checkpoint(path, [w, other])
        op, feed = slim.assign_from_checkpoint(path, [w, other], ignore_missing_vars=True)
        assert [t.op.name for t in feed] == ["placeholder/w_1"]   # the failed call made one
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(op, feed)
            assert sess.run(w).tolist() == [[1.0, 2.0]]
        v = tf.get_variable("v", initializer=tf.zeros([3]))
        with pytest.raises(ValueError, match="Total size of new array must be unchanged"):
            slim.assign_from_checkpoint(path, {"w": v})
