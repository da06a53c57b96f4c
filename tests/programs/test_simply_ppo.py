"""MorvanZhou's simply_PPO.py (tests/programs/simply_ppo.py, unchanged: tf.contrib.distributions'
Normal — sample, prob — and kl_divergence, tf.layers, Adam) with tensorweave as `tensorflow`,
a numpy stand-in for gym's Pendulum-v0 (the environment is the program's data) and a no-op
matplotlib. The run length EP_MAX (1000 episodes) is set to 2: the test checks that the
episodes run, the policy's samples stay in the action range and training moves the actor."""

from __future__ import annotations

import runpy
import sys
import types
from pathlib import Path

import numpy as np

import tensorweave

HERE = Path(__file__).resolve().parent


class _Pendulum:
    """Pendulum-v0's dynamics (gym's classic_control/pendulum.py) in numpy."""

    max_speed, max_torque, dt, g, m, length = 8.0, 2.0, 0.05, 10.0, 1.0, 1.0

    def __init__(self):
        self.rng = np.random.default_rng(0)
        self.unwrapped = self
        self.actions = []

    def reset(self):
        self.state = self.rng.uniform([-np.pi, -1.0], [np.pi, 1.0])
        return self._obs()

    def _obs(self):
        th, thdot = self.state
        return np.array([np.cos(th), np.sin(th), thdot])

    def render(self):
        pass

    def step(self, u):
        th, thdot = self.state
        u = float(np.clip(u, -self.max_torque, self.max_torque)[0])
        self.actions.append(u)
        angle = ((th + np.pi) % (2 * np.pi)) - np.pi
        cost = angle ** 2 + 0.1 * thdot ** 2 + 0.001 * u ** 2
        thdot = thdot + (-3 * self.g / (2 * self.length) * np.sin(th + np.pi)
                         + 3.0 / (self.m * self.length ** 2) * u) * self.dt
        thdot = np.clip(thdot, -self.max_speed, self.max_speed)
        self.state = np.array([th + thdot * self.dt, thdot])
        return self._obs(), -cost, False, {}


def test_simply_ppo_runs_unchanged(tmp_path, monkeypatch):
    env = _Pendulum()
    gym = types.ModuleType("gym")
    gym.make = lambda name: env
    plt = types.ModuleType("matplotlib.pyplot")
    for fn in ("plot", "xlabel", "ylabel", "show"):
        setattr(plt, fn, lambda *a, **k: None)
    mpl = types.ModuleType("matplotlib")
    mpl.pyplot = plt
    source = (HERE / "simply_ppo.py").read_text().replace("EP_MAX = 1000", "EP_MAX = 2")
    script = tmp_path / "simply_ppo.py"
    script.write_text(source)
    monkeypatch.chdir(tmp_path)
    modules = {"tensorflow": tensorweave, "tensorflow.contrib": tensorweave.contrib,
               "tensorflow.contrib.distributions": tensorweave.contrib.distributions,
               "gym": gym, "matplotlib": mpl, "matplotlib.pyplot": plt}
    for name, mod in modules.items():
        monkeypatch.setitem(sys.modules, name, mod)
    with tensorweave.Graph().as_default():
        out = runpy.run_path(str(script))
        ppo = out["ppo"]
        pi_vars = tensorweave.get_collection(tensorweave.GraphKeys.TRAINABLE_VARIABLES, "pi")
        old_vars = tensorweave.get_collection(tensorweave.GraphKeys.GLOBAL_VARIABLES, "oldpi")
        pi_now, old_now = ppo.sess.run([pi_vars, old_vars])
    assert len(out["all_ep_r"]) == 2 and np.isfinite(out["all_ep_r"]).all()
    assert len(env.actions) == 2 * 199
    assert all(-2.0 <= a <= 2.0 for a in env.actions)
    assert len(set(env.actions)) > 300              # sampled, not constant
    # the last update trained pi after copying it to oldpi: they differ now
    assert any(not np.allclose(a, b) for a, b in zip(pi_now, old_now))
    assert (tmp_path / "log").is_dir()
