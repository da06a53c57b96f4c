"""The allocator setting: applied once, skipped when the user tuned malloc or opted out."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = ("import tensorweave as tf, tensorweave.runtime.allocator as a;"
         "tf.Session().close(); print(a._state.get('applied'))")


def _run(env_extra: dict) -> str:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.pop("TENSORWEAVE_KEEP_FREED_MEMORY", None)
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                         env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_applied_by_the_first_session_unless_opted_out_or_tuned():
    assert _run({}) == "True"
    assert _run({"TENSORWEAVE_KEEP_FREED_MEMORY": "0"}) == "False"
    assert _run({"MALLOC_TRIM_THRESHOLD_": "1000000"}) == "False"
