"""Session and build options: the one parser of a session's config.

`SessionOptions.from_config(config)` reads a `ConfigProto`, a plain dict of its fields (the
form tests, the CLI and the gRPC wire use) or None, once, when a session is created; the rest
of the runtime reads the frozen dataclass. `BuildOptions` is the part of it that shapes a
graph (devices, placement, passes), what `GraphExecutionState.build` takes.

Dict keys are ConfigProto's field names (`device_count`, `allow_soft_placement`,
`operation_timeout_in_ms`, ...) plus our `disabled_passes` (names), `passes` (an explicit
pass list, in order) and `global_jit_level` (`graph_options.optimizer_options`' field, as an
int: 0 DEFAULT, -1 OFF, 1 ON_1, 2 ON_2).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from tensorweave import errors

MAX_CPU_DEVICES = 256

# TF's RewriterConfig toggles -> our pass names
_TOGGLES = {
    "constant_folding": "constant_folding",
    "arithmetic_optimization": "arithmetic",
    "dependency_optimization": "dependency",
    "remapping": "remapper",
    "common_subgraph_elimination": "cse",
}
_OFF = 2  # RewriterConfig.Toggle.OFF
_L0 = -1  # OptimizerOptions.Level.L0


@dataclass(frozen=True)
class SessionOptions:
    """A session's settings, parsed once from its config."""

    cpus: int = 1
    inter_op_threads: int = 0
    intra_op_threads: int = 0
    inter_op_pools: tuple[tuple[int, str], ...] = ()  # session_inter_op_thread_pool
    per_session_threads: bool = False          # use_per_session_threads (runtime/threads.py)
    soft_placement: bool = False
    log_placement: bool = False
    timeout_ms: int = 0                       # operation_timeout_in_ms (0: none)
    disabled_passes: frozenset[str] = frozenset()
    passes: tuple[str, ...] | None = None     # run exactly these, in this order
    device_filters: tuple[str, ...] = ()
    global_jit_level: int = 0                 # OptimizerOptions.GlobalJitLevel

    @classmethod
    def from_config(cls, config) -> SessionOptions:
        """Parses a ConfigProto, a dict of its fields, None, or a SessionOptions (as is).

        Raises: InvalidArgumentError for a CPU count outside 1..MAX_CPU_DEVICES.
        """
        if isinstance(config, SessionOptions):
            return config
        if config is None:
            return cls()
        if isinstance(config, dict):
            return cls._from_dict(config)
        return cls._from_proto(config)

    @classmethod
    def _from_dict(cls, d: dict) -> SessionOptions:
        passes = d.get("passes")
        return cls(
            cpus=_cpus((d.get("device_count") or {}).get("CPU", 1)),
            inter_op_threads=int(d.get("inter_op_parallelism_threads") or 0),
            intra_op_threads=int(d.get("intra_op_parallelism_threads") or 0),
            inter_op_pools=tuple((int(p.get("num_threads") or 0), str(p.get("global_name") or ""))
                                 for p in d.get("session_inter_op_thread_pool") or ()),
            per_session_threads=bool(d.get("use_per_session_threads")),
            soft_placement=bool(d.get("allow_soft_placement")),
            log_placement=bool(d.get("log_device_placement")),
            timeout_ms=int(d.get("operation_timeout_in_ms") or 0),
            disabled_passes=frozenset(d.get("disabled_passes") or ()),
            passes=tuple(passes) if passes else None,
            device_filters=tuple(d.get("device_filters") or ()),
            global_jit_level=int(d.get("global_jit_level") or 0))

    @classmethod
    def _from_proto(cls, config) -> SessionOptions:
        disabled, only = pass_toggles(config)
        return cls(
            cpus=_cpus(dict(config.device_count).get("CPU", 1)),
            inter_op_threads=config.inter_op_parallelism_threads,
            intra_op_threads=config.intra_op_parallelism_threads,
            inter_op_pools=tuple((p.num_threads, p.global_name)
                                 for p in config.session_inter_op_thread_pool),
            per_session_threads=config.use_per_session_threads,
            soft_placement=config.allow_soft_placement,
            log_placement=config.log_device_placement,
            timeout_ms=int(config.operation_timeout_in_ms),
            disabled_passes=frozenset(disabled),
            passes=tuple(only) if only else None,
            device_filters=tuple(config.device_filters),
            global_jit_level=int(config.graph_options.optimizer_options.global_jit_level))

    def to_dict(self) -> dict:
        """The dict form (ConfigProto field names), which `from_config` reads back."""
        out = {
            "device_count": {"CPU": self.cpus},
            "inter_op_parallelism_threads": self.inter_op_threads,
            "intra_op_parallelism_threads": self.intra_op_threads,
            "session_inter_op_thread_pool": [{"num_threads": n, "global_name": name}
                                             for n, name in self.inter_op_pools],
            "use_per_session_threads": self.per_session_threads,
            "allow_soft_placement": self.soft_placement,
            "log_device_placement": self.log_placement,
            "operation_timeout_in_ms": self.timeout_ms,
            "device_filters": list(self.device_filters),
            "disabled_passes": sorted(self.disabled_passes),
            "global_jit_level": self.global_jit_level,
        }
        if self.passes:
            out["passes"] = list(self.passes)
        return out

    @property
    def timeout_s(self) -> float | None:
        return self.timeout_ms / 1000.0 if self.timeout_ms > 0 else None

    def build_options(self, devices: list[str]) -> BuildOptions:
        """The build options of a session whose devices are `devices` (the client's first)."""
        return BuildOptions(tuple(devices), devices[0], self.soft_placement,
                            self.log_placement, self.disabled_passes, self.passes,
                            self.timeout_s, self.global_jit_level)

    def replace(self, **changes) -> SessionOptions:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class BuildOptions:
    """What shapes a signature's client graph: devices, placement, passes, deadline."""

    devices: tuple[str, ...]
    client_device: str
    soft_placement: bool = False
    log_placement: bool = False
    disabled_passes: frozenset[str] = frozenset()
    passes: tuple[str, ...] | None = None
    timeout_s: float | None = None
    global_jit_level: int = 0     # > 0: auto-clustering (master/passes/mark_for_compilation.py)

    @classmethod
    def from_config(cls, config, devices: list[str] | None = None) -> BuildOptions:
        """Build options from a session config; `devices` default to this process's CPUs."""
        opts = SessionOptions.from_config(config)
        if devices is None:
            from tensorweave.runtime.device import local_device_names

            devices = local_device_names(cpus=opts.cpus)
        return opts.build_options(list(devices))


def run_timeout_s(session: SessionOptions, run_options: dict | None) -> float | None:
    """A step's deadline in seconds: RunOptions' `timeout_in_ms`, else the session's."""
    ms = (run_options or {}).get("timeout_in_ms") or session.timeout_ms
    return ms / 1000.0 if ms and ms > 0 else None


def pass_toggles(config) -> tuple[set[str], list[str] | None]:
    """(disabled pass names, explicit pass list or None) of a ConfigProto's graph options:
    TF's rewrite toggles set to OFF, `opt_level = L0` (no folding, no CSE),
    `disable_meta_optimizer`, and `rewrite_options.optimizers` (run exactly these)."""
    ro = config.graph_options.rewrite_options
    off = {ours for field_name, ours in _TOGGLES.items() if getattr(ro, field_name) == _OFF}
    if config.graph_options.optimizer_options.opt_level == _L0:
        off |= {"constant_folding", "cse"}
    if ro.disable_meta_optimizer:
        off |= set(_TOGGLES.values())
    return off, list(ro.optimizers) or None


def _cpus(value) -> int:
    n = int(value or 1)
    if not 1 <= n <= MAX_CPU_DEVICES:
        raise errors.InvalidArgumentError(
            None, None, f"device_count['CPU'] = {n}: expected 1..{MAX_CPU_DEVICES}")
    return n


__all__ = ["BuildOptions", "MAX_CPU_DEVICES", "SessionOptions", "pass_toggles",
           "run_timeout_s"]
