"""What the server does per request, shared by gRPC and REST: find the model and version,
check the signature, run it (through the batcher when batching is on), shape the result.

Every function raises `errors.OpError` with TF Serving's code for a bad request: NOT_FOUND for
an unknown model or version, INVALID_ARGUMENT for a bad signature, inputs or examples.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc
import numpy as np

from tensorweave.proto import example_pb2
from tensorweave.proto import serving_apis_pb2 as apis
from tensorweave.saved_model import signature_constants as sc
from tensorweave.serving.servable import invalid, not_found
from tensorweave.serving.versions import ModelVersions

SIGNATURE_DEF_MAP_URL = "type.googleapis.com/tensorflow.serving.SignatureDefMap"


@dataclass
class Spec:
    """The model spec of a request: name, version (None: newest), label, signature."""
    name: str
    version: int | None = None
    label: str | None = None
    signature_name: str = ""

    @classmethod
    def from_proto(cls, spec: apis.ModelSpec) -> Spec:
        choice = spec.WhichOneof("version_choice")
        return cls(spec.name, spec.version.value if choice == "version" else None,
                   spec.version_label if choice == "version_label" else None,
                   spec.signature_name)

    def to_proto(self, version: int, signature_name: str | None = None) -> apis.ModelSpec:
        out = apis.ModelSpec(name=self.name, signature_name=signature_name or "")
        out.version.value = version
        return out


class Models:
    """The models a server serves ({name: ModelVersions}) and the runner of signatures
    (`run(servable, signature, inputs, output_filter)`; the batcher when batching is on)."""

    def __init__(self, models: dict[str, ModelVersions], runner=None):
        self.models = models
        self.runner = runner or (lambda s, sig, inputs, keys: s.run(sig, inputs, keys))

    def versions(self, name: str) -> ModelVersions:
        if not name:
            raise invalid("Missing ModelSpec")
        found = self.models.get(name)
        if found is None:
            raise not_found(f"Servable not found for request: Latest({name})")
        return found

    # -- the four calls -----------------------------------------------------------------------
    def predict(self, spec: Spec, inputs: dict, output_filter=()):
        """(version, signature name, {output key: array})."""
        with self.versions(spec.name).serving(spec.version, spec.label) as servable:
            sig_name = spec.signature_name or sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY
            sig = servable.signature(sig_name)
            if sig.method_name != sc.PREDICT_METHOD_NAME and sig.method_name not in (
                    sc.CLASSIFY_METHOD_NAME, sc.REGRESS_METHOD_NAME):
                raise invalid(f"Expected prediction signature method_name to be one of "
                              f"{{{sc.PREDICT_METHOD_NAME}, {sc.CLASSIFY_METHOD_NAME}, "
                              f"{sc.REGRESS_METHOD_NAME}}}. Was: {sig.method_name}")
            servable.check_inputs(sig, inputs)
            return servable.version, sig_name, self.runner(servable, sig_name, inputs,
                                                           tuple(output_filter))

    def classify(self, spec: Spec, examples: list[bytes]):
        """(version, signature name, [[(label, score), ...] per example])."""
        version, name, out = self._run_examples(spec, examples, sc.CLASSIFY_METHOD_NAME)
        scores = out.get(sc.CLASSIFY_OUTPUT_SCORES)
        classes = out.get(sc.CLASSIFY_OUTPUT_CLASSES)
        n = len(examples)
        _check_rows("scores", scores, n)
        _check_rows("classes", classes, n)
        width = (scores if scores is not None else classes).reshape(n, -1).shape[1]
        rows = []
        for i in range(n):
            labels = classes.reshape(n, -1)[i] if classes is not None else [b""] * width
            values = scores.reshape(n, -1)[i] if scores is not None else [0.0] * width
            rows.append([(_text(c), float(s)) for c, s in zip(labels, values)])
        return version, name, rows

    def regress(self, spec: Spec, examples: list[bytes]):
        """(version, signature name, [value per example])."""
        version, name, out = self._run_examples(spec, examples, sc.REGRESS_METHOD_NAME)
        values = out[sc.REGRESS_OUTPUTS]
        _check_rows("outputs", values, len(examples))
        if values.size != len(examples):
            raise invalid(f"Expected output Tensor shape to be either [batch_size] or "
                          f"[batch_size, 1] but got {list(values.shape)}")
        return version, name, [float(v) for v in values.reshape(-1)]

    def metadata(self, spec: Spec, fields=("signature_def",)):
        """(version, {signature name: SignatureDef})."""
        for f in fields:
            if f != "signature_def":
                raise invalid(f"Metadata field {f} is not supported")
        with self.versions(spec.name).serving(spec.version, spec.label) as servable:
            return servable.version, servable.signatures

    def status(self, spec: Spec):
        return self.versions(spec.name).statuses(spec.version)

    def _run_examples(self, spec: Spec, examples: list[bytes], method: str):
        if not examples:
            raise invalid("Input is empty")
        with self.versions(spec.name).serving(spec.version, spec.label) as servable:
            sig_name = spec.signature_name or sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY
            sig = servable.signature(sig_name)
            what = "classification" if method == sc.CLASSIFY_METHOD_NAME else "regression"
            if sig.method_name != method:
                raise invalid(f"Expected {what} signature method_name to be {method}. Was: "
                              f"{sig.method_name}")
            if len(sig.inputs) != 1:
                raise invalid(f"Expected one input Tensor, found {len(sig.inputs)}")
            key = next(iter(sig.inputs))
            batch = np.array(examples, dtype=object)
            out = self.runner(servable, sig_name, {key: batch}, ())
            return servable.version, sig_name, out


def serialized_examples(inp: apis.Input) -> list[bytes]:
    """The Input's examples, serialized, the context merged into each."""
    kind = inp.WhichOneof("kind")
    if kind == "example_list":
        return [e.SerializeToString() for e in inp.example_list.examples]
    if kind == "example_list_with_context":
        ctx = inp.example_list_with_context.context
        out = []
        for e in inp.example_list_with_context.examples:
            merged = example_pb2.Example()
            merged.CopyFrom(ctx)
            merged.MergeFrom(e)
            out.append(merged.SerializeToString())
        return out
    raise invalid("Input is empty")


def _check_rows(what: str, value, n: int) -> None:
    if value is not None and (value.ndim == 0 or value.shape[0] != n):
        raise invalid(f"Expected {what} output Tensor with {n} rows (one per example), got "
                      f"shape {list(np.shape(value))}")


def _text(value) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


_CODE_NAMES = {c.value[0]: c.name for c in grpc.StatusCode}


def status_code_name(code: int) -> str:
    """TF's name of a canonical code ("OK", "NOT_FOUND", ...)."""
    return _CODE_NAMES.get(code, "UNKNOWN")
