"""The `tensorweave inspect` command on checkpoints (TensorFlow's fixture and broken files)."""

import os
import shutil
import subprocess
import sys

from tensorweave.cli.main import main

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "ckpt")
FIXTURE = os.path.join(DATA, "model.ckpt-1234")


def test_lists_variables_shapes_and_dtypes(capsys):
    assert main(["inspect", FIXTURE]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:7] == [
        "counts (DT_INT32) [3,4]", "dense/bias (DT_FLOAT) [32]",
        "dense/kernel (DT_FLOAT) [64,32]", "flags (DT_BOOL) [3]", "global_step (DT_INT64) []",
        "names (DT_STRING) [3]", "scale (DT_DOUBLE) []"]
    assert out[7].endswith("7 tensors, 8,387 bytes of fixed-size data")


def test_directory_and_file_paths_are_accepted(capsys):
    for path in (DATA, FIXTURE + ".index", FIXTURE + ".data-00000-of-00001"):
        assert main(["inspect", path]) == 0
        assert "dense/kernel (DT_FLOAT) [64,32]" in capsys.readouterr().out


def test_prints_tensors(capsys):
    assert main(["inspect", FIXTURE, "--tensor", "names", "--tensor", "global_step"]) == 0
    out = capsys.readouterr().out
    assert out == "tensor_name:  names\n[b'alpha' b'beta' b'gamma']\n" \
                  "tensor_name:  global_step\n1234\n"


def test_full_and_all(capsys):
    assert main(["inspect", FIXTURE, "--all", "--full"]) == 0
    out = capsys.readouterr().out
    assert out.count("tensor_name:") == 7 and "..." not in out


def test_unknown_tensor_suggests_names(capsys):
    assert main(["inspect", FIXTURE, "--tensor", "dense/kernal"]) == 2
    err = capsys.readouterr().err
    assert "'dense/kernal' is not in" in err and "closest: dense/kernel" in err
    assert err.count("\n") == 1


def test_broken_checkpoints_exit_1(tmp_path, capsys):
    assert main(["inspect", str(tmp_path / "missing")]) == 2   # NOTE: a usage error
    assert "no checkpoint at" in capsys.readouterr().err
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copy(FIXTURE + suffix, tmp_path / ("m" + suffix))
    raw = (tmp_path / "m.data-00000-of-00001").read_bytes()
    (tmp_path / "m.data-00000-of-00001").write_bytes(raw[:100])
    assert main(["inspect", str(tmp_path / "m")]) == 0  # NOTE: listing reads only the index
    assert main(["inspect", str(tmp_path / "m"), "--tensor", "dense/kernel"]) == 1
    assert "truncated" in capsys.readouterr().err
    (tmp_path / "m.index").write_bytes(b"garbage")
    assert main(["inspect", str(tmp_path / "m")]) == 1
    assert "m.index" in capsys.readouterr().err


def test_console_entry_point():
    code = ("import sys, tensorweave.cli.inspect; from tensorweave.cli.main import main; "
            "sys.exit(main(sys.argv[1:]))")
    out = subprocess.run([sys.executable, "-c", code, "inspect", FIXTURE, "--tensor", "scale"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("tensor_name:  scale\n")
