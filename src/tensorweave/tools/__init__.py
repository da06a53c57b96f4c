"""Tools that take a model out of Python: freezing (`freeze_graph`), `optimize_for_inference`
and the OpList export (`op_list`) other languages generate their op wrappers from."""
