"""examples/k8s: the TFJob and the StatefulSet manifests describe the demo's cluster (1 ps,
2 workers on port 2222) and run examples/k8s/run_task.py; their core objects (Services,
StatefulSets, the TFJob's pod templates) are checked against Kubernetes' own schemas with
kubernetes-validate where it is installed. Not run on a live cluster here."""

import json
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

K8S = Path(__file__).resolve().parents[2] / "examples" / "k8s"
sys.path.insert(0, str(K8S))
import run_task  # noqa: E402

K8S_VERSION = "1.32"


def _docs(name: str) -> list[dict]:
    return [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]


def _validate(obj: dict) -> None:
    kv = pytest.importorskip("kubernetes_validate")
    kv.validate(obj, K8S_VERSION, strict=True)


def _check_container(container: dict) -> None:
    command = container["command"]
    assert command[:2] == ["python", "examples/k8s/run_task.py"]
    assert (K8S.parents[1] / command[1]).exists()
    assert [p["containerPort"] for p in container["ports"]] == [2222]


def test_tfjob_is_the_demo_cluster():
    (job,) = _docs("tfjob.yaml")
    assert (job["apiVersion"], job["kind"]) == ("kubeflow.org/v1", "TFJob")
    specs = job["spec"]["tfReplicaSpecs"]
    assert {k: v["replicas"] for k, v in specs.items()} == {"PS": 1, "Worker": 2}
    for replica in specs.values():
        (container,) = replica["template"]["spec"]["containers"]
        assert container["name"] == "tensorflow"   # the container the operator configures
        _check_container(container)


def test_tfjob_pod_templates_are_valid_kubernetes():
    (job,) = _docs("tfjob.yaml")
    for name, replica in job["spec"]["tfReplicaSpecs"].items():
        _validate({"apiVersion": "v1", "kind": "PodTemplate",
                   "metadata": {"name": name.lower()}, "template": replica["template"]})


def test_statefulsets_and_services_are_valid_and_agree():
    docs = _docs("statefulset.yaml")
    for d in docs:
        _validate(d)
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    sets = {d["metadata"]["name"]: d for d in docs if d["kind"] == "StatefulSet"}
    assert set(services) == set(sets) == {"tw-ps", "tw-worker"}
    for name, s in sets.items():
        assert services[name]["spec"]["clusterIP"] == "None"
        assert s["spec"]["serviceName"] == name
        (container,) = s["spec"]["template"]["spec"]["containers"]
        _check_container(container)
        env = {e["name"]: e["value"] for e in container["env"]}
        cluster = json.loads(env["TW_CLUSTER"])
        job = env["TW_JOB"]
        # every pod of the set is one task of the job, named as the headless service names it
        assert cluster[job] == [f"{name}-{i}.{name}:2222" for i in range(s["spec"]["replicas"])]


def test_run_task_reads_tf_config_or_the_statefulset_pod_name():
    config = {"cluster": {"ps": ["p:1"]}, "task": {"type": "ps", "index": 0}}
    assert run_task.resolve_task({"TF_CONFIG": json.dumps(config)}) == config
    got = run_task.resolve_task({"TW_CLUSTER": '{"worker": ["a:1", "b:1"]}', "TW_JOB": "worker",
                                 "HOSTNAME": "tw-worker-1"})
    assert got == {"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 1}}
