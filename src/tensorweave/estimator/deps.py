"""The TF-named pieces the estimator builds on, imported from their home modules (the
estimator sits below the public namespace, so it cannot import `tensorweave` itself).
`tf` mirrors the few `tf.*` names the estimator code uses, so that code reads as TF's."""

from __future__ import annotations

from types import SimpleNamespace

from tensorweave import dtypes
from tensorweave import feature_column as _feature_column
from tensorweave.data.dataset import Dataset
from tensorweave.estimator.model_fn import ModeKeys
from tensorweave.formats.checkpoint.state import latest_checkpoint
from tensorweave.framework import graph as _graph
from tensorweave.framework.scopes import control_dependencies, name_scope
from tensorweave.monitoring.summary.writer import FileWriterCache
from tensorweave.ops import lookup_tables
from tensorweave.ops.array_ops import expand_dims, reshape
from tensorweave.ops.control_flow_ops import group
from tensorweave.ops.creation_ops import zeros_like
from tensorweave.ops.init_ops import glorot_uniform_initializer
from tensorweave.ops.joining_ops import concat
from tensorweave.ops.math_ops import add, cast, maximum, sigmoid
from tensorweave.ops.nn_losses import sigmoid_cross_entropy_with_logits
from tensorweave.ops.nn_ops import relu, softmax
from tensorweave.ops.random_ops import set_random_seed
from tensorweave.ops.reduction_ops import argmax
from tensorweave.ops.state_ops import assign_add
from tensorweave.ops.string_ops import as_string
from tensorweave.ops.summary_ops import scalar
from tensorweave.ops.variable_scope import (
    get_global_step,
    get_or_create_global_step,
    variable_scope,
)
from tensorweave.proto.summary_pb2 import Summary
from tensorweave.training import losses, metrics
from tensorweave.training.checkpoint_utils import list_variables, load_variable
from tensorweave.training.device_setter import replica_device_setter
from tensorweave.training.hooks.basic import (
    FinalOpsHook,
    LoggingTensorHook,
    NanTensorHook,
    StopAtStepHook,
)
from tensorweave.training.hooks.checkpoint import CheckpointSaverHook
from tensorweave.training.layers.core import dense, dropout
from tensorweave.training.monitored_session import (
    ChiefSessionCreator,
    MonitoredSession,
    MonitoredTrainingSession,
)
from tensorweave.training.optimizer import Optimizer
from tensorweave.training.optimizers.adagrad import AdagradOptimizer
from tensorweave.training.optimizers.adam import AdamOptimizer
from tensorweave.training.optimizers.ftrl import FtrlOptimizer
from tensorweave.training.optimizers.gradient_descent import GradientDescentOptimizer
from tensorweave.training.optimizers.rmsprop import RMSPropOptimizer
from tensorweave.training.saver import Saver
from tensorweave.training.scaffold import Scaffold

tf = SimpleNamespace(
    Graph=_graph.Graph, GraphKeys=_graph.GraphKeys, Summary=Summary,
    add=add, add_to_collection=_graph.add_to_collection, argmax=argmax, as_string=as_string,
    assign_add=assign_add, cast=cast, concat=concat, control_dependencies=control_dependencies,
    expand_dims=expand_dims, get_collection=_graph.get_collection,
    glorot_uniform_initializer=glorot_uniform_initializer, group=group, maximum=maximum,
    name_scope=name_scope, reshape=reshape, set_random_seed=set_random_seed, sigmoid=sigmoid,
    zeros_like=zeros_like, variable_scope=variable_scope, float32=dtypes.float32,
    int64=dtypes.int64, metrics=metrics, losses=losses, feature_column=_feature_column,
    data=SimpleNamespace(Dataset=Dataset),
    estimator=SimpleNamespace(ModeKeys=ModeKeys),
    contrib=SimpleNamespace(lookup=lookup_tables),
    layers=SimpleNamespace(dense=dense, dropout=dropout),
    nn=SimpleNamespace(relu=relu, softmax=softmax,
                       sigmoid_cross_entropy_with_logits=sigmoid_cross_entropy_with_logits),
    summary=SimpleNamespace(FileWriterCache=FileWriterCache, scalar=scalar),
    train=SimpleNamespace(
        CheckpointSaverHook=CheckpointSaverHook, ChiefSessionCreator=ChiefSessionCreator,
        FinalOpsHook=FinalOpsHook, LoggingTensorHook=LoggingTensorHook,
        MonitoredSession=MonitoredSession, MonitoredTrainingSession=MonitoredTrainingSession,
        NanTensorHook=NanTensorHook, Optimizer=Optimizer, Saver=Saver, Scaffold=Scaffold,
        StopAtStepHook=StopAtStepHook, get_global_step=get_global_step,
        get_or_create_global_step=get_or_create_global_step,
        latest_checkpoint=latest_checkpoint, list_variables=list_variables,
        load_variable=load_variable, replica_device_setter=replica_device_setter,
        AdagradOptimizer=AdagradOptimizer,
        AdamOptimizer=AdamOptimizer, FtrlOptimizer=FtrlOptimizer,
        GradientDescentOptimizer=GradientDescentOptimizer, RMSPropOptimizer=RMSPropOptimizer),
)
