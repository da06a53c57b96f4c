"""IR <-> protobuf: tensors, shapes, attrs, nodes, functions, graphs, and TF's wire format."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tensorweave import dtypes, ir
from tensorweave.ops.registry import AttrSpec
from tensorweave.proto import (
    attr_value_pb2,
    config_pb2,
    event_pb2,
    example_pb2,
    function_pb2,
    graph_pb2,
    meta_graph_pb2,
    node_def_pb2,
    step_stats_pb2,
    summary_pb2,
    tensor_bundle_pb2,
    tensor_pb2,
    tensor_shape_pb2,
    types_pb2,
)
from tensorweave.proto.convert import (
    AttrPlaceholder,
    attr_from_proto,
    attr_to_proto,
    function_from_proto,
    function_to_proto,
    graph_from_proto,
    graph_to_proto,
    node_from_proto,
    node_to_proto,
    shape_from_proto,
    shape_to_proto,
    tensor_from_proto,
    tensor_to_proto,
)
from tensorweave.shapes import TensorShape

DATA = Path(__file__).resolve().parent.parent / "data"


# -- tensors ------------------------------------------------------------------------------------
NUMERIC = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
           "uint32", "uint64", "bool", "complex64", "complex128"]
SHAPES = [(), (0,), (0, 3), (1,), (2, 3), (2, 1, 4)]


def _values(np_name: str, shape: tuple) -> np.ndarray:
    n = int(np.prod(shape))
    base = np.arange(1, n + 1) * 3 - 7
    if np_name == "bool":
        return (base % 2 == 0).reshape(shape)
    if np_name.startswith("complex"):
        return (base + 0.5j * base[::-1]).astype(np_name).reshape(shape)
    if np_name.startswith("uint"):
        return (np.abs(base) + 250).astype(np_name).reshape(shape)
    if np_name.startswith("float"):
        return (base / 4).astype(np_name).reshape(shape)
    return base.astype(np_name).reshape(shape)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("np_name", NUMERIC)
def test_numeric_tensor_round_trip(np_name, shape):
    arr = _values(np_name, shape)
    proto = tensor_to_proto(arr)
    assert proto.dtype == dtypes.as_dtype(np_name).as_datatype_enum
    back = tensor_from_proto(proto)
    assert back.dtype == arr.dtype and back.shape == arr.shape
    np.testing.assert_array_equal(back, arr)
    assert back.flags.writeable  # a copy, not a view of the proto's bytes


@pytest.mark.parametrize("np_name,field", [
    ("float32", "tensor_content"), ("float16", "tensor_content"), ("int64", "tensor_content"),
    ("uint8", "tensor_content"), ("uint64", "tensor_content"), ("bool", "bool_val"),
    ("uint16", "int_val"), ("complex64", "scomplex_val"), ("complex128", "dcomplex_val"),
])
def test_multi_element_tensors_use_tf_representation(np_name, field):
    proto = tensor_to_proto(_values(np_name, (2, 3)))
    fields = {f.name for f, _ in proto.ListFields()} - {"dtype", "tensor_shape"}
    assert fields == {field}


@pytest.mark.parametrize("np_name,field", [
    ("float32", "float_val"), ("float64", "double_val"), ("int32", "int_val"),
    ("int8", "int_val"), ("int64", "int64_val"), ("uint32", "uint32_val"),
    ("uint64", "uint64_val"), ("float16", "half_val"), ("bool", "bool_val"),
])
def test_scalars_use_val_fields(np_name, field):
    proto = tensor_to_proto(_values(np_name, ()))
    fields = {f.name for f, _ in proto.ListFields()} - {"dtype", "tensor_shape"}
    assert fields == {field}


def test_tensor_content_is_little_endian_row_major():
    proto = tensor_to_proto(np.array([[1, 258], [-1, 0]], dtype=">i4"))
    assert proto.tensor_content == bytes.fromhex("01000000" "02010000" "ffffffff" "00000000")
    assert [d.size for d in proto.tensor_shape.dim] == [2, 2]


def test_float16_scalar_is_a_bit_pattern_in_half_val():
    proto = tensor_to_proto(np.float16(1.0))
    assert list(proto.half_val) == [0x3C00]


def test_half_val_decodes_bit_patterns():
    proto = tensor_pb2.TensorProto(dtype=types_pb2.DT_HALF, half_val=[0x3C00, 0xC000, 0x7C00])
    proto.tensor_shape.dim.add(size=3)
    np.testing.assert_array_equal(tensor_from_proto(proto),
                                  np.array([1.0, -2.0, np.inf], dtype=np.float16))


def test_bfloat16_round_trip():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    arr = np.array([1.5, -2.0, 3.0], dtype=ml_dtypes.bfloat16)
    np.testing.assert_array_equal(tensor_from_proto(tensor_to_proto(arr)), arr)


@pytest.mark.parametrize("values", [
    np.array(["a", "héllo", ""]),
    np.array([b"x", b"\xff\xfe\x00raw", b""], dtype=object),
    np.array([["ab", "cd"], ["ef", "gh"]], dtype=object),
    np.array("scalar"),
    np.array([], dtype=object).reshape(0, 2),
])
def test_string_tensor_round_trip(values):
    proto = tensor_to_proto(values)
    assert proto.dtype == types_pb2.DT_STRING
    assert len(proto.string_val) == values.size and not proto.tensor_content
    back = tensor_from_proto(proto)
    assert back.dtype == object and back.shape == values.shape
    expected = [v.encode() if isinstance(v, str) else v for v in values.ravel().tolist()]
    assert back.ravel().tolist() == expected
    assert all(type(v) is bytes for v in back.ravel())


def test_explicit_dtype_casts():
    proto = tensor_to_proto(np.array([1, 2, 3]), dtypes.float64)
    assert proto.dtype == types_pb2.DT_DOUBLE
    assert tensor_from_proto(proto).dtype == np.float64


def _proto(dtype, dims, **fields) -> tensor_pb2.TensorProto:
    proto = tensor_pb2.TensorProto(dtype=dtype, **fields)
    for d in dims:
        proto.tensor_shape.dim.add(size=d)
    return proto


@pytest.mark.parametrize("proto,expected", [
    (_proto(types_pb2.DT_FLOAT, [2, 3], float_val=[1.0, 2.0]),
     np.array([[1, 2, 2], [2, 2, 2]], np.float32)),
    (_proto(types_pb2.DT_INT32, [4], int_val=[7]), np.full(4, 7, np.int32)),
    (_proto(types_pb2.DT_INT64, [3], int64_val=[-1, 5]), np.array([-1, 5, 5], np.int64)),
    (_proto(types_pb2.DT_BOOL, [3], bool_val=[True]), np.ones(3, bool)),
    (_proto(types_pb2.DT_DOUBLE, [2, 2]), np.zeros((2, 2), np.float64)),
    (_proto(types_pb2.DT_HALF, [3], half_val=[0x3C00]), np.ones(3, np.float16)),
    (_proto(types_pb2.DT_COMPLEX64, [3], scomplex_val=[1.0, 2.0]),
     np.full(3, 1 + 2j, np.complex64)),
    (_proto(types_pb2.DT_COMPLEX128, [2], dcomplex_val=[1.0, 2.0, 3.0, -4.0]),
     np.array([1 + 2j, 3 - 4j])),
    (_proto(types_pb2.DT_UINT8, [2], int_val=[255]), np.array([255, 255], np.uint8)),
    (_proto(types_pb2.DT_UINT64, [2], uint64_val=[2**64 - 1]),
     np.array([2**64 - 1] * 2, np.uint64)),
    (_proto(types_pb2.DT_STRING, [3], string_val=[b"a", b"b"]),
     np.array([b"a", b"b", b"b"], dtype=object)),
    (_proto(types_pb2.DT_STRING, [2]), np.array([b"", b""], dtype=object)),
    (_proto(types_pb2.DT_FLOAT, [0, 4]), np.zeros((0, 4), np.float32)),
])
def test_short_val_lists_repeat_their_last_value(proto, expected):
    got = tensor_from_proto(proto)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("proto", [
    _proto(types_pb2.DT_FLOAT, [2], float_val=[1.0, 2.0, 3.0]),
    _proto(types_pb2.DT_FLOAT, [2], tensor_content=b"\x00" * 4),
    _proto(types_pb2.DT_FLOAT, [-1], float_val=[1.0]),
    _proto(types_pb2.DT_COMPLEX64, [1], scomplex_val=[1.0]),
])
def test_malformed_tensors_raise_value_error(proto):
    with pytest.raises(ValueError):
        tensor_from_proto(proto)


def test_undecodable_dtype_raises_type_error():
    with pytest.raises(TypeError, match="qint8"):
        tensor_from_proto(_proto(types_pb2.DT_QINT8, [1], int_val=[1]))


# -- shapes -------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [TensorShape(None), TensorShape([]), TensorShape([3, None, 1]),
                                   TensorShape([0])])
def test_shape_round_trip(shape):
    assert shape_from_proto(shape_to_proto(shape)) == shape


def test_shape_proto_layout():
    assert shape_to_proto(TensorShape(None)) == tensor_shape_pb2.TensorShapeProto(
        unknown_rank=True)
    proto = shape_to_proto([2, None])
    assert [d.size for d in proto.dim] == [2, -1] and not proto.unknown_rank


# -- attrs --------------------------------------------------------------------------------------
FUNC = ir.NameAttrList("f", {"T": dtypes.float32, "n": 2, "inner": ir.NameAttrList("g")})

ATTRS = [  # (value, attr_type, oneof field)
    (3, "int", "i"), (-(2**40), None, "i"), (2.5, "float", "f"), (True, "bool", "b"),
    (False, None, "b"), ("SAME", "string", "s"), (b"\xff\x00bin", None, "s"),
    (dtypes.float32, "type", "type"), (dtypes.int64, None, "type"),
    (TensorShape([None, 3]), "shape", "shape"), (TensorShape(None), None, "shape"),
    (FUNC, "func", "func"), (FUNC, None, "func"),
    ([1, 2, 3], "list(int)", "list"), ([1.5, 2.0], "list(float)", "list"),
    ([True, False], None, "list"), (["loc:@a", "loc:@b"], "list(string)", "list"),
    ([dtypes.float32, dtypes.int32], "list(type)", "list"),
    ([TensorShape([1]), TensorShape(None)], "list(shape)", "list"),
    ([FUNC], None, "list"), ([], "list(int)", "list"), ([], None, "list"),
]


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("value,attr_type,field", ATTRS)
def test_attr_round_trip(value, attr_type, field):
    proto = attr_to_proto(value, attr_type)
    assert proto.WhichOneof("value") == field
    assert _same(attr_from_proto(proto), value)


def test_tensor_attrs_round_trip():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert _same(attr_from_proto(attr_to_proto(arr, "tensor")), arr)
    items = [arr, np.array([b"s"], dtype=object)]
    back = attr_from_proto(attr_to_proto(items, "list(tensor)"))
    assert _same(back[0], items[0]) and back[1].tolist() == [b"s"]


def test_attr_type_disambiguates():
    assert attr_to_proto(2, "float") == attr_value_pb2.AttrValue(f=2.0)
    assert attr_to_proto([1, 2], "list(float)").list.f == [1.0, 2.0]
    assert attr_to_proto([2, 3], "shape").shape == shape_to_proto([2, 3])
    assert attr_to_proto("g", "func").func.name == "g"
    empty = attr_to_proto([], "list(type)")
    assert empty.HasField("list") and empty.list == attr_value_pb2.AttrValue.ListValue()


def test_bool_is_not_written_as_int():
    assert attr_to_proto(True).WhichOneof("value") == "b"
    assert attr_to_proto([1, 2.5]).list.f == [1.0, 2.5]
    assert attr_to_proto(np.int64(4)) == attr_value_pb2.AttrValue(i=4)


def test_strings_decode_as_utf8_when_valid():
    assert attr_from_proto(attr_value_pb2.AttrValue(s="héllo".encode())) == "héllo"
    assert attr_from_proto(attr_value_pb2.AttrValue(s=b"\xc3")) == b"\xc3"


def test_placeholder_attr():
    proto = attr_value_pb2.AttrValue(placeholder="T")
    value = attr_from_proto(proto)
    assert isinstance(value, AttrPlaceholder) and value == "T"
    assert attr_to_proto(value, "type") == proto
    assert attr_to_proto(value) == proto


def test_empty_attr_value_is_none():
    assert attr_from_proto(attr_value_pb2.AttrValue()) is None
    assert attr_to_proto(None) == attr_value_pb2.AttrValue()


@pytest.mark.parametrize("value,attr_type", [
    ([1, 2], "int"), (3, "list(int)"), ("x", "float"), (1.5, "int"), (object(), None),
    ([1, "a"], None), (3, "list(magic)"), (3, "magic"),
])
def test_attr_mismatch_raises(value, attr_type):
    with pytest.raises((TypeError, ValueError)):
        attr_to_proto(value, attr_type)


# -- nodes, functions, graphs -------------------------------------------------------------------
OP_DEF = SimpleNamespace(attrs={"alpha": AttrSpec("alpha", "float"),
                                "ks": AttrSpec("ks", "list(int)"),
                                "T": AttrSpec("T", "type")})


def test_node_round_trip_with_op_def():
    node = ir.NodeDef("n", "Fancy", ["a", "b:1", "^c"], "/device:CPU:0",
                      {"alpha": 1, "ks": [], "T": dtypes.float32, "_class": ["loc:@a"]})
    proto = node_to_proto(node, OP_DEF)
    assert proto.attr["alpha"] == attr_value_pb2.AttrValue(f=1.0)
    assert proto.attr["ks"].HasField("list")
    assert list(proto.attr["_class"].list.s) == [b"loc:@a"]
    back = node_from_proto(proto)
    assert (back.name, back.op, back.inputs, back.device) == (node.name, node.op, node.inputs,
                                                              node.device)
    assert back.attrs == {"alpha": 1.0, "ks": [], "T": dtypes.float32, "_class": ["loc:@a"]}


def test_node_attr_error_names_node_and_attr():
    node = ir.NodeDef("bad", "Fancy", attrs={"ks": 5})
    with pytest.raises(TypeError, match=r"Node 'bad' \(op Fancy\).*'ks'"):
        node_to_proto(node, OP_DEF)


def _function() -> ir.FunctionDef:
    body = [ir.NodeDef("mul", "Mul", ["x", "y"], attrs={"T": AttrPlaceholder("T")}),
            ir.NodeDef("noop", "NoOp", ["^mul"])]
    return ir.FunctionDef(
        name="MyMul",
        input_args=[ir.ArgDefIR("x", type_attr="T"), ir.ArgDefIR("y", type_attr="T")],
        output_args=[ir.ArgDefIR("z", type=dtypes.float32), ir.ArgDefIR("l", number_attr="N",
                                                                        type_attr="T")],
        attrs={"_noinline": True}, nodes=body, ret={"z": "mul:z:0", "l": "mul:z:0"},
        control_ret={"done": "noop"}, is_stateful=True)


def test_function_round_trip():
    fn = _function()
    proto = function_to_proto(fn)
    assert proto.signature.name == "MyMul" and list(proto.signature.control_output) == ["done"]
    assert proto.signature.output_arg[0].type == types_pb2.DT_FLOAT
    assert proto.node_def[0].attr["T"].placeholder == "T"
    assert function_from_proto(proto) == fn
    parsed = function_pb2.FunctionDef.FromString(proto.SerializeToString())
    assert function_from_proto(parsed) == fn


def test_graph_with_library_round_trip():
    graph = ir.GraphDef([ir.NodeDef("c", "MyMul", ["a", "b"])], [_function()], 27, 12)
    proto = graph_to_proto(graph)
    assert (proto.versions.producer, proto.versions.min_consumer) == (27, 12)
    assert graph_from_proto(graph_pb2.GraphDef.FromString(proto.SerializeToString())) == graph


def _load(name: str) -> graph_pb2.GraphDef:
    return graph_pb2.GraphDef.FromString((DATA / f"{name}.pb").read_bytes())


@pytest.mark.parametrize("name", ["arith", "mlp_digits", "cnn_digits"])
def test_tf_graphdef_round_trip(name):
    original = _load(name)
    back = graph_to_proto(graph_from_proto(original))
    # NOTE: TF writes `library {}` for some graphs; the IR holds no functions either way and
    # we write no library then. An empty library is TF's "no functions", so drop it to compare.
    assert not original.library.function
    original.ClearField("library")
    assert back == original
    assert len(back.node) == len(original.node)
    for ours, theirs in zip(back.node, original.node):
        assert ours == theirs, ours.name


CONST_SHAPES = {
    "arith": {"mul/y": ((), np.float32), "ArgMax/dimension": ((), np.int32)},
    "mlp_digits": {"dense/kernel": ((64, 32), np.float32), "dense_1/bias": ((10,), np.float32)},
    "cnn_digits": {"conv2d/kernel": ((3, 3, 1, 16), np.float32),
                   "Reshape/shape": ((4,), np.int32), "training/input": ((), np.bool_)},
}


@pytest.mark.parametrize("name", ["arith", "mlp_digits", "cnn_digits"])
def test_tf_consts_decode(name):
    graph = graph_from_proto(_load(name))
    consts = {n.name: n for n in graph.nodes if n.op == "Const"}
    assert consts
    for node in consts.values():
        value = node.attrs["value"]
        assert isinstance(value, np.ndarray) and value.dtype == node.attrs["dtype"].np_dtype
    for cname, (shape, np_dtype) in CONST_SHAPES[name].items():
        value = consts[cname].attrs["value"]
        assert value.shape == shape and value.dtype == np_dtype
    assert graph.producer > 0


def test_cnn_reshape_const_values():
    graph = graph_from_proto(_load("cnn_digits"))
    shape = next(n for n in graph.nodes if n.name == "Reshape/shape").attrs["value"]
    assert shape[0] == -1 and shape[1:].tolist() == [8, 8, 1]


# -- wire format: TF's field numbers ------------------------------------------------------------
def _key(field: int, wire: int) -> bytes:
    return bytes([field << 3 | wire])


def _ld(field: int, payload: bytes) -> bytes:
    assert len(payload) < 128
    return _key(field, 2) + bytes([len(payload)]) + payload


def test_hand_encoded_node_def():
    attr_value = _key(3, 0) + b"\x05"                               # AttrValue.i = 5
    entry = _ld(1, b"k") + _ld(2, attr_value)                       # map entry key=1, value=2
    wire = (_ld(1, b"n") + _ld(2, b"Op") + _ld(3, b"a") + _ld(3, b"^b")
            + _ld(4, b"/cpu:0") + _ld(5, entry))
    node = node_def_pb2.NodeDef.FromString(wire)
    assert (node.name, node.op, list(node.input), node.device) == ("n", "Op", ["a", "^b"],
                                                                   "/cpu:0")
    assert node.attr["k"].i == 5
    assert node.SerializeToString(deterministic=True) == wire
    assert node_from_proto(node).attrs == {"k": 5}


def test_hand_encoded_tensor_proto():
    shape = _ld(2, _key(1, 0) + b"\x02")                            # dim { size: 2 }
    floats = np.array([1.0, -2.0], "<f4").tobytes()
    wire = _key(1, 0) + b"\x01" + _ld(2, shape) + _ld(5, floats)    # DT_FLOAT, packed float_val
    np.testing.assert_array_equal(tensor_from_proto(tensor_pb2.TensorProto.FromString(wire)),
                                  np.array([1.0, -2.0], np.float32))


FIELD_NUMBERS = {  # message: {field: number}, from TensorFlow's .proto files
    graph_pb2.GraphDef: {"node": 1, "library": 2, "version": 3, "versions": 4, "debug_info": 5},
    node_def_pb2.NodeDef: {"name": 1, "op": 2, "input": 3, "device": 4, "attr": 5,
                           "experimental_debug_info": 6, "experimental_type": 7},
    attr_value_pb2.AttrValue: {"list": 1, "s": 2, "i": 3, "f": 4, "b": 5, "type": 6,
                               "shape": 7, "tensor": 8, "placeholder": 9, "func": 10},
    attr_value_pb2.AttrValue.ListValue: {"s": 2, "i": 3, "f": 4, "b": 5, "type": 6, "shape": 7,
                                         "tensor": 8, "func": 9},
    tensor_pb2.TensorProto: {"dtype": 1, "tensor_shape": 2, "version_number": 3,
                             "tensor_content": 4, "float_val": 5, "double_val": 6, "int_val": 7,
                             "string_val": 8, "scomplex_val": 9, "int64_val": 10,
                             "bool_val": 11, "dcomplex_val": 12, "half_val": 13,
                             "resource_handle_val": 14, "variant_val": 15, "uint32_val": 16,
                             "uint64_val": 17, "float8_val": 18},
    function_pb2.FunctionDef: {"signature": 1, "node_def": 3, "ret": 4, "attr": 5,
                               "control_ret": 6, "arg_attr": 7, "resource_arg_unique_id": 8},
    config_pb2.ConfigProto: {"device_count": 1, "intra_op_parallelism_threads": 2,
                             "placement_period": 3, "device_filters": 4,
                             "inter_op_parallelism_threads": 5, "gpu_options": 6,
                             "allow_soft_placement": 7, "log_device_placement": 8,
                             "use_per_session_threads": 9, "graph_options": 10,
                             "operation_timeout_in_ms": 11, "session_inter_op_thread_pool": 12,
                             "rpc_options": 13, "cluster_def": 14, "isolate_session_state": 15,
                             "experimental": 16, "share_cluster_devices_in_session": 17},
    config_pb2.RunOptions: {"trace_level": 1, "timeout_in_ms": 2, "inter_op_thread_pool": 3,
                            "output_partition_graphs": 5, "debug_options": 6,
                            "report_tensor_allocations_upon_oom": 7, "experimental": 8},
    config_pb2.RunMetadata: {"step_stats": 1, "cost_graph": 2, "partition_graphs": 3,
                             "function_graphs": 4},
    step_stats_pb2.NodeExecStats: {"node_name": 1, "all_start_micros": 2,
                                   "op_start_rel_micros": 3, "op_end_rel_micros": 4,
                                   "all_end_rel_micros": 5, "memory": 6, "output": 7,
                                   "timeline_label": 8, "scheduled_micros": 9, "thread_id": 10,
                                   "referenced_tensor": 11},
    event_pb2.Event: {"wall_time": 1, "step": 2, "file_version": 3, "graph_def": 4,
                      "summary": 5, "log_message": 6, "session_log": 7,
                      "tagged_run_metadata": 8, "meta_graph_def": 9},
    summary_pb2.Summary.Value: {"tag": 1, "simple_value": 2, "image": 4, "histo": 5,
                                "audio": 6, "tensor": 8, "metadata": 9},
    summary_pb2.HistogramProto: {"min": 1, "max": 2, "num": 3, "sum": 4, "sum_squares": 5,
                                 "bucket_limit": 6, "bucket": 7},
    tensor_bundle_pb2.BundleEntryProto: {"dtype": 1, "shape": 2, "shard_id": 3, "offset": 4,
                                         "size": 5, "crc32c": 6, "slices": 7},
    example_pb2.SequenceExample: {"context": 1, "feature_lists": 2},
    meta_graph_pb2.MetaGraphDef: {"meta_info_def": 1, "graph_def": 2, "saver_def": 3,
                                  "collection_def": 4, "signature_def": 5, "asset_file_def": 6},
}


@pytest.mark.parametrize("message", list(FIELD_NUMBERS), ids=lambda m: m.DESCRIPTOR.name)
def test_field_numbers_match_tensorflow(message):
    got = {f.name: f.number for f in message.DESCRIPTOR.fields}
    for name, number in FIELD_NUMBERS[message].items():
        assert got[name] == number, name


def test_messages_live_in_our_proto_package():
    assert graph_pb2.GraphDef.DESCRIPTOR.full_name == "tensorweave.GraphDef"
    assert types_pb2.DataType.Value("DT_HALF") == 19
    assert types_pb2.DataType.Value("DT_UINT64_REF") == 123


# -- property: any array survives the trip --------------------------------------------------------
hypothesis = pytest.importorskip("hypothesis")
hnp = pytest.importorskip("hypothesis.extra.numpy")


@hypothesis.settings(max_examples=60, deadline=None)
@hypothesis.given(hnp.arrays(
    dtype=hypothesis.strategies.sampled_from(
        [np.float16, np.float32, np.float64, np.int8, np.int64, np.uint16, np.uint64, np.bool_,
         np.complex64]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)))
def test_any_array_round_trips(arr):
    back = tensor_from_proto(tensor_pb2.TensorProto.FromString(
        tensor_to_proto(arr).SerializeToString()))
    assert back.dtype == arr.dtype and back.shape == arr.shape
    assert back.tobytes() == arr.tobytes()  # bit-exact, NaNs and -0.0 too


def test_complex_signed_zeros_survive():
    arr = np.array(complex(0.0, -0.0), dtype=np.complex64)
    assert tensor_from_proto(tensor_to_proto(arr)).tobytes() == arr.tobytes()
