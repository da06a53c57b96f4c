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
