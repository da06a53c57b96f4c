"""Monitored sessions against TensorFlow: every case of monitored_cases.py, run here, gives
what TF 1.x graph mode gave (tests/data/monitored_expected.json, from
make_monitored_expected.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorweave as tf
from tests.training import monitored_cases

EXPECTED = json.loads((Path(__file__).resolve().parent.parent / "data" /
                       "monitored_expected.json").read_text())


def run_case(name, tmp_path):
    try:
        return json.loads(json.dumps(monitored_cases.CASES[name](tf, str(tmp_path))))
    finally:
        tf.summary.FileWriterCache.clear()
        tf.reset_default_graph()


@pytest.mark.parametrize("name", ["hook_calls", "hook_error", "nan", "step_fn",
                                  "final_and_feed", "out_of_range", "recover", "scaffold",
                                  "step_counter", "supervisor"])
def test_case_matches_tensorflow(name, tmp_path):
    assert run_case(name, tmp_path) == EXPECTED[name]


def test_resume_restores_and_continues(tmp_path):
    got, want = run_case("resume", tmp_path), EXPECTED["resume"]
    assert got["checkpoints"] == want["checkpoints"]
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-4)


def test_training_loop_files_and_events(tmp_path):
    got, want = run_case("training_loop", tmp_path), EXPECTED["training_loop"]
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-4)
    assert got["checkpoints"] == want["checkpoints"]
    assert got["files"] == want["files"]
    plain = lambda evs: [e for e in evs if e[1] != "summary"]  # noqa: E731
    assert plain(got["events"]) == plain(want["events"])
    # NOTE: TF reads the global step racily beside the train op, so its summary steps wander
    # (1, 5, 9, ... or 1, 6, 10, ...); ours are the designed ones: every 5 steps from step 1,
    # each with the loss of the step before.
    summaries = [e for e in got["events"] if e[1] == "summary"]
    assert [e[0] for e in summaries] == [1, 6, 11, 16, 21, 26]
    assert {e[2][0][0] for e in summaries} == {e[2][0][0] for e in want["events"]
                                                if e[1] == "summary"}
    for step, _, ((_, value),) in summaries:
        assert value == pytest.approx(round(got["losses"][step - 1], 4), abs=1e-4)
