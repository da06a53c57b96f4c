"""A per-op profile over N steps of `RunMetadata.step_stats` (like tfprof's op view).

    profile = OpProfile()
    for step in range(20):
        md = tf.RunMetadata()
        sess.run(train_op, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=md)
        profile.add(md)
    print(profile.table())              # time by op type, largest first
    print(profile.table(by="node", max_rows=10))
    rows = profile.by_op_type()         # the same as data (ProfileRow)

Time is each node's `all_end_rel_micros`; the op type comes from its `timeline_label`
(`"name = Op(inputs)"`). A row's count is the number of executions over all recorded steps.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from tensorweave.monitoring.timeline import parse_op_label


@dataclass(frozen=True)
class ProfileRow:
    """One op type or node: executions, total/mean microseconds, share of all op time.

    `nodes` is the number of distinct nodes (1 for a node row); `op` the op type.
    """

    name: str
    op: str
    count: int
    total_micros: int
    mean_micros: float
    percent: float
    cumulative_percent: float
    nodes: int = 1


class OpProfile:
    """Accumulates node execution times over steps; tables by op type or by node."""

    def __init__(self):
        self.steps = 0
        self._nodes: dict[str, list] = {}   # node name -> [op, count, total_micros]

    def add(self, run_metadata_or_step_stats) -> None:
        """Adds one step (a RunMetadata or a StepStats, ours or TensorFlow's)."""
        stats = getattr(run_metadata_or_step_stats, "step_stats", run_metadata_or_step_stats)
        for dev in stats.dev_stats:
            for ns in dev.node_stats:
                entry = self._nodes.setdefault(ns.node_name, [_op_of(ns), 0, 0])
                entry[1] += 1
                entry[2] += ns.all_end_rel_micros
        self.steps += 1

    @property
    def total_micros(self) -> int:
        return sum(e[2] for e in self._nodes.values())

    def by_node(self) -> list[ProfileRow]:
        """One row per node, most total time first (ties by name)."""
        return self._rows((name, op, count, total, 1)
                          for name, (op, count, total) in self._nodes.items())

    def by_op_type(self) -> list[ProfileRow]:
        """One row per op type (name = op type), most total time first."""
        agg: dict[str, list] = {}
        for op, count, total in self._nodes.values():
            entry = agg.setdefault(op, [0, 0, 0])
            entry[0] += count
            entry[1] += total
            entry[2] += 1
        return self._rows((op, op, c, t, n) for op, (c, t, n) in agg.items())

    def _rows(self, items) -> list[ProfileRow]:
        grand = self.total_micros or 1
        rows, cumulative = [], 0.0
        for name, op, count, total, nodes in sorted(items, key=lambda r: (-r[3], r[0])):
            percent = 100.0 * total / grand
            cumulative += percent
            rows.append(ProfileRow(name, op, count, total, total / count if count else 0.0,
                                   percent, min(cumulative, 100.0), nodes))
        return rows

    def to_dict(self, by: str = "op_type") -> dict:
        """`{"steps", "total_micros", "rows": [ProfileRow as dict, ...]}`."""
        return {"steps": self.steps, "total_micros": self.total_micros,
                "rows": [asdict(r) for r in self._select(by)]}

    def _select(self, by: str) -> list[ProfileRow]:
        if by not in ("op_type", "node"):
            raise ValueError(f"by must be 'op_type' or 'node', got {by!r}")
        return self.by_op_type() if by == "op_type" else self.by_node()

    def table(self, by: str = "op_type", max_rows: int | None = None) -> str:
        """A fixed-width text table, like tfprof's op view."""
        rows = self._select(by)[:max_rows]
        header = (("op type", "nodes") if by == "op_type" else ("node", "op")) + (
            "count", "total", "mean", "percent (cum.)")
        lines = [header] + [_cells(r, by) for r in rows]
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        out = [f"Profile over {self.steps} step(s), {_fmt_us(self.total_micros)} of op time"]
        for line in lines:
            out.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                                 for i, (c, w) in enumerate(zip(line, widths))).rstrip())
        return "\n".join(out)


def _cells(r: ProfileRow, by: str) -> tuple:
    second = str(r.nodes) if by == "op_type" else r.op
    return (r.name, second, str(r.count), _fmt_us(r.total_micros), _fmt_us(r.mean_micros),
            f"{r.percent:5.1f}% ({r.cumulative_percent:5.1f}%)")


def _op_of(ns) -> str:
    return parse_op_label(ns.timeline_label)[1]


def _fmt_us(micros: float) -> str:
    if micros >= 1e6:
        return f"{micros / 1e6:.2f}s"
    if micros >= 1e3:
        return f"{micros / 1e3:.2f}ms"
    return f"{micros:.0f}us"


def profile(run_metadatas) -> OpProfile:
    """An `OpProfile` of several steps' RunMetadata (or StepStats)."""
    p = OpProfile()
    for md in run_metadatas:
        p.add(md)
    return p


__all__ = ["OpProfile", "ProfileRow", "profile"]
