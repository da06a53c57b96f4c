"""`tf.app.run` and `tf.flags` as TF1 has them (absl underneath): a flags script run as a
program, compared with what TensorFlow 2.21's compat.v1 does for the same command lines."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import tensorweave as tf

SCRIPT = textwrap.dedent('''
    import sys, tensorweave
    sys.modules["tensorflow"] = tensorweave
    import tensorflow as tf
    flags = tf.app.flags
    flags.DEFINE_integer("steps", 3, "number of steps")
    flags.DEFINE_string("name", "x", "a name")
    flags.DEFINE_boolean("fast", False, "go fast")
    flags.DEFINE_float("lr", 0.5, "learning rate")
    flags.DEFINE_enum("mode", "train", ["train", "eval"], "mode")
    flags.DEFINE_list("layers", ["a", "b"], "layers")
    flags.DEFINE_multi_string("tag", [], "tags")
    FLAGS = flags.FLAGS

    def main(argv):
        print("argv", argv[1:], FLAGS.steps, FLAGS.name, FLAGS.fast, FLAGS.lr, FLAGS.mode,
              FLAGS.layers, FLAGS.tag)
        return 3

    if __name__ == "__main__":
        tf.app.run()
''')


def run(tmp_path, *args):
    path = tmp_path / "prog.py"
    path.write_text(SCRIPT)
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
def test_app_run_parses_known_flags_and_passes_the_rest(tmp_path):
    # NOTE: as TF's app.run: unknown flags are left for main, main's return is the exit code.
    r = run(tmp_path, "--steps=5", "--fast", "--lr", "0.1", "--mode=eval", "--layers=c,d",
            "--tag=u", "--tag=v", "--unknown=2", "extra")
    assert r.returncode == 3, r.stderr
    assert r.stdout.strip() == ("argv ['--unknown=2', 'extra'] 5 x True 0.1 eval ['c', 'd'] "
                                "['u', 'v']")


@pytest.mark.slow
@pytest.mark.parametrize("args, message", [
    (["--steps=abc"], "flag --steps=abc: invalid literal for int() with base 10: 'abc'"),
    (["--mode=test"], "flag --mode=test: value should be one of <train|eval>"),
])
def test_bad_values_fail_with_absl_messages(tmp_path, args, message):
    r = run(tmp_path, *args)
    assert r.returncode == 1
    assert "IllegalFlagValueError: " + message in r.stderr


@pytest.mark.slow
def test_help_lists_the_programs_flags(tmp_path):
    r = run(tmp_path, "--help")
    assert r.returncode == 1  # absl's (and so TF's) exit code after --help
    assert "prog.py:\n  --[no]fast: go fast\n" in r.stdout
    assert "  --steps: number of steps\n    (default: '3')\n    (an integer)" in r.stdout


def test_flags_call_and_explicit_unknown_flag():
    values = tf.flags.FlagValues()
    tf.flags.DEFINE_integer("k", 4, "k", flag_values=values)
    assert values(["prog", "--k=9", "rest"]) == ["prog", "rest"]
    assert values.k == 9
    with pytest.raises(tf.flags.UnrecognizedFlagError, match="Unknown command line flag 'q'"):
        values(["prog", "--q=1"])


def test_old_keyword_names_are_accepted():
    values = tf.flags.FlagValues()
    tf.flags.DEFINE_string(flag_name="old", default_value="d", docstring="doc",
                           flag_values=values)
    values(["prog"])
    assert values.old == "d"


def test_unparsed_flags_parse_sys_argv_on_first_read(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["prog", "--h5_lazy=7"])
    tf.flags.DEFINE_integer("h5_lazy", 1, "lazy")
    try:
        was_parsed = tf.flags.FLAGS.is_parsed()
        if not was_parsed:
            assert tf.flags.FLAGS.h5_lazy == 7
        assert tf.app.flags is tf.flags and tf.compat.v1.flags is tf.flags
    finally:
        delattr(tf.flags.FLAGS, "h5_lazy")
        if not was_parsed:
            tf.flags.FLAGS.unparse_flags()
