"""README.md's "Not yet" list stays current: every `tf.` name it lists is still missing.

When one of them lands, this test fails naming it: take it off the list (and say in the
"What works" table what now works).
"""

from __future__ import annotations

import re
from pathlib import Path

import tensorweave as tf

README = Path(__file__).resolve().parents[1] / "README.md"


def _not_yet_names() -> list[str]:
    text = README.read_text()
    start = text.index("**Not yet**")
    block = text[start:text.index("\n\n", start)]
    return re.findall(r"`(tf\.[A-Za-z_][A-Za-z0-9_.]*)`", block)


def _exists(dotted: str) -> bool:
    obj = tf
    for part in dotted.split(".")[1:]:
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def test_the_not_yet_list_names_only_missing_things():
    names = _not_yet_names()
    assert len(names) >= 5, names  # the parse found the list
    landed = [n for n in names if _exists(n)]
    assert not landed, (f"README.md lists {landed} under 'Not yet' but they exist now: take "
                        "them off the list")


def _python_block_after(marker: str) -> str:
    text = README.read_text()
    start = text.index("```python\n", text.index(marker)) + len("```python\n")
    return text[start:text.index("```", start)]


def test_the_resource_watcher_snippet_runs(tmp_path):
    """The README's way to turn the watcher on works as written (with a real session)."""
    code = _python_block_after("**Resource watcher:**")
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        train_op = tf.assign_add(v, 1.0)
        with tf.Session() as sess:
            sess.run(v.initializer)
            env = {"tf": tf, "sess": sess, "logdir": str(tmp_path), "train_op": train_op,
                   "steps": 3}
            exec(compile(code, "README.md", "exec"), env)
            assert sess.run(v) == 4.0
            watcher = env["watcher"]
            assert not watcher.running
            assert sum(t.count for t in watcher.step_times().values()) == 3  # the 3 runs
    assert list(tmp_path.glob("events.out.tfevents.*"))
