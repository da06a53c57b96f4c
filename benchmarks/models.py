"""Steps of more kinds of models, as TF1 code that runs unchanged under tensorweave and, with
`--tensorflow` and the peer Python, under TensorFlow's tf.compat.v1 (the same file, so both
columns come from identical graphs). Prints one JSON object of milliseconds (best of a few
timed steps after warm-up steps):
- resnet20_b128_step_ms: ResNet-20 on 32x32x3 at batch 128, batch norm, momentum;
- lstm_ptb_small_step_ms: a 2 x 200 LSTM language model, 20 steps, batch 20, vocabulary
  10,000, full softmax, gradient clipping, SGD (PTB-small's shapes);
- cnn_infer_b1_ms: the demo-sized CNN's forward pass on one example (the serving case);
- keras_fit_cnn_b64_step_ms: `model.fit` of a tf.keras digits CNN (examples/keras_digits.py's
  model), per batch of 64, over three epochs after one warm-up epoch;
- word2vec_nce_{10k,50k,200k}_ms: skip-gram with NCE (64 negatives) on a V x 128 embedding,
  batch 128, SGD: the step should not grow with V (sparse updates);
- while_counter_10k_us_per_iteration: a tf.while_loop counting to 10,000, per iteration
  (microseconds, not milliseconds).
`--only NAME[,NAME]` runs some of them (keys' prefixes).
"""

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import graphs  # noqa: E402

tf = graphs.framework("--tensorflow" in sys.argv)


def _timed(sess, fetches, feed, warmup: int, steps: int) -> float:
    for _ in range(warmup):
        sess.run(fetches, feed)
    best = float("inf")
    for _ in range(steps):
        t = time.perf_counter()
        sess.run(fetches, feed)
        best = min(best, time.perf_counter() - t)
    return round(best * 1e3, 3)


def _fresh(build):
    tf.keras.backend.clear_session()
    tf.reset_default_graph()
    tf.set_random_seed(0)
    return build()


# -- ResNet-20 ---------------------------------------------------------------------------------
def _bn(x):
    return tf.layers.batch_normalization(x, training=True, momentum=0.9)


def _block(x, filters, stride, name):
    with tf.variable_scope(name):
        y = tf.layers.conv2d(x, filters, 3, stride, padding="same", use_bias=False)
        y = tf.nn.relu(_bn(y))
        y = _bn(tf.layers.conv2d(y, filters, 3, 1, padding="same", use_bias=False))
        if stride != 1 or x.shape[-1] != filters:
            x = tf.layers.conv2d(x, filters, 1, stride, use_bias=False)
        return tf.nn.relu(y + x)


def resnet20() -> float:
    x = tf.placeholder(tf.float32, [None, 32, 32, 3])
    labels = tf.placeholder(tf.int64, [None])
    y = tf.nn.relu(_bn(tf.layers.conv2d(x, 16, 3, padding="same", use_bias=False)))
    for stage, filters in enumerate([16, 32, 64]):
        for b in range(3):
            y = _block(y, filters, 2 if b == 0 and stage else 1, f"stage{stage}_block{b}")
    logits = tf.layers.dense(tf.reduce_mean(y, [1, 2]), 10)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
    rng = np.random.default_rng(0)
    feed = {x: rng.standard_normal((128, 32, 32, 3)).astype(np.float32),
            labels: rng.integers(0, 10, 128)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return _timed(sess, train, feed, 3, 4)


# -- LSTM language model -------------------------------------------------------------------------
def lstm_ptb_small() -> float:
    step = graphs.lstm_ptb(tf)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return _timed(sess, step.train, step.feed, 3, 8)


# -- CNN inference at batch 1 ------------------------------------------------------------------
def cnn_infer_b1() -> float:
    x = tf.placeholder(tf.float32, [None, 28, 28, 1])
    probs = tf.nn.softmax(graphs.cnn_logits(tf, x))
    feed = {x: np.random.default_rng(0).random((1, 28, 28, 1), dtype=np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return _timed(sess, probs, feed, 20, 200)


# -- word2vec with NCE ---------------------------------------------------------------------------
def word2vec(vocab: int) -> float:
    batch, dim = 128, 128
    words = tf.placeholder(tf.int32, [batch])
    context = tf.placeholder(tf.int64, [batch, 1])
    embeddings = tf.Variable(tf.random_uniform([vocab, dim], -1.0, 1.0))
    nce_w = tf.Variable(tf.truncated_normal([vocab, dim], stddev=1.0 / dim ** 0.5))
    nce_b = tf.Variable(tf.zeros([vocab]))
    embed = tf.nn.embedding_lookup(embeddings, words)
    loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_w, biases=nce_b, labels=context,
                                         inputs=embed, num_sampled=64, num_classes=vocab))
    train = tf.train.GradientDescentOptimizer(1.0).minimize(loss)
    rng = np.random.default_rng(0)
    feed = {words: rng.integers(0, vocab, batch), context: rng.integers(0, vocab, (batch, 1))}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return _timed(sess, train, feed, 5, 20)


# -- while loop ----------------------------------------------------------------------------------
def while_counter() -> float:
    """Microseconds per iteration of `i = 0; while i < n: i += 1` at n = 10,000: the
    interpreter's cost of an iteration (tests/runtime/test_dataflow.py counts its calls)."""
    n = tf.placeholder(tf.int32, [])
    out = tf.while_loop(lambda i: i < n, lambda i: i + 1, [tf.constant(0)])
    with tf.Session() as sess:
        return round(_timed(sess, out, {n: 10_000}, 1, 3) / 10_000 * 1e3, 3)


def keras_fit_cnn() -> float:
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)[:1536]
    y = y[:1536]
    layers = tf.keras.layers
    model = tf.keras.Sequential([
        layers.Conv2D(32, 3, padding="same", activation="relu", input_shape=(8, 8, 1)),
        layers.BatchNormalization(), layers.MaxPooling2D(),
        layers.Conv2D(64, 3, padding="same", activation="relu"), layers.MaxPooling2D(),
        layers.Flatten(), layers.Dense(128, activation="relu"), layers.Dropout(0.3),
        layers.Dense(10, activation="softmax")])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.003),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, batch_size=64, epochs=1, verbose=0)
    start = time.perf_counter()
    model.fit(x, y, batch_size=64, epochs=3, verbose=0)
    return round((time.perf_counter() - start) / (3 * len(x) // 64) * 1e3, 3)


MODELS = {
    "resnet20_b128_step_ms": resnet20,
    "lstm_ptb_small_step_ms": lstm_ptb_small,
    "cnn_infer_b1_ms": cnn_infer_b1,
    "keras_fit_cnn_b64_step_ms": keras_fit_cnn,
    "while_counter_10k_us_per_iteration": while_counter,
    **{f"word2vec_nce_{v // 1000}k_step_ms": (lambda v=v: word2vec(v))
       for v in (10_000, 50_000, 200_000)},
}


def main() -> None:
    only = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--only=")), "")
    out, skipped = {}, {}
    for key, build in MODELS.items():
        if only and not any(key.startswith(p) for p in only.split(",")):
            continue
        try:
            out[key] = _fresh(build)
        except (AttributeError, NotImplementedError) as e:  # NOTE: an op this runtime lacks
            skipped[key] = f"{type(e).__name__}: {e}"[:200]
    if skipped:
        out["_skipped"] = skipped
    print(json.dumps(out))


if __name__ == "__main__":
    main()
