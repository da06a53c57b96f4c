"""Runs every op case; fails when a registered op type has no case."""

import pytest

from tensorweave.ops.registry import OPS
from tests.ops.harness import all_cases, all_exempt, run_case

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_on_constants(case):
    run_case(case, use_placeholders=False)


@pytest.mark.parametrize("case", [c for c in CASES if c.placeholders],
                         ids=[c.id for c in CASES if c.placeholders])
def test_on_placeholders(case):
    run_case(case, use_placeholders=True)


def test_every_op_has_a_case():
    covered = {c.op for c in CASES} | set(all_exempt())
    # NOTE: op types named Test* are registered by tests themselves (custom-op checks)
    missing = sorted(n for n in set(OPS.names()) - covered if not n.startswith("Test"))
    assert not missing, f"ops without a harness case (add one to tests/ops/cases_*.py): {missing}"
