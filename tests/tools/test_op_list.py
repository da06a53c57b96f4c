"""`tensorweave ops`: the OpList in TF's op_def.proto form, as pbtxt and JSON."""

import json

from google.protobuf import text_format

from tensorweave.cli.main import main
from tensorweave.ops.registry import OPS
from tensorweave.proto import op_def_pb2


def test_ops_json_lists_every_op_with_tf_fields(tmp_path):
    out = tmp_path / "ops.json"
    assert main(["ops", "--format", "json", "--output", str(out)]) == 0
    ops = {o["name"]: o for o in json.loads(out.read_text())["op"]}
    assert set(ops) == set(OPS.names())
    matmul = ops["MatMul"]
    assert [a["name"] for a in matmul["input_arg"]] == ["a", "b"]
    assert matmul["input_arg"][0]["type_attr"] == "T"
    attrs = {a["name"]: a for a in matmul["attr"]}
    assert attrs["transpose_a"]["default_value"] == {"b": False}
    assert "DT_FLOAT" in attrs["T"]["allowed_values"]["list"]["type"]
    assert ops["VariableV2"]["is_stateful"] is True


def test_ops_pbtxt_parses_as_an_op_list(capsys):
    assert main(["ops", "--no-internal"]) == 0
    parsed = text_format.Parse(capsys.readouterr().out, op_def_pb2.OpList())
    names = [o.name for o in parsed.op]
    assert names == sorted(names) and "Conv2D" in names
    assert not any(n.startswith("_") for n in names)
