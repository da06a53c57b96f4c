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


def test_render_load_marks_each_row_against_tf_and_its_own_quiet_figure():
    key = "cnn_b64_28x28_step_ms"
    load = {"quiet": {"ours": {key: 10.0}, "tensorflow": {key: 10.0}, "how": "q"},
            "busy": {"ours": {key: 18.0}, "tensorflow": {key: 16.0}, "how": "b",
                     "load_avg": [1.0, 1.0, 1.0]},
            "quota": {"ours": {key: 25.0}, "tensorflow": {key: 20.0}, "how": "c"}}
    text = run.render_load(load)
    row = next(line for line in text.splitlines() if line.startswith("| CNN"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # busy: 1.12x TF, 1.8x quiet -> met; 1 CPU: 1.25x TF, 2.5x quiet -> not met
    assert cells[5:8] == ["1.12×", "1.80×", "yes"]
    assert cells[10:13] == ["1.25×", "2.50×", "no"]
    assert "- busy: b; machine load average 1.0 as it began" in text
