"""The text form of an `Explanation`: the node counts, then what each stage changed.

    stage                  nodes  change
    full                      13
    placed                    13
    pruned                    12  -3 +2 ~1
    ...
    devices: CPU:0 = /job:localhost/replica:0/task:0/device:CPU:0
    == full: 13 nodes ==
      ops: Const x5, Placeholder x1, ... (--full prints every stage whole)
    == placed: 13 nodes ==
      devices: CPU:0 x13
    == pruned: 13 -> 12 nodes ==
      # pruning keeps what the fetches need and adds one _Arg node per fed tensor and ...
      - fed: x
      - not needed by the fetches: ones, w/Assign
      + _arg_x_0_0 = _Arg[T=DT_FLOAT, index=0]()
      + _retval_z_0_0 = _Retval[T=DT_FLOAT, index=0](z)
      ~ MatMul = MatMul[...](_arg_x_0_0, w/read)
    ...
    == partitioned: 10 nodes ==
      1 partition: CPU:0 x10
      what runs:
        ...

The first stage prints as counts of op types; each later one prints its notes and only its
difference from the stage before (`-` removed, `+` added, `~` changed; a change of device only
is summed up per device), at most `MAX_LINES` lines of each kind; the last stage (what runs)
also prints whole, up to `MAX_WHOLE` lines. `full=True` prints everything, every stage whole.
Devices print short (`CPU:0` when all are on one task), with a legend line when shortened;
`_output_shapes` attrs are left out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from tensorweave import ir
from tensorweave.framework.printing import format_node

MAX_LINES = 20       # lines of each kind of change a stage prints (--full: all)
MAX_WHOLE = 200      # lines of the last stage's graph ("what runs") without --full
_BOUNDARY_NOTE = ("pruning keeps what the fetches need and adds one _Arg node per fed tensor "
                  "and one _Retval node per fetched tensor (how values enter and leave the "
                  "step), so the count can go up")


@dataclass
class _Diff:
    removed: list[ir.NodeDef]
    added: list[ir.NodeDef]
    changed: list[tuple[ir.NodeDef, ir.NodeDef]]     # (before, after), content differs
    moved: list[ir.NodeDef]                          # only the device differs


def render(stages, full: bool = False) -> str:
    """The text of `stages` (each with `.name`, `.graphs` {device: ir.GraphDef}, `.notes`)."""
    short = _short_devices(stages)
    flat = [_flatten(s) for s in stages]
    diffs = [None] + [_diff(a, b) for a, b in zip(flat, flat[1:])]
    out = _counts_table(stages, flat, diffs) + _legend(short)
    for k, (stage, nodes, d) in enumerate(zip(stages, flat, diffs)):
        n_before = len(nodes) - len(d.added) + len(d.removed) if d else len(nodes)
        was = f"{n_before} -> " if n_before != len(nodes) else ""
        out.append(f"== {stage.name}: {was}{len(nodes)} nodes ==")
        out.extend(_bounded([f"  # {n}" for n in stage.notes], most=None if full else MAX_LINES))
        if d is None:
            out.extend(_whole(nodes, short) if full else _op_counts(nodes))
        else:
            out.extend(_changes(d, short, quiet=bool(stage.notes) or _is_partitioned(stage)))
        out.extend(_partitions(stage, short))
        if full and d is not None:
            out.extend(["  every node:"] + _whole(nodes, short))
        elif not full and k == len(stages) - 1 and k > 0:
            out.extend(["  what runs:"] + _bounded(_whole(nodes, short), MAX_WHOLE))
    return "\n".join(out) + "\n"


# -- parts of the text -------------------------------------------------------------------------
def _counts_table(stages, flat, diffs) -> list[str]:
    width = max(len(s.name) for s in stages)
    lines = [f"{'stage':{width}s}  nodes  change"]
    for s, nodes, d in zip(stages, flat, diffs):
        change = "" if d is None else " ".join(
            f"{sign}{len(part)}" for sign, part in (("-", d.removed), ("+", d.added),
                                                    ("~", d.changed)) if part)
        lines.append(f"{s.name:{width}s}  {len(nodes):5d}  {change}".rstrip())
    return lines


def _is_partitioned(stage) -> bool:
    return any(stage.graphs)


def _partitions(stage, short) -> list[str]:
    devs = [dev for dev in sorted(stage.graphs) if dev]
    if not devs:
        return []
    parts = ", ".join(f"{short.get(dev, dev)} x{len(stage.graphs[dev].nodes)}" for dev in devs)
    return [f"  {len(devs)} partition{'s' if len(devs) > 1 else ''}: {parts}"]


def _legend(short: dict[str, str]) -> list[str]:
    pairs = sorted((s, d) for d, s in short.items() if s != d)
    return [f"devices: {', '.join(f'{s} = {d}' for s, d in pairs)}"] if pairs else []


def _op_counts(nodes: dict[str, ir.NodeDef]) -> list[str]:
    ops = Counter(n.op for n in nodes.values()).most_common()
    shown = ", ".join(f"{op} x{k}" for op, k in ops[:10])
    more = f", {len(ops) - 10} more kinds" if len(ops) > 10 else ""
    return [f"  ops: {shown}{more} (--full prints every stage whole)"]


def _whole(nodes: dict[str, ir.NodeDef], short) -> list[str]:
    out, last = [], None
    for n in nodes.values():
        if n.device != last and len({m.device for m in nodes.values()}) > 1:
            out.append(f"  [{short.get(n.device, n.device) or '(no device)'}]")
        last = n.device
        out.append(f"    {_line(n, short)}")
    return out


def _changes(d: _Diff, short, quiet: bool = False) -> list[str]:
    """The lines of a diff; `quiet`: no "(no change)" line (the stage's notes speak)."""
    out = []
    if any(n.op in ("_Arg", "_Retval") for n in d.added):
        out.append(f"  # {_BOUNDARY_NOTE}")
    fed = _fed_names(d)
    out += _names("- fed", [n for n in d.removed if n.name in fed])
    out += _names("- not needed by the fetches" if fed or _has_boundary(d) else "- removed",
                  [n for n in d.removed if n.name not in fed])
    out += _bounded([f"  + {_line(n, short)}" for n in d.added])
    out += _bounded([f"  ~ {_line(after, short)}" + _was(before, after)
                     for before, after in d.changed])
    if d.moved or (d.changed and any(b.device != a.device for b, a in d.changed)):
        out.append(f"  devices: {_per_device(d, short)}")
    return out or ([] if quiet else ["  (no change)"])


def _names(label: str, nodes: list[ir.NodeDef]) -> list[str]:
    if not nodes:
        return []
    names = [n.name for n in nodes]
    more = f", ... ({len(names) - MAX_LINES} more)" if len(names) > MAX_LINES else ""
    return [f"  {label}: {', '.join(names[:MAX_LINES])}{more}"]


def _bounded(lines: list[str], most: int | None = MAX_LINES) -> list[str]:
    if most is None or len(lines) <= most:
        return lines
    return lines[:most] + [f"  ... ({len(lines) - most} more; --full prints every node)"]


def _was(before: ir.NodeDef, after: ir.NodeDef) -> str:
    return f"   (was {before.op})" if before.op != after.op else ""


def _per_device(d: _Diff, short) -> str:
    count = Counter(n.device for n in d.moved + [a for b, a in d.changed if b.device != a.device])
    return ", ".join(f"{short.get(dev, dev) or '(none)'} x{k}" for dev, k in sorted(count.items()))


# -- comparing stages -----------------------------------------------------------------------
def _flatten(stage) -> dict[str, ir.NodeDef]:
    """name → node over all of a stage's graphs, each node carrying its graph's device."""
    out = {}
    for dev in sorted(stage.graphs):
        for n in stage.graphs[dev].nodes:
            if dev and n.device != dev:
                n = n.copy()
                n.device = dev
            out[n.name if n.name not in out else f"{dev}:{n.name}"] = n
    return out


def _diff(before: dict[str, ir.NodeDef], after: dict[str, ir.NodeDef]) -> _Diff:
    d = _Diff([n for k, n in before.items() if k not in after],
              [n for k, n in after.items() if k not in before], [], [])
    for k, n in after.items():
        old = before.get(k)
        if old is None:
            continue
        if _line(old) != _line(n):
            d.changed.append((old, n))
        elif old.device != n.device:
            d.moved.append(n)
    return d


def _fed_names(d: _Diff) -> set[str]:
    """Removed nodes whose consumers now read an _Arg in their place: the fed ones."""
    args = {n.name for n in d.added if n.op == "_Arg"}
    fed = set()
    for before, after in d.changed:
        for old, new in zip(before.inputs, after.inputs):
            if old != new and ir.parse_input(new)[0] in args:
                fed.add(ir.parse_input(old)[0])
    return fed


def _has_boundary(d: _Diff) -> bool:
    return any(n.op == "_Retval" for n in d.added)


def _line(n: ir.NodeDef, short: dict[str, str] | None = None) -> str:
    """A node's text without its device (devices print apart) and `_output_shapes` (a
    MetaGraphDef's annotation), device names in attrs short."""
    if n.device or "_output_shapes" in n.attrs:
        n = n.copy()
        n.device = ""
        n.attrs = {k: v for k, v in n.attrs.items() if k != "_output_shapes"}
    return _shorten(format_node(n), short) if short else format_node(n)


# -- devices ----------------------------------------------------------------------------------
def _short_devices(stages) -> dict[str, str]:
    """Full device name (`/job:...`) → short form: `CPU:0` when all are on one task, else
    without `/replica:0` and `device:`. Partial names (a user's `/device:CPU:1`) stay."""
    names = {n.device for s in stages for n in _flatten(s).values()
             if n.device.startswith("/job:")}
    tasks = {name.rsplit("/device:", 1)[0] for name in names}
    if len(tasks) == 1:
        return {name: name.rsplit("/device:", 1)[-1] for name in names}
    return {name: name.replace("/replica:0", "").replace("/device:", "/") for name in names}


def _shorten(text: str, short: dict[str, str]) -> str:
    for full in sorted(short, key=len, reverse=True):
        text = text.replace(f'"{full}"', f'"{short[full]}"')
    return text
