"""GradientTape situations run by TensorFlow (make_tape_expected.py) and by tensorweave
(test_tape.py): `run(tf)` returns {name: gradient values (lists, None where TF gives None)}
and the watched variables' names."""


def _values(sess, v, feed):
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return [_values(sess, a, feed) for a in v]
    if isinstance(v, dict):
        return {k: _values(sess, a, feed) for k, a in sorted(v.items())}
    return sess.run(v, feed).tolist()


def run(tf):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3], name="x")
        w = tf.Variable([1.0, 2.0, 3.0], dtype=tf.float64, name="w")
        nt = tf.Variable([1.0, 1.0, 1.0], dtype=tf.float64, trainable=False, name="nt")
        unused = tf.Variable([4.0], dtype=tf.float64, name="unused")
        pre = x * x                                   # built before the tape: not recorded
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tf.reduce_sum(w * x * x * nt)
            z = tf.reduce_sum(pre * 3.0)
            with tape.stop_recording():
                s = x * 5.0
            q = tf.reduce_sum(s * x)
            c = tf.constant([1.0, 2.0, 3.0], tf.float64)
            r = tf.reduce_sum(c * x)
            wx = w * x
            m = tf.reduce_sum(tf.matmul(tf.reshape(x, [1, 3]), tf.reshape(w, [3, 1])) ** 2)
        grads = {
            "y_x_w_nt": tape.gradient(y, [x, w, nt]),
            "z_x": tape.gradient(z, x),
            "q_x": tape.gradient(q, x),
            "r_c_x": tape.gradient(r, [c, x]),
            "output_gradients": tape.gradient(
                wx, x, output_gradients=tf.constant([1.0, 10.0, 100.0], tf.float64)),
            "dict_sources": tape.gradient(y, {"a": x, "b": w}),
            "unused_var": tape.gradient(y, unused),
            "matmul_w": tape.gradient(m, w),
            "two_targets": tape.gradient([y, r], x),
        }
        out = {"watched": sorted(v.name for v in tape.watched_variables())}
        once = tf.GradientTape()
        with once:
            once.watch(x)
            yy = tf.reduce_sum(x * x)
        once.gradient(yy, x)
        try:
            once.gradient(yy, x)
        except RuntimeError as e:
            out["second_call"] = str(e)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for k, v in grads.items():
                out[k] = _values(sess, v, {x: [1.0, 2.0, 3.0]})
        out["executing_eagerly"] = tf.executing_eagerly()
        return out
