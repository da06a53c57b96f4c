"""What a master does with requests no client of ours would send (graphs from the network)."""

from __future__ import annotations

import pytest

from tensorweave import dtypes, errors, ir
from tensorweave.master.master import LocalMaster


def _node(name, op, inputs=(), **attrs):
    n = ir.NodeDef(name, op)
    n.inputs = list(inputs)
    n.attrs = dict(attrs)
    return n


def test_unknown_input_node_is_refused_and_nothing_is_added():
    m = LocalMaster()
    with pytest.raises(errors.InvalidArgumentError, match="Unknown input node 'nowhere'"):
        m.create_session(ir.GraphDef(nodes=[_node("a", "Identity", ["nowhere"],
                                                  T=dtypes.float32)]), {})
    c = _node("c", "Const", dtype=dtypes.float32, value=__import__("numpy").float32(2.0))
    h = m.create_session(ir.GraphDef(nodes=[c]), {})
    with pytest.raises(errors.InvalidArgumentError, match="Unknown input node 'gone:0'"):
        m.extend_session(h, ir.GraphDef(nodes=[_node("b", "Identity", ["c"], T=dtypes.float32),
                                               _node("d", "Identity", ["gone:0"],
                                                     T=dtypes.float32)]))
    with pytest.raises(errors.NotFoundError):
        m.run_step(h, {}, ["b:0"], [])  # the refused extension added nothing
    assert m.run_step(h, {}, ["c:0"], [])[0][0] == 2.0


def test_device_count_is_bounded():
    with pytest.raises(errors.InvalidArgumentError, match="device_count"):
        LocalMaster().create_session(ir.GraphDef(), {"device_count": {"CPU": 2 ** 31 - 1}})


def test_feed_count_must_match_the_callable():
    m = LocalMaster()
    x = _node("x", "Placeholder", dtype=dtypes.float32)
    y = _node("y", "Identity", ["x"], T=dtypes.float32)
    h = m.create_session(ir.GraphDef(nodes=[x, y]), {})
    cid, _ = m.make_callable(h, ["x:0"], ["y:0"], [])
    with pytest.raises(errors.InvalidArgumentError, match="takes 1 feed"):
        m.run_callable(h, cid, [])
    with pytest.raises(errors.InvalidArgumentError, match="takes 1 feed"):
        m.run_callable(h, cid, [1.0, 2.0])


def test_arg_index_never_reaches_generated_code_unless_an_int():
    from tensorweave.runtime.worker import LocalWorker

    w = LocalWorker(["/job:localhost/replica:0/task:0/device:CPU:0"])
    arg = _node("a", "_Arg", T=dtypes.float32, index="0]; import os; v=args[0")
    ret = _node("r", "_Retval", ["a"], T=dtypes.float32, index=0)
    with pytest.raises(errors.InvalidArgumentError, match="expected an int"):
        h = w.register_graph(ir.GraphDef(nodes=[arg, ret]), w.get_status()[0]["name"])
        w.run_graph(h, 1, [1.0], {})
