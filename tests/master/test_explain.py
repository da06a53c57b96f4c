"""explain: every stage, deterministic text, DOT, counts."""

import numpy as np

import tensorweave as tf
from tensorweave.master.explain import explain


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    tf.constant(np.ones((3, 2), np.float32), name="w")  # pruned: nothing reads it
    y = tf.sin(tf.sin(x * 1.0, name="s1"), name="s2")
    unused = tf.cos(x, name="unused")
    return x, y, unused


def test_stages_and_counts():
    x, y, _ = _model()
    ex = explain(y, {x: None})
    names = [s.name for s in ex.stages]
    assert names[:3] == ["full", "placed", "pruned"] and names[-1] == "partitioned"
    assert "pass constant_folding" in names and "pass remapper" in names
    counts = ex.counts()
    assert counts["full"] == len(tf.get_default_graph().get_operations())
    assert counts["pruned"] < counts["full"]          # `unused` and the weight are pruned
    assert counts["pass remapper"] < counts["pass arithmetic"]  # the sin chain fused


def test_text_is_deterministic_and_shows_what_passes_did():
    x, y, _ = _model()
    a = explain(y, {x: None}).text()
    b = explain(y, {x: None}).text()
    assert a == b
    assert "# simplified" in a and "# fused 2 elementwise ops into s2" in a
    assert "s2 = _TwFusedElementwise" in a


def test_dot_has_device_clusters():
    x, y, _ = _model()
    with tf.device("/cpu:1"):
        z = tf.sin(y, name="z")
    dot = explain(z, {x: None}, config={"device_count": {"CPU": 2}}).dot()
    assert dot.startswith('digraph "partitioned"')
    assert "cluster_1" in dot and "_Send" in dot and '"s2" -> ' in dot
