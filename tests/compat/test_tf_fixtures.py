"""GraphDefs written by TensorFlow 2.21 (tests/data/*.pb, from ../shared/fixtures/tf): import,
run on the inputs TF saw, compare with TF's outputs; export → re-import round trips; our
exported GraphDef's wire structure; write_graph / read_graph_def.

A fixture whose op types are not all registered with a CPU kernel yet is skipped, naming them.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.importer import graph_to_proto, import_graph_def
from tensorweave.ops.registry import OPS
from tensorweave.proto import graph_pb2
from tensorweave.runtime.kernels.registry import has_kernel
from tensorweave.training.graph_io import read_graph_def, write_graph

DATA = Path(__file__).resolve().parent.parent / "data"
MANIFEST = json.loads((DATA / "MANIFEST.json").read_text())
FIXTURES = ["arith", "mlp_digits", "cnn_digits"]


def _graph_def(name: str) -> graph_pb2.GraphDef:
    return graph_pb2.GraphDef.FromString((DATA / f"{name}.pb").read_bytes())


def _missing_ops(graph_def) -> list[str]:
    """Op types of `graph_def` without a registration or a CPU kernel, sorted."""
    return sorted({n.op for n in graph_def.node if n.op not in OPS or not has_kernel(n.op)})


def _skip_if_missing(graph_def) -> None:
    missing = _missing_ops(graph_def)
    if missing:
        pytest.skip(f"op types not registered yet (or without a CPU kernel): {missing}")


def _expected(name: str) -> tuple[dict, dict]:
    """(feeds, fetches) keyed by tensor name, from `<name>.expected.npz` as MANIFEST lists."""
    data = np.load(DATA / f"{name}.expected.npz")
    entry = MANIFEST[name]
    feeds = {k: data[f"feed:{k}"] for k in entry["feeds"]}
    fetches = {k: data[f"fetch:{k}"] for k in entry["fetches"]}
    return feeds, fetches


def _run_imported(graph_def, name: str, prefix: str = "import") -> list[np.ndarray]:
    """Imports `graph_def` under `prefix` into a fresh graph and runs the fixture's fetches."""
    feeds, fetches = _expected(name)
    g = tf.Graph()
    with g.as_default():
        import_graph_def(graph_def, name=prefix)
    scoped = (lambda k: f"{prefix}/{k}") if prefix else (lambda k: k)
    with tf.Session(graph=g) as sess:
        return sess.run([scoped(k) for k in fetches], {scoped(k): v for k, v in feeds.items()})


@pytest.mark.parametrize("name", FIXTURES)
def test_manifest_and_npz_agree(name):
    feeds, fetches = _expected(name)
    assert feeds and fetches
    gd = _graph_def(name)
    assert sorted({n.op for n in gd.node}) == MANIFEST[name]["ops"]
    assert gd.versions.producer > 0


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_outputs_match_tensorflow(name):
    gd = _graph_def(name)
    _skip_if_missing(gd)
    _, fetches = _expected(name)
    for (key, want), got in zip(fetches.items(), _run_imported(gd, name)):
        assert got.dtype == want.dtype and got.shape == want.shape, key
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=key)
        else:
            np.testing.assert_array_equal(got, want, err_msg=key)


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_imports_with_tf_names_and_static_shapes(name):
    gd = _graph_def(name)
    missing = [t for t in sorted({n.op for n in gd.node}) if t not in OPS]
    if missing:
        pytest.skip(f"op types not registered yet: {missing}")
    g = tf.Graph()
    with g.as_default():
        import_graph_def(gd, name="")
    assert [op.name for op in g.get_operations()] == _topological_names(gd)
    for fetch in MANIFEST[name]["fetches"]:
        want = _expected(name)[1][fetch].shape
        got = g.get_tensor_by_name(fetch).shape
        assert got.is_compatible_with(want), (fetch, got, want)


def _topological_names(gd) -> list[str]:
    """Node names in TF's import order: ready nodes by smallest GraphDef index."""
    import heapq

    index = {n.name: i for i, n in enumerate(gd.node)}
    deps = [{index[s.lstrip("^").split(":")[0]] for s in n.input} for n in gd.node]
    done: set[int] = set()
    ready = [i for i, d in enumerate(deps) if not d]
    heapq.heapify(ready)
    order = []
    while ready:
        i = heapq.heappop(ready)
        order.append(gd.node[i].name)
        done.add(i)
        for j, d in enumerate(deps):
            if i in d and j not in done and d <= done and j not in ready:
                heapq.heappush(ready, j)
    return order


@pytest.mark.parametrize("name", FIXTURES)
def test_export_reimport_round_trip(name):
    gd = _graph_def(name)
    _skip_if_missing(gd)
    g = tf.Graph()
    with g.as_default():
        import_graph_def(gd, name="")
    exported = graph_to_proto(g)
    assert {(n.name, n.op) for n in exported.node} == {(n.name, n.op) for n in gd.node}
    again = graph_pb2.GraphDef.FromString(exported.SerializeToString())
    first, second = _run_imported(gd, name, prefix=""), _run_imported(again, name, prefix="")
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", FIXTURES)
def test_export_of_imported_fixture_keeps_every_tf_attr(name):
    gd = _graph_def(name)
    missing = [t for t in sorted({n.op for n in gd.node}) if t not in OPS]
    if missing:
        pytest.skip(f"op types not registered yet: {missing}")
    g = tf.Graph()
    with g.as_default():
        import_graph_def(gd, name="")
    exported = {n.name: n for n in graph_to_proto(g).node}
    for node in gd.node:
        mine = exported[node.name]
        assert list(mine.input) == list(node.input), node.name
        for key, value in node.attr.items():  # TF writes every attr; ours must be equal
            assert mine.attr[key] == value, (node.name, key)


# -- our GraphDef on the wire ---------------------------------------------------------------
def _fields(data: bytes) -> list[tuple[int, int, bytes | int]]:
    """(field number, wire type, payload) of each top-level field of a serialized message."""
    out, i = [], 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            size, i = _varint(data, i)
            value, i = data[i:i + size], i + size
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        out.append((number, wire, value))
    return out


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, i


def test_exported_graph_def_uses_tensorflows_field_numbers():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        with tf.device("/cpu:0"):
            tf.identity(x + tf.constant([1.0, 2.0], name="c"), name="y")
    data = graph_to_proto(g).SerializeToString()
    top = _fields(data)
    # GraphDef: node = 1 (repeated NodeDef), versions = 4 (VersionDef); no library when empty
    assert [n for n, _, _ in top] == [1, 1, 1, 1, 4]
    assert _fields(top[-1][2]) == [(1, 0, 1882)]  # VersionDef.producer = 1
    y = dict(((n, v) for n, _, v in _fields(top[3][2]) if n != 5))
    # NodeDef: name = 1, op = 2, input = 3, device = 4, attr = 5 (map<string, AttrValue>)
    assert y == {1: b"y", 2: b"Identity", 3: b"add", 4: b"/device:CPU:0"}
    const_attrs = {}
    for number, _, entry in _fields(top[1][2]):
        if number == 5:
            key, value = (v for _, _, v in _fields(entry))
            const_attrs[key] = _fields(value)
    assert const_attrs[b"dtype"] == [(6, 0, 1)]  # AttrValue.type = 6, DT_FLOAT = 1
    (number, _, tensor), = const_attrs[b"value"]
    assert number == 8  # AttrValue.tensor = 8
    tensor_fields = {n: v for n, _, v in _fields(tensor)}
    assert tensor_fields[1] == 1  # TensorProto.dtype = 1
    assert _fields(tensor_fields[2]) == [(2, 2, bytes([8, 2]))]  # TensorShapeProto.dim{size:2}
    assert np.frombuffer(tensor_fields[4], "<f4").tolist() == [1.0, 2.0]  # tensor_content = 4


# -- files ----------------------------------------------------------------------------------
@pytest.mark.parametrize("as_text", [True, False])
def test_write_graph_and_read_back(tmp_path, as_text):
    gd = _graph_def("mlp_digits")
    path = write_graph(gd, tmp_path / "a" / "b", "g.pbtxt" if as_text else "g.pb", as_text)
    assert path == str(tmp_path / "a" / "b" / ("g.pbtxt" if as_text else "g.pb"))
    assert read_graph_def(path) == gd
    raw = Path(path).read_bytes()
    assert raw.startswith(b'node {\n  name: "x"') if as_text else raw == gd.SerializeToString(
        deterministic=True)
    assert [p.name for p in Path(path).parent.iterdir()] == [Path(path).name]  # no temp left


def test_write_graph_of_a_graph_and_misnamed_text(tmp_path):
    g = tf.Graph()
    with g.as_default():
        tf.placeholder(tf.float32, [3], name="x")
    path = write_graph(g, str(tmp_path), "graph.pb", as_text=True)  # text despite ".pb"
    assert read_graph_def(path) == g.as_graph_def()
    (tmp_path / "junk.pb").write_bytes(b"\xff\xfe not a graph")
    with pytest.raises(ValueError, match="not a GraphDef file"):
        read_graph_def(tmp_path / "junk.pb")


def test_tf_written_bytes_import_through_read_graph_def():
    gd = read_graph_def(DATA / "arith.pb")
    assert [n.name for n in gd.node][:3] == ["a", "b", "sub"]
    assert gd == _graph_def("arith")
