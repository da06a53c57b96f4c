"""server_main.StopRequest: what the SIGINT/SIGTERM handlers of every server process set."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# A SIGTERM delivered while the SIGINT handler is inside `set` (a terminal's Ctrl-C reaches every
# task of a cluster, then the launcher's SIGTERM follows): the trace sends it at each line of
# `set`: while threading.Event's holds its lock (from inside notify_all), and as StopRequest's
# returns, so the second handler runs in the middle of the first one's set.
_NESTED = textwrap.dedent("""
    import os, signal, sys
    from tensorweave.distributed import server_main
    Request = {request}
    asked = Request()
    signal.signal(signal.SIGTERM, lambda *_: asked.set())
    def trace(frame, event, arg):
        name = frame.f_code.co_name
        if (name, event) in (("notify_all", "line"), ("set", "return")):
            sys.settrace(None)
            os.kill(os.getpid(), signal.SIGTERM)
        return trace
    def first(*_):
        sys.settrace(trace)
        asked.set()
    signal.signal(signal.SIGINT, first)
    os.kill(os.getpid(), signal.SIGINT)
    assert asked.wait(5.0)
    print("stopped")
""")


def _run_nested(request: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _NESTED.format(request=request)],
                          capture_output=True, text=True, timeout=60)


def test_a_signal_inside_another_handlers_set_still_stops():
    out = _run_nested("server_main.StopRequest")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "stopped"


def test_wait_times_out_unset_and_returns_at_once_when_set():
    from tensorweave.distributed.server_main import StopRequest

    asked = StopRequest()
    assert not asked.wait(0.01) and not asked.is_set()
    asked.set(15, None)        # as a signal handler is called
    assert asked.wait(100.0) and asked.is_set()
