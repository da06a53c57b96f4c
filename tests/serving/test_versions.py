"""Version directories: the newest complete version served, new versions picked up and old
ones unloaded without failing requests in flight, half-written versions skipped."""

import os
import shutil
import threading

import numpy as np
import pytest

from tensorweave import errors
from tensorweave.serving.servable import Servable
from tensorweave.serving.server import ModelServer
from tensorweave.serving.versions import ModelVersions, is_complete
from tests.serving.conftest import TF_MODEL, Rest, export_scaled

ONES = np.ones((1, 3), np.float32)


def _y(versions, version=None):
    with versions.serving(version) as s:
        return s.version, float(s.run(None, {"x": ONES})["y"][0, 0])


def test_newest_version_served_and_swapped(tmp_path):
    export_scaled(tmp_path / "1", 1.0)
    export_scaled(tmp_path / "3", 3.0)
    versions = ModelVersions("m", str(tmp_path))
    versions.poll()
    assert _y(versions) == (3, 9.0)
    export_scaled(tmp_path / "4", 4.0)
    versions.poll()
    assert _y(versions) == (4, 12.0)
    assert [(s.version, s.state) for s in versions.statuses()] == [(3, 50), (4, 30)]
    with pytest.raises(errors.NotFoundError, match=r"Specific\(m, 3\)"):
        _y(versions, 3)
    shutil.rmtree(tmp_path / "4")   # the newest goes away: the next one is served
    versions.poll()
    assert _y(versions) == (3, 9.0)
    versions.stop()


def test_half_written_version_is_skipped_until_complete(tmp_path):
    export_scaled(tmp_path / "1", 1.0)
    export_scaled(tmp_path / "staging", 2.0)
    half = tmp_path / "2"
    half.mkdir()
    shutil.copy(tmp_path / "staging" / "saved_model.pb", half)   # variables not there yet
    assert not is_complete(str(half))
    versions = ModelVersions("m", str(tmp_path))
    versions.poll()
    assert _y(versions) == (1, 3.0)
    (half / "variables").mkdir()
    shutil.copy(tmp_path / "staging" / "variables" / "variables.index", half / "variables")
    versions.poll()
    assert _y(versions) == (1, 3.0)       # the data file is still missing
    for f in os.listdir(tmp_path / "staging" / "variables"):
        shutil.copy(tmp_path / "staging" / "variables" / f, half / "variables")
    versions.poll()
    assert _y(versions) == (2, 6.0)
    versions.stop()


def test_a_version_that_fails_to_load_is_reported_and_the_old_one_kept(tmp_path):
    export_scaled(tmp_path / "1", 1.0)
    export_scaled(tmp_path / "2", 2.0)
    with open(tmp_path / "2" / "variables" / "variables.data-00000-of-00001", "r+b") as f:
        f.write(b"\xff" * 8)                   # corrupt: the checksum fails at restore
    versions = ModelVersions("m", str(tmp_path))
    versions.poll()
    assert _y(versions) == (1, 3.0)
    failed = versions.statuses(2)[0]
    assert failed.state == 50 and failed.error_code != errors.OK and failed.error_message
    versions.stop()


def test_unload_waits_for_requests_in_flight(tmp_path):
    export_scaled(tmp_path / "1", 1.0)
    versions = ModelVersions("m", str(tmp_path))
    versions.poll()
    entered, release, result = threading.Event(), threading.Event(), []

    def slow_request():
        with versions.serving() as s:
            entered.set()
            release.wait(30)
            result.append(s.run(None, {"x": ONES})["y"][0, 0])

    t = threading.Thread(target=slow_request)
    t.start()
    assert entered.wait(30)
    export_scaled(tmp_path / "2", 2.0)
    poller = threading.Thread(target=versions.poll)
    poller.start()
    poller.join(2)
    assert poller.is_alive()                 # the swap waits for the old version's request
    release.set()
    t.join(30)
    poller.join(30)
    assert result == [3.0] and _y(versions) == (2, 6.0)
    versions.stop()


def test_the_server_picks_up_a_new_version_while_serving(tmp_path):
    shutil.copytree(TF_MODEL, tmp_path / "1")
    server = ModelServer("m", str(tmp_path), port=None, rest_api_port=0, poll_seconds=0.2)
    server.start()
    try:
        rest = Rest(server.rest_api_port)
        assert rest.call("/v1/models/m")[1]["model_version_status"][0]["version"] == "1"
        export_scaled(tmp_path / "tmp", 5.0)
        os.rename(tmp_path / "tmp", tmp_path / "2")
        for _ in range(200):
            status, body = rest.call("/v1/models/m:predict", {"instances": ONES.tolist()})
            assert status == 200
            if body == {"predictions": [[15.0, 15.0]]}:
                break
            threading.Event().wait(0.05)
        assert body == {"predictions": [[15.0, 15.0]]}
    finally:
        server.stop()


def test_servable_refuses_a_directory_without_the_serve_tag(tmp_path):
    with pytest.raises(RuntimeError, match="could not be found"):
        Servable(1, str(TF_MODEL), tags=("train",))


def test_no_request_fails_while_versions_swap(tmp_path):
    export_scaled(tmp_path / "1", 1.0)
    server = ModelServer("m", str(tmp_path), port=None, rest_api_port=0, poll_seconds=0.05)
    server.start()
    rest, stop, seen, failures = Rest(server.rest_api_port), threading.Event(), set(), []

    def hammer():
        while not stop.is_set():
            status, body = rest.call("/v1/models/m:predict", {"instances": ONES.tolist()})
            if status != 200:
                failures.append(body)
            else:
                seen.add(body["predictions"][0][0])

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    try:
        for t in threads:
            t.start()
        for v in (2, 3):
            export_scaled(tmp_path / "staging", float(v))
            os.rename(tmp_path / "staging", tmp_path / str(v))
            for _ in range(400):
                if 3.0 * v in seen:
                    break
                threading.Event().wait(0.025)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
        server.stop()
    assert not failures and {3.0, 6.0, 9.0} <= seen


def test_a_model_with_no_version_yet_is_not_found_until_one_appears(tmp_path):
    versions = ModelVersions("m", str(tmp_path))
    versions.poll()
    with pytest.raises(errors.NotFoundError, match="Could not find any versions of model m"):
        versions.statuses()
    with pytest.raises(errors.NotFoundError, match=r"Latest\(m\)"):
        _y(versions)
    export_scaled(tmp_path / "7", 1.0)
    versions.poll()
    assert _y(versions) == (7, 3.0)
    versions.stop()
