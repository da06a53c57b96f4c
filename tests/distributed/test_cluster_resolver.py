"""tf.distribute.cluster_resolver against TensorFlow 2.21's own answers for the same
environments (resolver_cases.py; tests/data/cluster_resolver_expected.json, written by
make_resolver_expected.py with the TF peer)."""

import json
from pathlib import Path

import pytest

import tensorweave as tf
from tensorweave.distributed import cluster_resolver as crmod
from tests.distributed import resolver_cases as cases

cr = tf.distribute.cluster_resolver
EXPECTED = json.loads((Path(__file__).parents[1] / "data" /
                       "cluster_resolver_expected.json").read_text())


def _outcome(fn):
    try:
        return {"value": fn()}
    except Exception as e:  # noqa: BLE001
        return {"error": type(e).__name__}


@pytest.mark.parametrize("name", sorted(cases.TF_CONFIGS))
def test_tf_config_resolver_reads_tf_config_as_tensorflow(name, monkeypatch):
    monkeypatch.setenv("TF_CONFIG", cases.tf_config_env(name))
    r = cr.TFConfigClusterResolver()
    got = {"cluster": r.cluster_spec().as_dict(), "task_type": r.task_type,
           "task_id": r.task_id, "rpc_layer": r.rpc_layer, "master": _outcome(r.master),
           "master_ps0": _outcome(lambda: r.master("worker", 0, "grpc"))}
    assert got == EXPECTED["tf_config"][name]


def test_tf_config_overrides_and_accelerators(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", cases.tf_config_env("ps_worker"))
    r = cr.TFConfigClusterResolver(task_type="ps", task_id=0, rpc_layer="grpc")
    assert (r.task_type, r.task_id, r.master()) == ("ps", 0, "grpc://ps0:2222")
    assert r.num_accelerators() == {}


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_a_malformed_tf_config_is_a_value_error_naming_it(text, monkeypatch):
    monkeypatch.setenv("TF_CONFIG", text)
    with pytest.raises(ValueError, match="TF_CONFIG"):
        cr.TFConfigClusterResolver().cluster_spec()


@pytest.mark.parametrize("name", sorted(cases.SLURM))
def test_slurm_resolver_lays_out_tasks_as_tensorflow(name, monkeypatch):
    env, kwargs = cases.SLURM[name]
    for key in list(__import__("os").environ):
        if key.startswith("SLURM_"):
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    r = cr.SlurmClusterResolver(**kwargs)
    spec = r.cluster_spec().as_dict()
    got = {"cluster": spec, "task_type": r.task_type, "task_id": r.task_id,
           "master": r.master(), "gpus": r.num_accelerators(),
           "cuda_visible": __import__("os").environ.get("CUDA_VISIBLE_DEVICES")}
    assert got == EXPECTED["slurm"][name]


def test_slurm_job_variables_stand_in_outside_a_step_and_cpu_nodes_get_tasks(monkeypatch):
    for key, value in {"SLURM_PROCID": "1", "SLURM_NTASKS": "3",
                       "SLURM_JOB_NODELIST": "cpu[7-8]", "SLURM_TASKS_PER_NODE": "2,1"}.items():
        monkeypatch.setenv(key, value)
    for key in ("SLURM_STEP_NODELIST", "SLURM_STEP_TASKS_PER_NODE", "SLURM_STEP_NUM_TASKS"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    r = cr.SlurmClusterResolver(jobs={"ps": 1, "worker": 2}, port_base=2222)
    assert r.cluster_spec().as_dict() == {"ps": ["cpu7:2222"],
                                          "worker": ["cpu7:2223", "cpu8:2222"]}
    assert (r.task_type, r.task_id, r.master()) == ("worker", 0, "grpc://cpu7:2223")


def test_slurm_counts_that_do_not_fit_and_missing_variables(monkeypatch):
    for key in list(__import__("os").environ):
        if key.startswith("SLURM_"):
            monkeypatch.delenv(key)
    with pytest.raises(RuntimeError, match="SLURM_PROCID"):
        cr.SlurmClusterResolver()
    for key, value in {"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "2",
                       "SLURM_STEP_NODELIST": "a", "SLURM_STEP_TASKS_PER_NODE": "2"}.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(RuntimeError, match="Requested 3 tasks but only 2"):
        cr.SlurmClusterResolver(jobs={"worker": 3}, gpus_per_node=0)


@pytest.mark.parametrize("text,hosts", [
    ("n[1-2],m5,o[3-4,6,7-9]", ["n1", "n2", "m5", "o3", "o4", "o6", "o7", "o8", "o9"]),
    ("gpu[008-010]", ["gpu008", "gpu009", "gpu010"]),
    ("single", ["single"]),
])
def test_expand_hostlist(text, hosts):
    assert crmod.expand_hostlist(text) == hosts


def test_expand_tasks_per_node_and_bad_lists():
    assert crmod.expand_tasks_per_node("3(x2),2,1") == [3, 3, 2, 1]
    with pytest.raises(ValueError, match="hostlist"):
        crmod.expand_hostlist("n[1-x]")
    with pytest.raises(ValueError, match="tasks-per-node"):
        crmod.expand_tasks_per_node("2(x)")


def test_simple_resolver():
    spec = tf.train.ClusterSpec({"worker": ["w0:1", "w1:1"]})
    r = cr.SimpleClusterResolver(spec, task_type="worker", task_id=1,
                                 num_accelerators={"GPU": 8}, rpc_layer="grpc")
    assert r.master() == "grpc://"
    assert r.master("worker", 1) == "grpc://w1:1"
    assert (r.task_type, r.task_id, r.num_accelerators()) == ("worker", 1, {"GPU": 8})
    with pytest.raises(TypeError, match="ClusterSpec"):
        cr.SimpleClusterResolver({"worker": ["w0:1"]})
