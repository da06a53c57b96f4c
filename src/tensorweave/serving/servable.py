"""One loaded version of a model: a SavedModel's `serve` graph in its own session, and the
checks TensorFlow Serving makes before running a signature.

`Servable.run(signature, inputs, output_filter)` is thread-safe; every user mistake raises an
`errors.OpError` with TF Serving's code (INVALID_ARGUMENT, NOT_FOUND) and a message in TF
Serving's words. `acquire`/`release` count requests in flight so that `unload` waits for them.
"""

from __future__ import annotations

import logging
import threading
import time

import numpy as np

from tensorweave import dtypes, errors
from tensorweave.client.session import Session
from tensorweave.framework.graph import Graph
from tensorweave.proto import convert
from tensorweave.saved_model import loader, signature_constants, tag_constants

_LOG = logging.getLogger("tensorweave")
DEFAULT_SIGNATURE = signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY


def invalid(message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, None, message)


def not_found(message: str) -> errors.OpError:
    return errors.NotFoundError(None, None, message)


class Servable:
    """Version `version` of a model, loaded from `export_dir` (raises what `loader.load` does).
    """

    def __init__(self, version: int, export_dir: str, tags=(tag_constants.SERVING,)):
        self.version, self.export_dir = version, export_dir
        self.graph = Graph()
        self.session = Session(graph=self.graph)
        try:
            self.meta = loader.load(self.session, list(tags), export_dir)
        except BaseException:
            self.session.close()
            raise
        self.signatures = dict(self.meta.signature_def)
        self.signatures.pop("__saved_model_init_op", None)
        self._inflight = 0
        self._cond = threading.Condition()

    # -- signatures ---------------------------------------------------------------------------
    def signature(self, name: str | None):
        """The SignatureDef `name` (default: serving_default).

        Raises:
          InvalidArgumentError: no such signature (TF Serving's message).
        """
        key = name or DEFAULT_SIGNATURE
        sig = self.signatures.get(key)
        if sig is None:
            raise invalid(f'Serving signature key "{key}" not found.')
        return sig

    def check_inputs(self, sig, given) -> None:
        """Raises InvalidArgumentError unless `given` holds exactly the signature's inputs."""
        want = set(sig.inputs)
        extra, missing = set(given) - want, want - set(given)
        if extra or missing:
            raise invalid(
                f"input size does not match signature: {len(given)}!={len(want)} "
                f"len({_set(given)}) != len({_set(want)}). Sent extra: {_set(extra)}. "
                f"Missing but required: {_set(missing)}.")

    # -- running ------------------------------------------------------------------------------
    def run(self, signature_name, inputs: dict, output_filter=()) -> dict:
        """{output key: numpy array} of one signature run on {input key: numpy array}.

        Raises:
          InvalidArgumentError: unknown signature, inputs that are missing, extra, of the wrong
            dtype or shape, or an output_filter key not in the signature; what the run raises.
        """
        sig = self.signature(signature_name)
        self.check_inputs(sig, inputs)
        feeds = {sig.inputs[k].name: _checked(k, sig.inputs[k], v) for k, v in inputs.items()}
        keys = list(output_filter) or sorted(sig.outputs)
        for k in keys:
            if k not in sig.outputs:
                raise invalid(f"output tensor alias not found in signature: {k} Outputs "
                              f"expected to be in the set {_set(sig.outputs)}.")
        names = [sig.outputs[k].name for k in keys]
        try:
            values = self.session.run(names, feeds)
        except ValueError as e:
            raise invalid(str(e)) from None
        return dict(zip(keys, values))

    # -- requests in flight -------------------------------------------------------------------
    def acquire(self) -> None:
        with self._cond:
            self._inflight += 1

    def release(self) -> None:
        with self._cond:
            self._inflight -= 1
            self._cond.notify_all()

    def unload(self, timeout: float = 60.0) -> None:
        """Closes the session once no request is in flight (or after `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._inflight and time.monotonic() < deadline:
                self._cond.wait(deadline - time.monotonic())
            if self._inflight:
                _LOG.warning("version %d unloaded with %d requests in flight", self.version,
                             self._inflight)
        self.session.close()


def _set(keys) -> str:
    return "{" + ", ".join(sorted(keys)) + "}"


def _checked(key: str, info, value: np.ndarray) -> np.ndarray:
    """`value` checked against the TensorInfo's dtype and static shape."""
    want = dtypes.as_dtype(info.dtype)
    value = np.asarray(value)
    got = _dtype_of(value)
    if got is not None and got != want.base_dtype:
        raise invalid(f"Expects arg[0] to be {want.name} but {got.name} is provided "
                      f"(input {key!r})")
    shape = convert.shape_from_proto(info.tensor_shape)
    if not shape.is_compatible_with(value.shape):
        raise invalid(f"input {key!r} has shape {list(value.shape)}, but the signature expects "
                      f"{shape}")
    return value


def _dtype_of(value: np.ndarray):
    if value.dtype == object or value.dtype.kind in "SU":
        return dtypes.string
    try:
        return dtypes.as_dtype(value.dtype)
    except (TypeError, ValueError):
        return None
