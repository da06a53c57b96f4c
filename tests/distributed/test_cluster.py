"""ClusterSpec: dicts, sparse tasks, JSON, ClusterDef."""

import pytest

from tensorweave.distributed.cluster import ClusterSpec


def test_dense_and_sparse_jobs():
    c = ClusterSpec({"ps": ["127.0.0.1:1", "127.0.0.1:2"], "worker": {1: "127.0.0.1:9"}})
    assert c.jobs == ["ps", "worker"]
    assert c.num_tasks("ps") == 2 and c.task_indices("worker") == [1]
    assert c.task_address("ps", 1) == "127.0.0.1:2"
    assert c.job_tasks("worker") == [None, "127.0.0.1:9"]
    assert c.as_dict() == {"ps": ["127.0.0.1:1", "127.0.0.1:2"], "worker": {1: "127.0.0.1:9"}}


def test_json_and_cluster_def_round_trip():
    c = ClusterSpec('{"worker": ["127.0.0.1:5", "127.0.0.1:6"]}')
    assert ClusterSpec(c.as_cluster_def()) == c == ClusterSpec(c)


def test_bad_specs_are_named():
    with pytest.raises(ValueError, match="host:port"):
        ClusterSpec({"ps": ["nope"]})
    with pytest.raises(ValueError, match="No such job"):
        ClusterSpec({"ps": ["a:1"]}).num_tasks("worker")
    with pytest.raises(ValueError, match="No task with index 3"):
        ClusterSpec({"ps": ["a:1"]}).task_address("ps", 3)
