"""The Node.js client's own tests (clients/node/test, `node --test`) against real
`tensorweave server` and `tensorweave serve` processes; `npm ci` first when node_modules is
missing. Skips (with the reason) where node or npm is not installed."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).resolve().parents[2] / "clients" / "node"
pytestmark = [pytest.mark.slow, pytest.mark.multiprocess]


def _tools() -> tuple[str, str]:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed for the Node.js client's tests")
    return node, npm


def test_node_client_suite():
    node, npm = _tools()
    if not (NODE_DIR / "node_modules").is_dir():
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR,
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            pytest.skip(f"npm ci failed (no registry?): {done.stderr[-500:]}")
    env = dict(os.environ, TENSORWEAVE_PYTHON=sys.executable)
    done = subprocess.run([node, "--test", "test/"], cwd=NODE_DIR, capture_output=True,
                          text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "# fail 0" in done.stdout
