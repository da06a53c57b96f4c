"""`tf.layers.BatchNormalization` / `batch_normalization`, as TF1 builds them.

Variables: `<scope>/gamma`, `beta` (trainable), `moving_mean`, `moving_variance`
(non-trainable, GLOBAL_VARIABLES only). 4-D (and 5-D) inputs normalized over axis 1 or the last
axis use one FusedBatchNormV3 op; other inputs use `moments` + `batchnorm` ops.

While training, the batch statistics normalize the batch and the moving averages move toward
them: `moving -= (moving - batch) * (1 - momentum)`, as the ops
`<scope>/AssignMovingAvg` (mean) and `<scope>/AssignMovingAvg_1` (variance), which go to
UPDATE_OPS. As in TF1, the fused path feeds FusedBatchNormV3's batch variance (unbiased,
n / (n - 1) times the biased one) to the moving variance, and the non-fused path the biased
`moments` variance. Run the update ops with the train op:

    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss)
"""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import init_ops
from tensorweave.shapes import TensorShape
from tensorweave.training.layers.base import Layer
from tensorweave.training.layers.utils import (
    InputSpec,
    constant_value,
    get_initializer,
    smart_cond,
)

_FUSED_DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32)


def validate_axis(axis, input_shape) -> list[int]:
    """`axis` (int or list) as a list of non-negative axes of `input_shape`.

    Raises:
      ValueError: unknown rank, an axis out of range, or a duplicate axis.
    """
    rank = TensorShape(input_shape).ndims
    if not rank:
        raise ValueError(f"Input has undefined rank. Received: input_shape={input_shape}")
    axes = [axis] if isinstance(axis, int) else list(axis)
    axes = [a + rank if a < 0 else a for a in axes]
    for a in axes:
        if a < 0 or a >= rank:
            raise ValueError(f"Invalid value for `axis` argument. Expected 0 <= axis < "
                             f"inputs.rank (with inputs.rank={rank}). Received: "
                             f"axis={tuple(axes)}")
    if len(axes) != len(set(axes)):
        raise ValueError(f"Duplicate axis: {tuple(axes)}")
    return axes


class BatchNormalization(Layer):
    """Normalizes inputs per feature (`axis`) with batch statistics while training
    (`training=True` or a true bool tensor) and with the moving averages otherwise.

    Raises:
      TypeError: `axis` is neither an int nor a list of ints.
      ValueError: (on first call) an undefined rank or `axis` dimension; bad renorm_clipping
        keys.
      NotImplementedError: `virtual_batch_size` or `adjustment`.
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=None, gamma_initializer=None,
                 moving_mean_initializer=None, moving_variance_initializer=None,
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None,
                 adjustment=None, name=None, **kwargs):
        super().__init__(trainable=trainable, name=name, **kwargs)
        if not isinstance(axis, (int, list, tuple)):
            raise TypeError(f"Expected an int or a list/tuple of ints for the argument "
                            f"'axis', but received: {axis!r}")
        if virtual_batch_size is not None or adjustment is not None:
            raise NotImplementedError("BatchNormalization: virtual_batch_size and adjustment "
                                      "are not supported")
        self.axis = axis if isinstance(axis, int) else list(axis)
        self.momentum, self.epsilon = momentum, epsilon
        self.center, self.scale = center, scale
        zeros, ones = init_ops.zeros_initializer, init_ops.ones_initializer
        self.beta_initializer = get_initializer(beta_initializer) or zeros()
        self.gamma_initializer = get_initializer(gamma_initializer) or ones()
        self.moving_mean_initializer = get_initializer(moving_mean_initializer) or zeros()
        self.moving_variance_initializer = \
            get_initializer(moving_variance_initializer) or ones()
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.renorm = renorm
        if renorm:
            renorm_clipping = dict(renorm_clipping or {})
            unknown = set(renorm_clipping) - {"rmax", "rmin", "dmax"}
            if unknown:
                raise ValueError(f"Received invalid keys for `renorm_clipping` argument: "
                                 f"{renorm_clipping}. Supported values: "
                                 "['rmax', 'rmin', 'dmax'].")
            self.renorm_clipping, self.renorm_momentum = renorm_clipping, renorm_momentum
        self.fused = True if fused is None else fused  # NOTE: TF1 layers decide in build()
        self.gamma = self.beta = None
        self.moving_mean = self.moving_variance = None

    # -- build ------------------------------------------------------------------------------
    def _fused_can_be_used(self, rank: int) -> bool:
        if self.renorm or len(self.axis) != 1:
            return False
        if (self.dtype or dtypes.float32) not in _FUSED_DTYPES:
            return False
        return self.axis[0] in (1, rank - 1)

    def build(self, input_shape) -> None:
        input_shape = TensorShape(input_shape)
        self.axis = validate_axis(self.axis, input_shape)
        rank = input_shape.ndims
        if self.fused:
            self.fused = rank in (4, 5) and self._fused_can_be_used(rank)
        if self.fused:
            first = self.axis == [1]
            self._data_format = ("NCHW" if first else "NHWC") if rank == 4 else \
                ("NCDHW" if first else "NDHWC")
        dims = input_shape.as_tuple()
        axis_to_dim = {a: dims[a] for a in self.axis}
        for dim in axis_to_dim.values():
            if dim is None:
                raise ValueError(f"Input has undefined `axis` dimension. Received input with "
                                 f"shape {tuple(dims)} and axis={tuple(self.axis)}")
        self.input_spec = InputSpec(ndim=rank, axes=axis_to_dim)
        if len(axis_to_dim) == 1:
            self._param_shape = [next(iter(axis_to_dim.values()))]
        else:
            self._param_shape = [axis_to_dim.get(i, 1) for i in range(rank)]
        self._add_weights()
        self.built = True

    @property
    def _param_dtype(self):
        if self.dtype in (dtypes.float16, dtypes.bfloat16):
            return dtypes.float32
        return self.dtype or dtypes.float32

    def _add_weights(self) -> None:
        shape, dtype = self._param_shape, self._param_dtype
        if self.scale:
            self.gamma = self.add_weight(
                "gamma", shape=shape, dtype=dtype, initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer, constraint=self.gamma_constraint,
                trainable=True)
        if self.center:
            self.beta = self.add_weight(
                "beta", shape=shape, dtype=dtype, initializer=self.beta_initializer,
                regularizer=self.beta_regularizer, constraint=self.beta_constraint,
                trainable=True)
        scope = self._scope
        partitioner = scope.partitioner if scope is not None else None
        if partitioner:
            scope.set_partitioner(None)  # NOTE: moving statistics are never partitioned
        try:
            self.moving_mean = self._stat("moving_mean", self.moving_mean_initializer)
            self.moving_variance = self._stat("moving_variance",
                                              self.moving_variance_initializer)
            if self.renorm:
                self._add_renorm_weights()
        finally:
            if partitioner:
                scope.set_partitioner(partitioner)

    def _stat(self, name: str, initializer):
        return self.add_weight(name, shape=self._param_shape, dtype=self._param_dtype,
                               initializer=initializer, trainable=False)

    def _add_renorm_weights(self) -> None:
        from tensorweave.ops import math_ops

        variance_init = self.moving_variance_initializer

        def stddev_init(*args, **kwargs):
            return math_ops.sqrt(variance_init(*args, **kwargs))

        self.moving_stddev = self._stat("moving_stddev", stddev_init)
        self.renorm_mean = self._stat("renorm_mean", self.moving_mean_initializer)
        self.renorm_stddev = self._stat("renorm_stddev", stddev_init)

    # -- call -------------------------------------------------------------------------------
    def call(self, inputs, training=False):
        if self.fused:
            return self._fused_batch_norm(inputs, training)
        return self._batch_norm(inputs, training)

    def _assign_moving_average(self, variable, value, momentum):
        """`variable -= (variable - value) * (1 - momentum)`, an AssignSub named
        `AssignMovingAvg` (made unique) in the current name scope."""
        from tensorweave.ops import math_ops, state_ops

        graph = get_default_graph()
        with graph.name_scope("AssignMovingAvg") as scope, graph.colocate_with(variable):
            decay = convert_to_tensor(1.0 - momentum, name="decay")
            base = variable.dtype.base_dtype
            if decay.dtype.base_dtype != base:
                decay = math_ops.cast(decay, base)
            delta = (variable - math_ops.cast(value, base)) * decay
            return state_ops.assign_sub(variable, delta, name=scope)

    def _assign_new_value(self, variable, value):
        from tensorweave.ops import state_ops

        graph = get_default_graph()
        with graph.name_scope("AssignNewValue") as scope, graph.colocate_with(variable):
            return state_ops.assign(variable, value, name=scope)

    def _fused_batch_norm(self, inputs, training):
        from tensorweave.ops import nn_norm
        from tensorweave.ops.constant_op import constant

        shape, dtype = self._param_shape, self._param_dtype
        beta = self.beta if self.center else constant(0.0, dtype=dtype, shape=shape)
        gamma = self.gamma if self.scale else constant(1.0, dtype=dtype, shape=shape)

        def train():
            return nn_norm.fused_batch_norm(
                inputs, gamma, beta, mean=self.moving_mean, variance=self.moving_variance,
                epsilon=self.epsilon, is_training=True, data_format=self._data_format)

        def infer():
            return nn_norm.fused_batch_norm(
                inputs, gamma, beta, mean=self.moving_mean, variance=self.moving_variance,
                epsilon=self.epsilon, is_training=False, data_format=self._data_format)

        output, mean, variance = smart_cond(training, train, infer)
        training_value = constant_value(training)
        if training_value or training_value is None:
            if training_value is None:
                momentum = smart_cond(training, lambda: self.momentum, lambda: 1.0)
            else:
                momentum = convert_to_tensor(self.momentum)
            self.add_update(lambda: self._assign_moving_average(self.moving_mean, mean,
                                                                momentum))
            self.add_update(lambda: self._assign_moving_average(self.moving_variance,
                                                                variance, momentum))
        return output

    def _batch_norm(self, inputs, training):
        """The non-fused path: `moments` over the non-`axis` axes and `batchnorm` ops."""
        from tensorweave.ops import math_ops, nn_norm

        inputs_dtype = inputs.dtype.base_dtype
        if inputs_dtype in (dtypes.float16, dtypes.bfloat16):
            inputs = math_ops.cast(inputs, dtypes.float32)
        ndims = inputs.shape.ndims
        reduction_axes = [i for i in range(ndims) if i not in self.axis]
        broadcast_shape = [1] * ndims
        broadcast_shape[self.axis[0]] = inputs.shape.as_tuple()[self.axis[0]]

        def _broadcast(v):
            if v is not None and v.shape.ndims != ndims \
                    and reduction_axes != list(range(ndims - 1)):
                from tensorweave.ops import array_ops

                return array_ops.reshape(v, broadcast_shape)
            return v

        scale, offset = _broadcast(self.gamma), _broadcast(self.beta)
        if constant_value(training) is False:
            mean, variance = self.moving_mean, self.moving_variance
        else:
            mean, variance, scale, offset = self._training_moments(
                inputs, training, reduction_axes, scale, offset, _broadcast)
        mean = math_ops.cast(mean, inputs.dtype)
        variance = math_ops.cast(variance, inputs.dtype)
        if offset is not None:
            offset = math_ops.cast(offset, inputs.dtype)
        if scale is not None:
            scale = math_ops.cast(scale, inputs.dtype)
        outputs = nn_norm.batch_normalization(inputs, _broadcast(mean), _broadcast(variance),
                                              offset, scale, self.epsilon)
        if inputs_dtype in (dtypes.float16, dtypes.bfloat16):
            outputs = math_ops.cast(outputs, inputs_dtype)
        outputs.set_shape(inputs.shape)
        return outputs

    def _training_moments(self, inputs, training, reduction_axes, scale, offset, _broadcast):
        """Batch (or, for a run-time `training`, selected) statistics plus the moving-average
        updates; with renorm also the corrected scale and offset."""
        from tensorweave.ops import array_ops, nn_norm

        keep_dims = len(self.axis) > 1
        mean, variance = nn_norm.moments(inputs, reduction_axes, keep_dims=keep_dims)
        moving_mean, moving_variance = self.moving_mean, self.moving_variance
        mean = smart_cond(training, lambda: mean, lambda: convert_to_tensor(moving_mean))
        variance = smart_cond(training, lambda: variance,
                              lambda: convert_to_tensor(moving_variance))
        new_mean, new_variance = mean, variance
        if self.renorm:
            r, d, new_mean, new_variance = self._renorm_correction_and_moments(
                new_mean, new_variance, training)
            r = _broadcast(array_ops.stop_gradient(r, name="renorm_r"))
            d = _broadcast(array_ops.stop_gradient(d, name="renorm_d"))
            scale, offset = _compose_transforms(r, d, scale, offset)

        def mean_update():
            return smart_cond(
                training,
                lambda: self._assign_moving_average(moving_mean, new_mean, self.momentum),
                lambda: moving_mean)

        def variance_update():
            if self.renorm:
                true_branch = lambda: self._renorm_variance_update(new_variance)  # noqa: E731
            else:
                true_branch = lambda: self._assign_moving_average(  # noqa: E731
                    moving_variance, new_variance, self.momentum)
            return smart_cond(training, true_branch, lambda: moving_variance)

        self.add_update(mean_update)
        self.add_update(variance_update)
        return mean, variance, scale, offset

    # -- batch renormalization --------------------------------------------------------------
    def _renorm_variance_update(self, new_variance):
        from tensorweave.ops import math_ops, nn_ops

        stddev = self._assign_moving_average(
            self.moving_stddev, math_ops.sqrt(new_variance + self.epsilon), self.momentum)
        return self._assign_new_value(self.moving_variance,
                                      nn_ops.relu(stddev * stddev - self.epsilon))

    def _renorm_correction_and_moments(self, mean, variance, training):
        """(r, d, mean, variance): the renorm corrections, and the statistics made to wait
        for the renorm averages' updates."""
        import math

        from tensorweave.framework.scopes import control_dependencies
        from tensorweave.ops import array_ops, creation_ops, math_ops

        stddev = math_ops.sqrt(variance + self.epsilon)
        renorm_stddev = math_ops.maximum(self.renorm_stddev, math.sqrt(self.epsilon))
        r = stddev / renorm_stddev
        d = (mean - self.renorm_mean) / renorm_stddev
        with control_dependencies([r, d]):
            mean = array_ops.identity(mean)
            stddev = array_ops.identity(stddev)
        r, d = self._clip_renorm(r, d)
        r = smart_cond(training, lambda: r, lambda: creation_ops.ones_like(r))
        d = smart_cond(training, lambda: d, lambda: creation_ops.zeros_like(d))
        new_mean = self._update_renorm_variable(self.renorm_mean, mean, training)
        new_stddev = self._update_renorm_variable(self.renorm_stddev, stddev, training)
        with control_dependencies([new_mean, new_stddev]):
            return r, d, array_ops.identity(mean), array_ops.identity(variance)

    def _clip_renorm(self, r, d):
        from tensorweave.ops import math_ops

        rmin, rmax, dmax = (self.renorm_clipping.get(k) for k in ("rmin", "rmax", "dmax"))
        if rmin is not None:
            r = math_ops.maximum(r, rmin)
        if rmax is not None:
            r = math_ops.minimum(r, rmax)
        if dmax is not None:
            d = math_ops.minimum(math_ops.maximum(d, -dmax), dmax)
        return r, d

    def _update_renorm_variable(self, var, value, training):
        from tensorweave.ops import array_ops

        value = array_ops.identity(value)
        return smart_cond(
            training,
            lambda: self._assign_moving_average(var, value, self.renorm_momentum),
            lambda: array_ops.identity(var))

    def compute_output_shape(self, input_shape) -> TensorShape:
        return TensorShape(input_shape)


def _compose_transforms(scale, offset, then_scale, then_offset):
    if then_scale is not None:
        scale = scale * then_scale
        offset = offset * then_scale
    if then_offset is not None:
        offset = offset + then_offset
    return scale, offset


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=None, gamma_initializer=None,
                        moving_mean_initializer=None, moving_variance_initializer=None,
                        beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                        gamma_constraint=None, training=False, trainable=True, name=None,
                        reuse=None, renorm=False, renorm_clipping=None, renorm_momentum=0.99,
                        fused=None, virtual_batch_size=None, adjustment=None):
    """TF1 `tf.layers.batch_normalization`. Remember to run the UPDATE_OPS:

        x = tf.layers.batch_normalization(x, training=is_training)
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train_op = optimizer.minimize(loss)
    """
    layer = BatchNormalization(
        axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
        beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer,
        moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
        beta_constraint=beta_constraint, gamma_constraint=gamma_constraint, renorm=renorm,
        renorm_clipping=renorm_clipping, renorm_momentum=renorm_momentum, fused=fused,
        trainable=trainable, virtual_batch_size=virtual_batch_size, adjustment=adjustment,
        name=name, _reuse=reuse, _scope=name)
    return layer.apply(inputs, training=training)


__all__ = ["BatchNormalization", "batch_normalization"]
