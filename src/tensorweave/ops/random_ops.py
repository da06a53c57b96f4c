"""Random ops, TF1's seed rules, and `dropout`.

Every random op is stateful with attrs `seed` and `seed2` (TF's names and defaults). Its
kernel (`runtime/kernels/cpu/random.py`) owns a generator seeded from the pair, so a new
session replays a seeded op's sequence from the start; `(0, 0)` means "seed from entropy".
`get_seed` derives the pair from the graph seed (`set_random_seed`) and the op seed exactly
as TensorFlow 1.x does. The wrappers build TF's op structure and names
(`random_normal/RandomStandardNormal`, `random_normal/mul`, `random_normal`).

NOTE: ops of other families (floor, shape, slice, ...) are reached through the public
namespace (`tf.floor`), imported at call time, so these wrappers do not depend on how the
other op modules are laid out.
"""

from __future__ import annotations

import numbers

import numpy as np

from tensorweave import dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.apply import apply_op
from tensorweave.ops.array_ops import identity
from tensorweave.ops.common_shapes import unchanged
from tensorweave.ops.registry import register_op
from tensorweave.ops.shape_inference import constant_value
from tensorweave.ops.state_ops import op_name_scope
from tensorweave.shapes import TensorShape, dimension_value

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
_SEEDS = ["seed: int = 0", "seed2: int = 0"]
_FLOATS = "{half, bfloat16, float, double}"


# -- shape functions -------------------------------------------------------------------------
def _shape_input(ctx, i: int = 0) -> TensorShape:
    """The output shape a 1-D shape tensor (input `i`) describes (TF's RandomShape)."""
    rank = ctx.input_shape(i).ndims
    if rank not in (None, 1):
        raise ctx.fail(f"Shape must be rank 1 but is rank {rank}")
    return ctx.shape_from_tensor(i)


def _random_shape(ctx) -> TensorShape:
    return _shape_input(ctx, 0)


def _uniform_int_shape(ctx) -> TensorShape:
    for i, what in ((1, "minval"), (2, "maxval")):
        rank = ctx.input_shape(i).ndims
        if rank not in (None, 0):
            raise ctx.fail(f"{what} must be a scalar; got a tensor of shape "
                           f"{_fmt(ctx.input_dims(i))}")
    return _shape_input(ctx, 0)


def _multinomial_shape(ctx) -> TensorShape:
    logits = ctx.input_shape(0)
    if logits.ndims not in (None, 2):
        raise ctx.fail(f"Shape must be rank 2 but is rank {logits.ndims}")
    if ctx.input_shape(1).ndims not in (None, 0):
        raise ctx.fail(f"Shape must be rank 0 but is rank {ctx.input_shape(1).ndims}")
    n = ctx.constant_value(1)
    return TensorShape([logits[0].value if logits.ndims else None,
                        None if n is None else int(n)])


def _shape_then_param(ctx) -> TensorShape:
    """Gamma/Poisson: the sample shape followed by the parameter's shape."""
    return _shape_input(ctx, 0).concatenate(ctx.input_shape(1))


def _fmt(dims) -> str:
    if dims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


# -- op registrations (TF's random_ops.cc) ---------------------------------------------------
for _name in ("RandomStandardNormal", "RandomUniform", "TruncatedNormal"):
    register_op(_name, inputs=["shape: T"], outputs=["output: dtype"],
                attrs=_SEEDS + [f"dtype: {_FLOATS}", "T: {int32, int64}"],
                shape_fn=_random_shape, stateful=True)
register_op("RandomUniformInt", inputs=["shape: T", "minval: Tout", "maxval: Tout"],
            outputs=["output: Tout"], attrs=_SEEDS + ["Tout: {int32, int64}", "T: {int32, int64}"],
            shape_fn=_uniform_int_shape, stateful=True)
register_op("Multinomial", inputs=["logits: T", "num_samples: int32"],
            outputs=["output: output_dtype"],
            attrs=_SEEDS + ["T: realnumbertype", "output_dtype: {int32, int64} = DT_INT64"],
            shape_fn=_multinomial_shape, stateful=True)
register_op("RandomShuffle", inputs=["value: T"], outputs=["output: T"],
            attrs=_SEEDS + ["T: type"], shape_fn=unchanged, stateful=True)
register_op("RandomGamma", inputs=["shape: S", "alpha: T"], outputs=["output: T"],
            attrs=_SEEDS + ["S: {int32, int64}", "T: {half, float, double}"],
            shape_fn=_shape_then_param, stateful=True)
register_op("RandomPoisson", inputs=["shape: S", "rate: dtype"], outputs=["output: dtype"],
            attrs=_SEEDS + ["S: {int32, int64}", "dtype: {half, float, double}"],
            shape_fn=_shape_then_param, stateful=True)
register_op("RandomPoissonV2", inputs=["shape: S", "rate: R"], outputs=["output: dtype"],
            attrs=_SEEDS + ["S: {int32, int64}",
                            "R: {half, float, double, int32, int64} = DT_DOUBLE",
                            "dtype: {half, float, double, int32, int64} = DT_INT64"],
            shape_fn=_shape_then_param, stateful=True)


# -- seeds -----------------------------------------------------------------------------------
def _truncate_seed(seed: int) -> int:
    return seed % _MAXINT32


def get_seed(op_seed):
    """The (seed, seed2) pair a random op gets, by TF1's rules.

    Graph seed set: (graph seed, op seed or else the graph's op count — TF's `_last_id`).
    Only the op seed set: (DEFAULT_GRAPH_SEED, op seed). Neither: (None, None), i.e.
    nondeterministic. A resulting (0, 0) becomes (0, 2**31 - 1), since the kernels read (0, 0)
    as "unseeded".
    """
    graph = get_default_graph()
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = getattr(graph, "_last_id", graph.version)
        seeds = _truncate_seed(global_seed), _truncate_seed(op_seed)
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, _truncate_seed(op_seed)
    else:
        seeds = None, None
    if seeds == (0, 0):
        return 0, _MAXINT32
    return seeds


def set_random_seed(seed) -> None:
    """Sets the default graph's seed (TF1 `tf.set_random_seed`)."""
    get_default_graph().seed = seed


# -- wrappers --------------------------------------------------------------------------------
def _shape_tensor(shape):
    """TF's `tensor_util.shape_tensor`: an int32 (or int64 when needed) tensor named `shape`."""
    dtype = None
    if isinstance(shape, TensorShape):
        if not shape.is_fully_defined():
            raise ValueError(f"Cannot convert a partially known TensorShape to a Tensor: "
                             f"{shape}")
        shape = shape.as_list()
    if isinstance(shape, (tuple, list)):
        if not shape:
            dtype = dtypes.int32
        else:
            shape = tuple(dimension_value(d) for d in shape)
    return convert_to_tensor(shape, dtype=dtype, name="shape")


def _scaled(op_type, shape, mean, stddev, dtype, seed, name, default_name):
    """`op(shape) * stddev + mean` as TF builds random_normal and truncated_normal."""
    from tensorweave.ops import math_ops

    with op_name_scope(name, default_name, [shape, mean, stddev]) as ns:
        shape_tensor = _shape_tensor(shape)
        mean_tensor = convert_to_tensor(mean, dtype=dtype, name="mean")
        stddev_tensor = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        seed1, seed2 = get_seed(seed)
        rnd = apply_op(op_type, shape_tensor, dtype=dtype, seed=seed1, seed2=seed2)
        mul = rnd * stddev_tensor
        with ns.final() as final:
            return math_ops.add(mul, mean_tensor, name=final)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Samples from N(mean, stddev**2) of the given shape (TF1 `tf.random_normal`)."""
    return _scaled("RandomStandardNormal", shape, mean, stddev, dtype, seed, name,
                   "random_normal")


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None,
                     name=None):
    """Normal samples, redrawn while more than 2 stddevs from the mean."""
    return _scaled("TruncatedNormal", shape, mean, stddev, dtype, seed, name,
                   "truncated_normal")


_UNIFORM_TYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                  dtypes.int32, dtypes.int64)


def random_uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform samples in [minval, maxval) (TF1 `tf.random_uniform`).

    Raises:
      ValueError: an unsupported dtype, or an integer dtype without `maxval`.
    """
    from tensorweave.ops import math_ops

    dtype = dtypes.as_dtype(dtype)
    if dtype not in _UNIFORM_TYPES:
        raise ValueError(f"Invalid dtype {dtype!r}")
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with op_name_scope(name, "random_uniform", [shape, minval, maxval]) as ns:
        shape = _shape_tensor(shape)
        minval = convert_to_tensor(minval, dtype=dtype, name="min")
        maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        seed1, seed2 = get_seed(seed)
        if dtype.is_integer:
            with ns.final() as final:
                return apply_op("RandomUniformInt", shape, minval, maxval, seed=seed1,
                                seed2=seed2, name=final)
        rnd = apply_op("RandomUniform", shape, dtype=dtype, seed=seed1, seed2=seed2)
        scaled = rnd * (maxval - minval)
        with ns.final() as final:
            return math_ops.add(scaled, minval, name=final)


def multinomial(logits, num_samples, seed=None, name=None, output_dtype=None):
    """`num_samples` class indices per row of `logits` [batch, classes] (int64 by default)."""
    with name_scope(name, "multinomial", [logits]):
        return _multinomial(logits, num_samples, output_dtype, seed)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """TF `tf.random.categorical`: `multinomial` with a `dtype` argument."""
    with name_scope(name, "categorical", [logits]):
        return _multinomial(logits, num_samples, dtype, seed)


def _multinomial(logits, num_samples, dtype, seed):
    logits = convert_to_tensor(logits, name="logits")
    seed1, seed2 = get_seed(seed)
    return apply_op("Multinomial", logits, num_samples, seed=seed1, seed2=seed2,
                    output_dtype=dtype)


def random_shuffle(value, seed=None, name=None):
    """`value` with its first dimension randomly permuted."""
    seed1, seed2 = get_seed(seed)
    return apply_op("RandomShuffle", value, seed=seed1, seed2=seed2, name=name)


def random_crop(value, size, seed=None, name=None):
    """A random `size` slice of `value` (every dim of `size` must fit in `value`)."""
    from tensorweave.ops import array_ops, control_flow_ops, reduction_ops, slicing_ops

    with op_name_scope(name, "random_crop", [value, size]) as ns:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=dtypes.int32, name="size")
        shape = array_ops.shape(value)
        check = control_flow_ops.Assert(reduction_ops.reduce_all(shape >= size),
                                        ["Need value.shape >= size, got ", shape, size],
                                        summarize=1000)
        shape = _with_dependencies([check], shape)
        limit = shape - size + 1
        offset = random_uniform(array_ops.shape(shape), dtype=size.dtype,
                                maxval=size.dtype.max, seed=seed) % limit
        with ns.final() as final:
            return slicing_ops.slice(value, offset, size, name=final)


def _with_dependencies(dependencies, tensor):
    """TF's `control_flow_ops.with_dependencies`: `tensor` once `dependencies` have run."""
    graph = tensor.graph
    with op_name_scope(None, "control_dependency", list(dependencies) + [tensor]) as ns, \
            graph.colocate_with(tensor.op), graph.control_dependencies(dependencies), \
            ns.final() as final:
        return identity(tensor, name=final)


def random_gamma(shape, alpha, beta=None, dtype=dtypes.float32, seed=None, name=None):
    """Gamma(alpha, beta) samples of shape `shape + broadcast(alpha, beta).shape`."""
    from tensorweave.ops.creation_ops import zeros_like
    from tensorweave.ops.math_ops import maximum

    with name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape = convert_to_tensor(shape, name="shape", dtype=dtypes.int32)
        alpha = convert_to_tensor(alpha, name="alpha", dtype=dtype)
        beta = convert_to_tensor(beta if beta is not None else 1, name="beta", dtype=dtype)
        alpha_broadcast = alpha + zeros_like(beta)
        seed1, seed2 = get_seed(seed)
        sample = apply_op("RandomGamma", shape, alpha_broadcast, seed=seed1, seed2=seed2)
        tiny = np.finfo(dtypes.as_dtype(dtype).np_dtype).tiny
        return maximum(tiny, sample / beta)


def random_poisson(lam, shape, dtype=dtypes.float32, seed=None, name=None):
    """Poisson(lam) samples of shape `shape + lam.shape`."""
    with name_scope(name, "random_poisson", [lam, shape]):
        shape = convert_to_tensor(shape, name="shape", dtype=dtypes.int32)
        seed1, seed2 = get_seed(seed)
        return apply_op("RandomPoissonV2", shape, lam, dtype=dtype, seed=seed1, seed2=seed2)


# -- dropout ---------------------------------------------------------------------------------
def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """TF1 `tf.nn.dropout`: keeps each element with probability `keep_prob` (or `1 - rate`),
    scaling kept ones by `1 / keep_prob`: `x / keep_prob * floor(keep_prob + uniform)`.

    Raises:
      ValueError: both or neither of keep_prob/rate, a Python keep_prob outside (0, 1], or a
        non-floating `x`.
    """
    from tensorweave.ops.math_ops import div, floor

    keep_prob = _keep_prob(keep_prob, rate)
    with name_scope(name, "dropout", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"x has to be a floating point tensor since it's going to be "
                             f"scaled. Got a {x.dtype.name} tensor instead.")
        if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
            raise ValueError(f"keep_prob must be a scalar tensor or a float in the range "
                             f"(0, 1], got {keep_prob:g}")
        if isinstance(keep_prob, numbers.Real) and keep_prob == 1:
            return x
        keep_prob = convert_to_tensor(keep_prob, dtype=x.dtype, name="keep_prob")
        keep_prob.shape.assert_is_compatible_with(TensorShape([]))
        known = constant_value(keep_prob)
        if known is not None and known == 1:
            return x
        random_tensor = keep_prob + random_uniform(_noise_shape(x, noise_shape), seed=seed,
                                                   dtype=x.dtype)
        binary_tensor = floor(random_tensor)
        ret = div(x, keep_prob) * binary_tensor
        ret.set_shape(x.shape)
        return ret


def _keep_prob(keep_prob, rate):
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'rate' and 'keep_prob'.")
    if rate is not None:
        return 1 - rate
    if keep_prob is None:
        raise ValueError("You must provide a rate to dropout.")
    return keep_prob


def _noise_shape(x, noise_shape):
    """`noise_shape` with unknown dims filled from x's static shape (or `shape(x)`)."""
    from tensorweave.ops.array_ops import shape

    if noise_shape is None:
        return shape(x)
    try:
        given = TensorShape(noise_shape)
    except (TypeError, ValueError):
        return noise_shape
    dims, want = x.shape.as_tuple(), given.as_tuple()
    if dims is not None and want is not None and len(dims) == len(want):
        return TensorShape([d if w is None and d is not None else w
                            for d, w in zip(dims, want)])
    return noise_shape


# `tf.random.*` names (TF 1.15).
normal = random_normal
uniform = random_uniform
shuffle = random_shuffle
gamma = random_gamma
poisson = random_poisson

__all__ = [
    "random_normal", "truncated_normal", "random_uniform", "multinomial", "categorical",
    "random_shuffle", "random_crop", "random_gamma", "random_poisson", "set_random_seed",
    "get_seed", "dropout",
]
