"""Runs a TF-Slim program unchanged with tensorweave as `tensorflow` (and its contrib
modules as `tensorflow.contrib.*`); `matplotlib` and the slim models repo's `datasets`
package, which the walkthrough imports, are no-op stand-ins.

    python run_program.py PROGRAM.py
"""

import runpy
import sys
import types

import tensorweave

sys.modules["tensorflow"] = tensorweave
for name in ("contrib", "contrib.slim", "contrib.layers", "contrib.framework", "contrib.rnn"):
    module = tensorweave
    for part in name.split("."):
        module = getattr(module, part)
    sys.modules["tensorflow." + name] = module

pyplot = types.ModuleType("matplotlib.pyplot")
for fn in ("scatter", "title", "show", "figure", "imshow", "axis", "plot"):
    setattr(pyplot, fn, lambda *args, **kwargs: None)
matplotlib = types.ModuleType("matplotlib")
matplotlib.pyplot = pyplot
datasets = types.ModuleType("datasets")
datasets.dataset_utils = types.ModuleType("datasets.dataset_utils")
sys.modules.update({"matplotlib": matplotlib, "matplotlib.pyplot": pyplot,
                    "datasets": datasets, "datasets.dataset_utils": datasets.dataset_utils})

runpy.run_path(sys.argv[1], run_name="__main__")
