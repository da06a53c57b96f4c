"""Server-side batching: concurrent requests run in fewer steps, each gets its own rows."""

import threading

import numpy as np
import pytest

from tensorweave import errors
from tensorweave.serving.batching import Batcher, BatchingOptions
from tensorweave.serving.servable import Servable
from tests.serving.conftest import export_scaled


@pytest.fixture
def servable(tmp_path):
    export_scaled(tmp_path / "1", 2.0)
    s = Servable(1, str(tmp_path / "1"))
    yield s
    s.unload()


def test_concurrent_requests_share_batches(servable):
    batcher = Batcher(BatchingOptions(max_batch_size=8, batch_timeout_micros=200_000))
    results, threads = {}, []

    def request(i):
        x = np.full((1 + i % 2, 3), float(i), np.float32)
        results[i] = batcher.run(servable, None, {"x": x})["y"]

    for i in range(8):
        threads.append(threading.Thread(target=request, args=(i,)))
        threads[-1].start()
    for t in threads:
        t.join(60)
    batcher.stop()
    for i in range(8):
        np.testing.assert_allclose(results[i], np.full((1 + i % 2, 2), 6.0 * i))
    assert batcher.batches_run < 8


def test_a_full_queue_is_refused(servable):
    batcher = Batcher(BatchingOptions(max_batch_size=1, batch_timeout_micros=10_000_000,
                                      max_enqueued_batches=1, num_batch_threads=1))
    gate = threading.Event()
    original = servable.run
    servable.run = lambda *a: (gate.wait(30), original(*a))[1]
    threads = [threading.Thread(target=batcher.run, args=(servable, None,
                                                          {"x": np.ones((1, 3), np.float32)}))
               for _ in range(1)]
    for t in threads:
        t.start()
    threading.Event().wait(0.5)
    with pytest.raises(errors.UnavailableError, match="queue .* is full"):
        batcher.run(servable, None, {"x": np.ones((1, 3), np.float32)})
    gate.set()
    for t in threads:
        t.join(30)
    batcher.stop()
