"""`OpError` carries its structure as fields (node, op, creation site, task); the message is
rendered from them, so adding the site or the task never edits text."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import tensorweave as tf
from tensorweave import errors, ir


def test_the_message_is_rendered_from_the_fields():
    e = errors.InvalidArgumentError(ir.NodeDef("mm", "MatMul"), None, "shapes differ")
    assert e.node_name == "mm" and e.op_type == "MatMul" and e.detail == "shapes differ"
    assert e.message == "shapes differ\n\t [[node mm (op MatMul)]]"
    sited = e.replace(site="model.py:12", task="/job:ps/replica:0/task:0")
    assert sited.message == ("shapes differ (task /job:ps/replica:0/task:0)\n"
                             "\t [[node mm (op MatMul, defined at model.py:12)]]")
    assert type(sited) is errors.InvalidArgumentError and e.site is None  # a copy
    assert sited.render(with_node=False) == "shapes differ (task /job:ps/replica:0/task:0)"
    back = pickle.loads(pickle.dumps(sited))
    assert (type(back), back.message, back.task) == (type(sited), sited.message, sited.task)


def test_a_session_adds_the_creation_site_once():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        bad = tf.check_numerics(x, "found a nan", name="guard")
        with tf.Session() as s:
            with pytest.raises(errors.InvalidArgumentError) as info:
                s.run(bad, {x: np.array([np.nan], np.float32)})
    e = info.value
    assert e.node_name == "guard" and e.op_type == "CheckNumerics"
    assert e.site and "test_errors.py" in e.site
    assert e.message.count("[[node guard") == 1 and f"defined at {e.site}" in e.message


@pytest.mark.multiprocess
def test_a_remote_failure_names_its_task_and_node_once():
    from tensorweave.distributed.local_cluster import LocalCluster

    with LocalCluster(ps=1, workers=1) as c, tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        with tf.device("/job:ps/task:0"):
            bad = tf.check_numerics(x * 2.0, "found a nan", name="ps_guard")
        with tf.Session(c.target("worker", 0)) as s:
            with pytest.raises(errors.InvalidArgumentError) as info:
                s.run(bad + 1.0, {x: np.array([np.nan], np.float32)})
    msg = info.value.message
    assert "/job:ps/replica:0/task:0" in msg and "found a nan" in msg
    assert msg.count("[[node ps_guard") == 1
