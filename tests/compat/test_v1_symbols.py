"""Every symbol of ../shared/reference/tf_v1_symbol_usage.tsv, all families, that TF 2.21's
`tf.compat.v1` still has (tests/data/v1_symbols_in_tf.json, from make_v1_symbols.py)
resolves in tensorweave. (What each does is tested where it is built.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tensorweave as tf
from tests.compat import v1_families

IN_TF = json.loads((Path(__file__).resolve().parent.parent / "data" /
                    "v1_symbols_in_tf.json").read_text())


def test_every_symbol_of_tf_exists():
    missing = [name for name, in_tf in IN_TF.items()
               if in_tf and v1_families.resolve(tf, name) is None]
    assert not missing


@pytest.mark.skipif(not v1_families.TSV.exists(), reason="../shared/reference not here")
def test_fixture_covers_the_tsv():
    assert set(v1_families.all_symbols()) == set(IN_TF)
