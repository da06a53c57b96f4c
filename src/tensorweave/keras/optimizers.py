"""`tf.keras.optimizers` (SGD, RMSprop, Adam, Adagrad, Adadelta, Adamax, Nadam) with TF 1.15's
tf.keras arguments and defaults (learning rate 0.001 but SGD's 0.01, epsilon 1e-7). SGD runs
ApplyGradientDescent / ApplyMomentum (v = m*v + g; p -= lr*v: Keras's SGD computes the same
with a constant rate), Adam ApplyAdam, Adagrad ApplyAdagrad, Adadelta ApplyAdadelta;
RMSprop (epsilon outside the root, a zero-initialized accumulator), Adamax and Nadam are
written in ops. All but Nadam match TensorFlow's tf-keras step for step (tests/keras;
TF's graph-mode Nadam multiplies its schedule product once per variable per step).

`optimizer.lr` (alias `learning_rate`) is a float variable, so callbacks change it with
`K.set_value(model.optimizer.lr, v)`; `iterations` counts applied steps. `decay` (Keras's
time-based decay) divides the rate by 1 + decay * iterations.
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.keras import backend as K
from tensorweave.ops import math_ops, state_ops, variable_scope
from tensorweave.ops import variables as variables_mod
from tensorweave.ops.init_ops import zeros_initializer
from tensorweave.training import optimizers as tf_optimizers
from tensorweave.training.optimizer import Optimizer as TFOptimizer


class Optimizer:
    """Base: `get_updates(loss, params)` returns the ops of one step; `get_config()`."""

    _defaults: dict = {}

    def __init__(self, *args, **kwargs):
        names = ["lr", *(k for k in self._defaults if k != "lr")]
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes at most {len(names)} positional "
                            f"arguments ({', '.join(names)})")
        kwargs.update(zip(names, args))
        lr = kwargs.pop("learning_rate", kwargs.pop("lr", self._defaults.get("lr", 0.01)))
        self._decay = float(kwargs.pop("decay", 0.0))
        kwargs.pop("clipnorm", None), kwargs.pop("clipvalue", None)
        self._hyper = {**self._defaults, **kwargs, "lr": float(lr)}
        self._vars: dict = {}

    def _var(self, name: str, value, dtype=dtypes.float32):
        graph = get_default_graph()
        key = (id(graph), name)
        if key not in self._vars:
            with graph.name_scope(type(self).__name__ + "/"):
                self._vars[key] = variables_mod.Variable(value, name=name, dtype=dtype,
                                                         trainable=False)
        return self._vars[key]

    @property
    def lr(self):
        return self._var("lr", self._hyper["lr"])

    learning_rate = lr

    @property
    def iterations(self):
        return self._var("iterations", 0, dtypes.int64)

    def _rate(self):
        if not self._decay:
            return self.lr
        steps = math_ops.cast(self.iterations, dtypes.float32)
        return self.lr / (1.0 + self._decay * steps)

    def get_updates(self, loss, params) -> list:
        grads_and_vars = self.compute_gradients(loss, params)
        return [self.apply_gradients(grads_and_vars)]

    def compute_gradients(self, loss, params):
        return list(zip(K.gradients(loss, params), params))

    def apply_gradients(self, grads_and_vars):
        return self._tf_optimizer().apply_gradients(grads_and_vars,
                                                    global_step=self.iterations)

    def minimize(self, loss, var_list=None, **kwargs):
        """Also usable as a tf.train optimizer in a plain TF1 loop."""
        params = var_list if var_list is not None else variables_mod.trainable_variables()
        return self.get_updates(loss, params)[0]

    def _tf_optimizer(self) -> TFOptimizer:
        raise NotImplementedError

    def get_config(self) -> dict:
        return {**self._hyper, "decay": self._decay}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class SGD(Optimizer):
    _defaults = {"lr": 0.01, "momentum": 0.0, "nesterov": False}

    def _tf_optimizer(self):
        if self._hyper["momentum"]:
            return tf_optimizers.MomentumOptimizer(self._rate(), self._hyper["momentum"],
                                                   use_nesterov=self._hyper["nesterov"],
                                                   name="SGD")
        return tf_optimizers.GradientDescentOptimizer(self._rate(), name="SGD")


class Adam(Optimizer):
    _defaults = {"lr": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7,
                 "amsgrad": False}

    def _tf_optimizer(self):
        h = self._hyper
        return tf_optimizers.AdamOptimizer(self._rate(), h["beta_1"], h["beta_2"],
                                           h["epsilon"] or K.epsilon(), name="Adam")


class Adagrad(Optimizer):
    _defaults = {"lr": 0.001, "initial_accumulator_value": 0.1, "epsilon": 1e-7}

    def _tf_optimizer(self):
        return tf_optimizers.AdagradOptimizer(
            self._rate(), initial_accumulator_value=self._hyper["initial_accumulator_value"],
            name="Adagrad")


class Adadelta(Optimizer):
    _defaults = {"lr": 0.001, "rho": 0.95, "epsilon": 1e-7}

    def _tf_optimizer(self):
        h = self._hyper
        return tf_optimizers.AdadeltaOptimizer(self._rate(), rho=h["rho"],
                                               epsilon=h["epsilon"], name="Adadelta")


class _SlotOptimizer(Optimizer):
    """Optimizers written in ops: `_step(p, g, t, slots)` returns the ops of one update."""

    _slots: tuple = ()

    def apply_gradients(self, grads_and_vars):
        t = math_ops.cast(self.iterations + 1, dtypes.float32)
        ops = []
        for g, p in grads_and_vars:
            if g is None:
                continue
            with get_default_graph().name_scope(type(self).__name__ + "/"):
                slots = [variable_scope.get_variable(
                    f"{p.op.name}/{type(self).__name__}/{s}", shape=p.shape,
                    dtype=p.dtype.base_dtype, initializer=zeros_initializer(),
                    trainable=False) for s in self._slots]
            ops.extend(self._step(p, convert_to_tensor(g), t, slots))
        with get_default_graph().control_dependencies(ops):
            return state_ops.assign_add(self.iterations, 1).op

    def _step(self, p, g, t, slots):
        raise NotImplementedError


class Adamax(_SlotOptimizer):
    _defaults = {"lr": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}
    _slots = ("m", "u")

    def _step(self, p, g, t, slots):
        h, (m, u) = self._hyper, slots
        lr_t = self._rate() / (1.0 - math_ops.pow(h["beta_1"], t))
        m_t = h["beta_1"] * m + (1.0 - h["beta_1"]) * g
        u_t = math_ops.maximum(h["beta_2"] * u, math_ops.abs(g))
        return [state_ops.assign(m, m_t), state_ops.assign(u, u_t),
                state_ops.assign_sub(p, lr_t * m_t / (u_t + h["epsilon"]))]


class Nadam(_SlotOptimizer):
    """Adam with Nesterov momentum and Keras's momentum schedule
    u_t = beta_1 * (1 - 0.5 * 0.96^t), through the running product of the u_t."""

    _defaults = {"lr": 0.001, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}
    _slots = ("m", "v")

    def apply_gradients(self, grads_and_vars):
        t = math_ops.cast(self.iterations + 1, dtypes.float32)
        b1 = self._hyper["beta_1"]
        self._u_t = b1 * (1.0 - 0.5 * math_ops.pow(0.96, t))
        self._u_next = b1 * (1.0 - 0.5 * math_ops.pow(0.96, t + 1.0))
        product = self._var("u_product", 1.0)
        self._product_t = product * self._u_t
        step = super().apply_gradients(grads_and_vars)
        with get_default_graph().control_dependencies([step]):
            return state_ops.assign(product, self._product_t).op

    def _step(self, p, g, t, slots):
        h, (m, v) = self._hyper, slots
        m_t = m + (g - m) * (1.0 - h["beta_1"])
        v_t = v + (math_ops.square(g) - v) * (1.0 - h["beta_2"])
        m_hat = (self._u_next * m_t / (1.0 - self._product_t * self._u_next)
                 + (1.0 - self._u_t) * g / (1.0 - self._product_t))
        v_hat = v_t / (1.0 - math_ops.pow(h["beta_2"], t))
        return [state_ops.assign(m, m_t), state_ops.assign(v, v_t),
                state_ops.assign_sub(p, m_hat * self._rate() / (math_ops.sqrt(v_hat)
                                                                 + h["epsilon"]))]


class RMSprop(_SlotOptimizer):
    """ms = rho*ms + (1-rho)*g^2 (centered: minus the mean's square);
    p -= lr * g / (sqrt(ms) + eps), through a momentum buffer when momentum > 0 (the epsilon
    outside the root, as TF 2.x's Keras computes it; tf.train's RMSProp puts it inside)."""

    _defaults = {"lr": 0.001, "rho": 0.9, "momentum": 0.0, "epsilon": 1e-7, "centered": False}
    _slots = ("rms", "momentum", "mg")

    def _step(self, p, g, t, slots):
        h, (ms, mom, mg) = self._hyper, slots
        rho = h["rho"]
        ms_t = rho * ms + (1.0 - rho) * math_ops.square(g)
        ops = [state_ops.assign(ms, ms_t)]
        denom = ms_t
        if h["centered"]:
            mg_t = rho * mg + (1.0 - rho) * g
            ops.append(state_ops.assign(mg, mg_t))
            denom = ms_t - math_ops.square(mg_t)
        step = self._rate() * g / (math_ops.sqrt(denom) + h["epsilon"])
        if h["momentum"]:
            mom_t = h["momentum"] * mom + step
            ops += [state_ops.assign(mom, mom_t), state_ops.assign_sub(p, mom_t)]
        else:
            ops.append(state_ops.assign_sub(p, step))
        return ops


class TFOptimizerWrapper(Optimizer):
    """A tf.train optimizer given to `compile` (Keras's `TFOptimizer`)."""

    def __init__(self, optimizer: TFOptimizer):
        super().__init__(lr=getattr(optimizer, "_learning_rate", 0.0))
        self.optimizer = optimizer

    def _tf_optimizer(self):
        return self.optimizer


sgd, adam, rmsprop, adagrad, adadelta, adamax, nadam = (SGD, Adam, RMSprop, Adagrad, Adadelta,
                                                        Adamax, Nadam)
_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad,
            "adadelta": Adadelta, "adamax": Adamax, "nadam": Nadam}


def get(identifier) -> Optimizer:
    """An optimizer from a name ("adam"), a config dict, a Keras or a tf.train optimizer.

    Raises:
      ValueError: an unknown name or object.
    """
    if isinstance(identifier, Optimizer):
        return identifier
    if isinstance(identifier, TFOptimizer):
        return TFOptimizerWrapper(identifier)
    if isinstance(identifier, dict):
        return _BY_NAME[identifier["class_name"].lower()](**identifier.get("config", {}))
    if isinstance(identifier, str) and identifier.lower() in _BY_NAME:
        return _BY_NAME[identifier.lower()]()
    raise ValueError(f"Could not interpret optimizer identifier: {identifier}")


def serialize(optimizer: Optimizer) -> dict:
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


__all__ = ["Optimizer", "SGD", "Adam", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam",
           "get", "serialize"]
