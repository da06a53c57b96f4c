"""Ctrl-C (SIGINT) in a MonitoredTrainingSession loop: the step in flight is cut short, hooks'
end() run (the CheckpointSaverHook writes the final step), the session closes, and the
checkpoint directory holds only complete checkpoints."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import tensorweave as tf

_LOOP = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job ignores SIGINT
import numpy as np
import tensorweave as tf
x = tf.constant(np.random.RandomState(0).randn(64, 32).astype(np.float32))
w = tf.get_variable("w", [32, 32])
loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
step = tf.train.get_or_create_global_step()
train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)

class Ended(tf.train.SessionRunHook):
    def end(self, session):
        print("end at", session.run(step), flush=True)

with tf.train.MonitoredTrainingSession(checkpoint_dir=sys.argv[1], hooks=[Ended()]) as sess:
    print("started", flush=True)
    while not sess.should_stop():
        sess.run(train)
"""


@pytest.mark.slow
@pytest.mark.multiprocess
def test_sigint_ends_the_loop_cleanly(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", _LOOP, str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGINT and "KeyboardInterrupt" in err, err[-2000:]
    (line,) = [x for x in out.splitlines() if x.startswith("end at")]
    last = int(line.split()[-1])
    assert last > 0
    latest = tf.train.latest_checkpoint(str(tmp_path))
    assert latest.endswith(f"model.ckpt-{last}")
    assert not [f for f in os.listdir(tmp_path) if ".tmp" in f or f.endswith("~")]
    reader = tf.train.load_checkpoint(latest)
    assert reader.get_tensor("global_step") == last
