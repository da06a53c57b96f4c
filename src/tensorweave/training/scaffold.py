"""`tf.train.Scaffold`: the ops a monitored session needs to initialize, check readiness,
summarize and save a model, each taken from its collection or built by default."""

from __future__ import annotations

import logging

from tensorweave.framework.graph import (
    GraphKeys,
    add_to_collection,
    get_collection,
    get_default_graph,
)
from tensorweave.ops.control_flow_ops import group
from tensorweave.ops.joining_ops import concat
from tensorweave.ops.summary_ops import merge_all
from tensorweave.ops.variables import (
    global_variables,
    global_variables_initializer,
    local_variables_initializer,
    report_uninitialized_variables,
)
from tensorweave.training.saver import Saver

_log = logging.getLogger("tensorweave")


def get_saver_or_default():
    """The one Saver in the SAVERS collection, else a new sharded, allow_empty one added there.

    Raises:
      RuntimeError: the collection holds more than one Saver.
    """
    savers = get_collection(GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please "
                               "indicate which one to use by passing it to the constructor.")
        return savers[0]
    saver = Saver(sharded=True, allow_empty=True)
    add_to_collection(GraphKeys.SAVERS, saver)
    return saver


def _default_init_op():
    return group(global_variables_initializer(), *get_collection("saved_model_initializers"))


def _default_ready_op():
    return concat([report_uninitialized_variables()], 0)


def _default_ready_for_local_init_op():
    return concat([report_uninitialized_variables(global_variables())], 0)


class Scaffold:
    """Holds init_op, ready_op, ready_for_local_init_op, local_init_op, summary_op and saver;
    `finalize()` fills each missing one (from its collection, else a default), builds the saver
    and finalizes the graph.

    `init_fn(scaffold, session)` runs after init_op when the session is not restored.

    Raises (finalize):
      RuntimeError: a collection holds more than one candidate.
    """

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            pick = lambda mine, name: mine if mine is not None else getattr(  # noqa: E731
                copy_from_scaffold, name)
            init_op, init_feed_dict = pick(init_op, "init_op"), pick(init_feed_dict,
                                                                     "init_feed_dict")
            init_fn = pick(init_fn, "_user_init_fn")
            ready_op = pick(ready_op, "ready_op")
            ready_for_local_init_op = pick(ready_for_local_init_op, "ready_for_local_init_op")
            local_init_op = pick(local_init_op, "local_init_op")
            local_init_feed_dict = pick(local_init_feed_dict, "local_init_feed_dict")
            summary_op, saver = pick(summary_op, "summary_op"), pick(saver, "saver")
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op, self._init_feed_dict = init_op, init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op, self._local_init_feed_dict = local_init_op, local_init_feed_dict
        self._summary_op, self._saver = summary_op, saver

    def finalize(self) -> Scaffold:
        """Creates the missing ops, builds the saver, finalizes the default graph."""
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default("init_op", GraphKeys.INIT_OP,
                                                    _default_init_op)
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default("ready_op", GraphKeys.READY_OP,
                                                     _default_ready_op)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                _default_ready_for_local_init_op)
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op)
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP,
                                                       merge_all)
        if self._saver is None:
            self._saver = get_saver_or_default()
        self._saver.build()
        get_default_graph().finalize()
        _log.info("Graph was finalized.")
        return self

    init_fn = property(lambda self: self._init_fn)
    init_op = property(lambda self: self._init_op)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    local_init_op = property(lambda self: self._local_init_op)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    local_init_feed_dict = property(lambda self: self._local_init_feed_dict)

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The one item of `collection_key`, else `default_constructor()` (added there).

        Raises:
          RuntimeError: the collection holds more than one item.
        """
        elements = get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(
                    f'More than one item in the collection "{collection_key}". Please indicate '
                    "which one to use by passing it to the tf.Scaffold constructor as:  "
                    f"tf.Scaffold({arg_name}=item to use)")
            return elements[0]
        op = default_constructor()
        if op is not None:
            add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """Initializes local variables and lookup tables (TABLE_INITIALIZERS)."""
        return group(local_variables_initializer(), *get_collection(GraphKeys.TABLE_INITIALIZERS))
