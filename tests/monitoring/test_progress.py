"""The progress helper: step, loss and rate on a terminal; silent otherwise."""

from __future__ import annotations

import io

from tensorweave.monitoring.progress import Progress, progress


def test_disabled_when_stdout_is_not_a_terminal(capsys):
    with Progress(total=3) as bar:   # pytest captures stdout: not a TTY
        for _ in range(3):
            bar.update(loss=0.5)
    assert bar.disabled
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
    assert bar.step == 3 and bar.metrics == {"loss": 0.5}


def test_shows_step_loss_and_rate_when_enabled():
    buf = io.StringIO()
    with Progress(total=4, desc="train", disable=False, file=buf, mininterval=0) as bar:
        for i in range(4):
            bar.update(loss=1.0 / (i + 1), acc=0.5)
    text = buf.getvalue()
    assert "train" in text and "4/4" in text and "step/s" in text
    assert "loss=0.25" in text and "acc=0.5" in text
    assert bar.rate is not None and bar.rate > 0


def test_wraps_an_iterable():
    buf = io.StringIO()
    items = list(progress(range(5), desc="eval", disable=False, file=buf, mininterval=0))
    assert items == [0, 1, 2, 3, 4]
    assert "5/5" in buf.getvalue()


def test_write_prints_plainly_when_disabled(capsys):
    bar = Progress(disable=True)
    bar.write("hello")
    bar.close()
    assert capsys.readouterr().out == "hello\n"
