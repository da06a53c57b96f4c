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


def _sections(text: str) -> dict[str, list[str]]:
    out, name = {}, None
    for line in text.splitlines():
        if line.startswith("== "):
            name = line[3:].split(":")[0]
            out[name] = []
        elif name is not None:
            out[name].append(line)
    return out


def test_text_shows_what_each_stage_changed():
    x, y, _ = _model()
    ex = explain(y, {x: None})
    text, full = ex.text(), ex.text(full=True)
    assert len(text) < len(full)
    table = text.splitlines()[:len(ex.stages) + 1]
    assert table[0].split() == ["stage", "nodes", "change"]
    assert [line.split()[-1] for line in table[1:3]] == [str(ex.counts()["full"])] * 2
    # NOTE: the long device name appears once, in the legend; nodes show `CPU:0`
    assert text.count("/job:localhost/replica:0/task:0/device:CPU:0") == 1
    s = _sections(text)
    assert s["placed"] == [f"  devices: CPU:0 x{ex.counts()['full']}"]
    pruned = "\n".join(s["pruned"])
    assert "one _Arg node per fed tensor and one _Retval node per fetched tensor" in pruned
    assert "  - fed: x\n" in pruned and "  + _arg_x_0_0 = _Arg[" in pruned
    assert "  + _retval_s2_0_0 = _Retval[" in pruned
    not_needed = next(line for line in s["pruned"] if "not needed" in line)
    assert "unused" in not_needed and "w" in not_needed.split(": ")[1].split(", ")
    assert s["pass constant_folding"] == ["  # (no change)"]
    assert any(line.startswith("  ~ s2 = _TwFusedElementwise") for line in s["pass remapper"])
    assert "== pass remapper: 4 -> 3 nodes ==" in text and "  - removed: s1" in s["pass remapper"]


def test_full_text_prints_every_stage_whole():
    x, y, _ = _model()
    ex = explain(y, {x: None})
    s = _sections(ex.text(full=True))
    for stage in ex.stages:
        body = "\n".join(s[stage.name])
        for g in stage.graphs.values():
            assert all(f"    {n.name} = {n.op}[" in body for n in g.nodes), stage.name


def test_text_of_partitions_names_sends_and_recvs():
    x, y, _ = _model()
    with tf.device("/cpu:1"):
        z = tf.sin(y, name="z")
    text = explain(z, {x: None}, config={"device_count": {"CPU": 2}}).text()
    part = _sections(text)["partitioned"]
    assert any(line.startswith("  + ") and "= _Send[" in line for line in part)
    assert any(line.startswith("  + ") and "= _Recv[" in line for line in part)
    assert 'send_device="CPU:' in text and "replica:0" not in "\n".join(part)
    assert any(line.startswith("  2 partitions: CPU:0 x") for line in part)
    assert "  what runs:" in part and "  [CPU:1]" in part   # the last stage whole, by device


def test_text_of_a_large_graph_is_bounded_and_full_is_not():
    from tensorweave.master import explain_text

    x = tf.placeholder(tf.float32, [None, 2], name="x")
    h = x
    for _ in range(150):
        h = tf.nn.relu(h * np.float32(1.5) + np.float32(0.5))  # CSE merges 298 constants
    ex = explain(h, {x: None})
    text, full = ex.text(), ex.text(full=True)
    cse = _sections(text)["pass cse"]
    assert len(cse) <= 3 * (explain_text.MAX_LINES + 1)
    assert any("more; --full prints every node)" in line for line in cse)
    assert len(text.splitlines()) < 400 < ex.counts()["full"] * 2 < len(full.splitlines())
    assert sum(line.startswith("  # merged") for line in _sections(full)["pass cse"]) == 298
