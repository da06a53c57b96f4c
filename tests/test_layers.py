"""The package layering of ../shared/DESIGN.md, enforced: packages import downward only,
function-level imports included, so the package import graph is acyclic; no package imports
the package root; no name with a leading underscore is imported across packages.

`ALLOWED` lists imports that break the rule (file, imported module) while they wait to be
moved away; it is empty now and may only shrink: an entry that no longer occurs fails too.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "tensorweave"

# DESIGN.md's layers, lowest first. Within a layer only the core modules and the public
# namespace's modules import each other.
LAYERS: list[set[str]] = [
    {"dtypes", "shapes", "errors", "ir", "registry", "tf_logging"},
    {"proto"},
    {"formats"},
    {"framework"},
    {"ops"},
    {"autodiff"},
    {"runtime"},
    {"data"},
    {"master"},
    {"distributed"},
    {"monitoring"},
    {"client"},
    {"training"},
    {"saved_model"},
    {"feature_column"},
    {"estimator"},
    {"testing"},
    {"tools"},
    {"keras"},
    {"serving"},
    # the public namespace: re-exports only
    {"", "app", "autograph", "bitwise", "compat", "contrib", "debugging", "distribute",
     "distributions", "flags", "graph_util", "image", "initializers", "io", "linalg", "lookup",
     "math", "mixed_precision", "nest", "nn", "profiler", "python_io", "queue", "ragged", "random",
     "signal", "sparse", "strings", "test", "timeline", "train", "xla"},
    {"cli"},
]
RANK = {pkg: i for i, layer in enumerate(LAYERS) for pkg in layer}
CORE = LAYERS[0]
PUBLIC = LAYERS[-2]   # the public namespace (cli sits above it)

ALLOWED: set[tuple[str, str]] = set()


def _package(module: str) -> str | None:
    """`tensorweave.ops.math_ops` → "ops"; `tensorweave` → "" (the root); others → None."""
    parts = module.split(".")
    if parts[0] != "tensorweave":
        return None
    return parts[1] if len(parts) > 1 else ""


def _module_of(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path):
    """(line, imported module, imported names) of every import in `path`, nested ones too."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, []
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "tensorweave":
                for a in node.names:
                    sub = SRC / a.name
                    if sub.is_dir() or sub.with_suffix(".py").exists():
                        yield node.lineno, f"tensorweave.{a.name}", []
                    else:
                        yield node.lineno, "tensorweave", [a.name]
            else:
                yield node.lineno, node.module, [a.name for a in node.names]


def _sources():
    for path in sorted(SRC.rglob("*.py")):
        if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
            continue
        yield path


def violations(skip_allowed: bool = False) -> tuple[list[str], set[tuple[str, str]],
                                                     dict[tuple[str, str], int]]:
    """(messages, the (file, module) pairs that break the layering, package edges — without
    the allowed ones' when `skip_allowed`)."""
    out: list[str] = []
    bad: set[tuple[str, str]] = set()
    edges: dict[tuple[str, str], int] = {}
    for path in _sources():
        src = _package(_module_of(path))
        rel = str(path.relative_to(SRC))
        for line, module, names in _imports(path):
            dst = _package(module)
            if dst is None or dst == src:
                continue
            if not (skip_allowed and (rel, module) in ALLOWED):
                edges[(src, dst)] = edges.get((src, dst), 0) + 1
            if RANK.get(src, 0) < RANK[""] and dst == "":
                msg = f"{rel}:{line} imports the package root (tensorweave{names})"
            elif RANK.get(dst, -1) > RANK.get(src, len(LAYERS)) or (
                    RANK.get(dst) == RANK.get(src) and dst not in CORE | PUBLIC):
                msg = f"{rel}:{line} ({src}) imports {module} ({dst}): a higher layer"
            else:
                private = [n for n in names if n.startswith("_") and not n.startswith("__")]
                if not private or src in PUBLIC and dst == "":
                    continue
                msg = f"{rel}:{line} imports private {private} from {module}"
            if (rel, module) not in ALLOWED:
                out.append(msg)
            bad.add((rel, module))
    return out, bad, edges


def test_packages_import_downward_only():
    found, _, _ = violations()
    assert not found, "imports against DESIGN.md's layers:\n" + "\n".join(found)


def test_the_allow_list_only_shrinks():
    _, bad, _ = violations()
    gone = sorted(ALLOWED - bad)
    assert not gone, f"no longer violations: remove them from ALLOWED: {gone}"


def test_the_package_graph_is_acyclic():
    """Without the allowed violations, no package reaches itself through imports."""
    _, _, edges = violations(skip_allowed=True)
    graph: dict[str, set[str]] = {}
    for src, dst in edges:
        graph.setdefault(src, set()).add(dst)
    done: set[str] = set()

    def visit(pkg: str, path: list[str]) -> None:
        if pkg in path:
            raise AssertionError("import cycle: " + " -> ".join(path[path.index(pkg):] + [pkg]))
        if pkg in done:
            return
        for dst in sorted(graph.get(pkg, ())):
            visit(dst, path + [pkg])
        done.add(pkg)

    for pkg in sorted(graph):
        visit(pkg, [])


def test_every_package_has_a_layer():
    packages = {_package(_module_of(p)) for p in _sources()}
    assert packages <= set(RANK), sorted(packages - set(RANK))
