"""The rows of tf_v1_symbol_usage.tsv that belong to the training-loop families, and a
resolver of dotted names against a module (shared by the test and make_v1_families.py)."""

from __future__ import annotations

import re
from pathlib import Path

TSV = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / \
    "tf_v1_symbol_usage.tsv"
_FAMILIES = re.compile(
    r"^(app|flags|logging|compat|test)(\.|$)"
    r"|^train\.(\w*Hook|\w*Session\w*|Scaffold|Supervisor|SessionManager|SessionRun\w+|"
    r"SecondOrStepTimer|CheckpointSaverListener|NanLossDuringTrainingError|LooperThread|"
    r"SummaryWriterCache|get_global_step|get_or_create_global_step|create_global_step|"
    r"global_step|assert_global_step)$")


def all_symbols(tsv: Path = TSV) -> list[str]:
    """Every symbol of the tsv, sorted."""
    return sorted(line.split("\t")[0] for line in tsv.read_text().splitlines()[1:]
                  if line.strip())


def family_symbols(tsv: Path = TSV) -> list[str]:
    return [name for name in all_symbols(tsv) if _FAMILIES.search(name)]


def resolve(module, dotted: str):
    """`module.a.b.c`, or None when some part is missing."""
    value = module
    for part in dotted.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value
