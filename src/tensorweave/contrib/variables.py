"""`tf.contrib.framework`'s variable helpers (TF 1.15's contrib/framework variables.py):
`variable` / `model_variable` (arg_scope-able `get_variable`s; model variables also go to
MODEL_VARIABLES), the collection queries `get_variables*`, and `get_variables_to_restore` /
`assign_from_checkpoint_fn` for restoring part of a model from a checkpoint."""

from __future__ import annotations

from tensorweave import dtypes
from tensorweave.contrib.arg_scope import add_arg_scope
from tensorweave.framework.graph import GraphKeys, get_collection
from tensorweave.framework.scopes import device as device_scope
from tensorweave.ops import variable_scope as vs
from tensorweave.tf_logging import warning


@add_arg_scope
def variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=True,
             collections=None, caching_device=None, device=None, partitioner=None,
             custom_getter=None, use_resource=None, **kwargs):
    """`tf.get_variable` in GLOBAL_VARIABLES (or `collections`), on `device` if given."""
    collections = list(dict.fromkeys(
        collections if collections is not None else [GraphKeys.GLOBAL_VARIABLES]))
    getter = custom_getter or vs.get_variable
    with device_scope(device or ""):
        return getter(name, shape=shape, dtype=dtype, initializer=initializer,
                      regularizer=regularizer, trainable=trainable, collections=collections,
                      caching_device=caching_device, partitioner=partitioner,
                      use_resource=use_resource, **kwargs)


@add_arg_scope
def model_variable(name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None,
                   trainable=True, collections=None, caching_device=None, device=None,
                   partitioner=None, custom_getter=None, use_resource=None, **kwargs):
    """`variable` also added to GLOBAL_VARIABLES and MODEL_VARIABLES."""
    collections = list(collections or [])
    collections += [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    return variable(name, shape=shape, dtype=dtype, initializer=initializer,
                    regularizer=regularizer, trainable=trainable, collections=collections,
                    caching_device=caching_device, device=device, partitioner=partitioner,
                    custom_getter=custom_getter, use_resource=use_resource, **kwargs)


def add_model_variable(var) -> None:
    """Adds `var` to MODEL_VARIABLES (once)."""
    from tensorweave.framework.graph import add_to_collection

    if not any(v is var for v in get_collection(GraphKeys.MODEL_VARIABLES)):
        add_to_collection(GraphKeys.MODEL_VARIABLES, var)


def get_variables(scope=None, suffix=None, collection=GraphKeys.GLOBAL_VARIABLES) -> list:
    """Variables of `collection` whose names match `scope` (a regex from the start, or a
    VariableScope) followed anywhere by `suffix` (a name ending, `:` appended)."""
    if isinstance(scope, vs.VariableScope):
        scope = scope.name
    if suffix is not None:
        if ":" not in suffix:
            suffix += ":"
        scope = (scope or "") + ".*" + suffix
    return get_collection(collection, scope)


def get_model_variables(scope=None, suffix=None) -> list:
    return get_variables(scope, suffix, GraphKeys.MODEL_VARIABLES)


def get_local_variables(scope=None, suffix=None) -> list:
    return get_variables(scope, suffix, GraphKeys.LOCAL_VARIABLES)


def get_trainable_variables(scope=None, suffix=None) -> list:
    return get_variables(scope, suffix, GraphKeys.TRAINABLE_VARIABLES)


def get_variables_by_suffix(suffix, scope=None) -> list:
    return get_variables(scope=scope, suffix=suffix)


def get_variables_by_name(given_name, scope=None) -> list:
    """Variables whose short name is `given_name` (`.../given_name:0` or `given_name:0`)."""
    return get_variables(scope=scope, suffix=f"/{given_name}:|^{given_name}:")


def get_unique_variable(var_op_name):
    """The one variable named `var_op_name`.

    Raises:
      ValueError: none, or more than one, has that name.
    """
    candidates = get_variables(scope=var_op_name)
    if not candidates:
        raise ValueError(f"Couldn't find variable {var_op_name}")
    for candidate in candidates:
        if candidate.op.name == var_op_name:
            return candidate
    raise ValueError(f"Variable {var_op_name} does not uniquely identify a variable")


def _scoped(names, what: str) -> list:
    if not isinstance(names, (list, tuple)):
        raise TypeError(f"{what} is provided but is not a list or a tuple.")
    found: list = []
    for scope in names:
        found += get_variables(scope)
    return found


def get_variables_to_restore(include=None, exclude=None) -> list:
    """GLOBAL_VARIABLES under the `include` scopes (all if None) minus those under `exclude`.

    Raises:
      TypeError: `include` or `exclude` is not a list or tuple.
    """
    chosen = get_variables() if include is None else _scoped(include, "include")
    dropped = _scoped(exclude, "exclude") if exclude is not None else []
    return [v for v in chosen if not any(v is d for d in dropped)]


def assign_from_checkpoint_fn(model_path, var_list, ignore_missing_vars=False,
                              reshape_variables=False):
    """A `fn(session)` restoring `var_list` (a list, or {checkpoint name: variable}) from
    `model_path`; with `ignore_missing_vars`, names absent from the checkpoint are skipped
    with a warning (None when nothing is left).

    Raises:
      ValueError: `var_list` is empty.
    """
    from tensorweave.training.checkpoint_utils import load_checkpoint
    from tensorweave.training.saver import Saver

    if not var_list:
        raise ValueError("var_list cannot be empty")
    if ignore_missing_vars:
        reader = load_checkpoint(model_path)
        named = var_list if isinstance(var_list, dict) else {v.op.name: v for v in var_list}
        var_list = {}
        for name, var in named.items():
            if reader.has_tensor(name):
                var_list[name] = var
            else:
                warning("Variable %s missing in checkpoint %s", name, model_path)
    if not var_list:
        warning("No Variables to restore")
        return None
    saver = Saver(var_list, reshape=reshape_variables)

    def callback(session):
        return saver.restore(session, model_path)

    return callback


def _grouped(var_list) -> dict:
    """{checkpoint name: [variables]} from a list (by op name) or a dict."""
    if isinstance(var_list, (tuple, list)):
        grouped: dict = {}
        for var in var_list:
            grouped.setdefault(var.op.name, []).append(var)
        return grouped
    return {name: list(v) if isinstance(v, (tuple, list)) else [v]
            for name, v in var_list.items()}


def assign_from_checkpoint(model_path, var_list, ignore_missing_vars=False):
    """`(assign_op, feed_dict)`: running the op with the feed assigns each variable its
    checkpoint value (read now, fed through `placeholder/<var name>`).

    Raises:
      ValueError: a name missing from the checkpoint (unless ignore_missing_vars), or a
        shape that differs from the checkpoint's.
    """
    from tensorweave.ops import control_flow_ops
    from tensorweave.ops.array_ops import placeholder
    from tensorweave.training.checkpoint_utils import load_checkpoint

    reader = load_checkpoint(model_path)
    feed_dict, assign_ops = {}, []
    for name, variables in _grouped(var_list).items():
        if not reader.has_tensor(name):
            message = f"Checkpoint is missing variable [{name}]"
            if not ignore_missing_vars:
                raise ValueError(message)
            warning(message)
            continue
        value = reader.get_tensor(name)
        for var in variables:
            ph = placeholder(var.dtype.base_dtype, shape=var.shape,
                             name="placeholder/" + var.op.name)
            assign_ops.append(var.assign(ph))
            if var.shape.as_list() != list(value.shape):
                raise ValueError(f"Total size of new array must be unchanged for {name} "
                                 f"lh_shape: [{value.shape}], rh_shape: [{var.shape}]")
            feed_dict[ph] = value
    return control_flow_ops.group(*assign_ops), feed_dict


__all__ = [
    "add_model_variable", "assign_from_checkpoint", "assign_from_checkpoint_fn",
    "get_local_variables", "get_model_variables", "get_trainable_variables",
    "get_unique_variable", "get_variables", "get_variables_by_name", "get_variables_by_suffix",
    "get_variables_to_restore", "model_variable", "variable",
]
