"""How make bench combines rounds: the best of each figure, and the per-round ratios."""

from benchmarks import run


def test_best_of_takes_each_figures_minimum_and_keeps_the_rest():
    runs = [{"a_ms": 3.0, "b_ms": 1.0, "_skipped": {"x": "why"}},
            {"a_ms": 2.0, "b_ms": 4.0, "c_ms": 7.0}]
    assert run.best_of(runs) == {"a_ms": 2.0, "b_ms": 1.0, "c_ms": 7.0,
                                 "_skipped": {"x": "why"}}
    assert run.best_of([]) == {}


def test_round_ratios_list_every_targeted_figure_per_round():
    ours = [{"cnn_b64_28x28_step_ms": 20.0}, {"cnn_b64_28x28_step_ms": 18.0}]
    tf = [{"cnn_b64_28x28_step_ms": 10.0}, {"cnn_b64_28x28_step_ms": 12.0}]
    assert run.round_ratios(ours, tf) == "- CNN 28×28 b64 Adam step (ms): 2×, 1.5×"
