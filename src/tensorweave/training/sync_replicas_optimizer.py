"""`tf.train.SyncReplicasOptimizer`: synchronous data-parallel training over replicas.

Every replica (worker) computes gradients on its own batch and adds them to one conditional
accumulator per variable (shared by name, colocated with the variable). The chief's queue
runner takes `replicas_to_aggregate` gradients from each accumulator (stale ones, computed
before the current global step, are dropped), applies their mean with the wrapped optimizer,
advances the global step and puts one token per replica into `sync_token_q`. A replica's
train op applies its gradients, then dequeues a token (the new global step) into its
`local_step`: so a replica waits for the step to finish before computing the next gradients,
and with `total_num_replicas > replicas_to_aggregate` the slowest replicas' gradients are
dropped (backup workers).

    opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                         replicas_to_aggregate=2, total_num_replicas=2)
    train_op = opt.minimize(loss, global_step=global_step)
    # chief, once variables are initialized:
    sess.run([opt.local_step_init_op, opt.chief_init_op]); sess.run(opt.get_init_tokens_op())
    opt.get_chief_queue_runner().create_threads(sess, coord, start=True)
    # every replica (others run `opt.local_step_init_op` first):
    sess.run(train_op)

Op and variable names are TF1's: `sync_rep_local_step`, `sync_replicas/conditional_accumulator`,
`sync_replicas/AccumulatorApplyGradient`, `sync_token_q`, `sync_token_q_Dequeue` ...
"""

from __future__ import annotations

import logging

from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.framework.operation import Tensor
from tensorweave.training.optimizer import Optimizer, is_indexed_slices

__all__ = ["SyncReplicasOptimizer"]

_LOG = logging.getLogger("tensorweave")


class SyncReplicasOptimizer(Optimizer):
    """Aggregates the gradients of `replicas_to_aggregate` replicas per step, then applies
    them with `opt` (TF1's signature and op names).

    Args:
      opt: the optimizer applying the aggregated gradients.
      replicas_to_aggregate: gradients averaged per step.
      total_num_replicas: replicas running (default `replicas_to_aggregate`); more replicas
        than aggregated ones are backup workers.
      variable_averages: an `ExponentialMovingAverage` applied after each step, or None.
      variables_to_average: the variables it averages.
      use_locking: passed to the Optimizer base class.
      name: the name scope of the accumulators ("sync_replicas").
    """

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        _LOG.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
                  replicas_to_aggregate, total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._gradients_applied = False
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list: list = []

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's `compute_gradients`."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """This replica's train op: adds its gradients to the accumulators, then waits for a
        token and stores it in `local_step`. Also builds the chief's ops (`chief_init_op`,
        the queue runner, `local_step_init_op`, `ready_for_local_init_op`).

        Raises:
          ValueError: empty `grads_and_vars`, no `global_step`, or a gradient of unknown kind.
        """
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        graph = get_default_graph()
        self._make_local_step(graph, global_step)
        with graph.name_scope(self._name):
            train_ops, aggregated, var_list = self._accumulate(graph, grads_and_vars)
            with graph.device(global_step.device), graph.name_scope(""):
                update_op = self._opt.apply_gradients(zip(aggregated, var_list), global_step)
            train_op = self._token_ops(graph, global_step, train_ops, update_op)
            self._make_chief_init_op(graph, global_step)
        self._gradients_applied = True
        return train_op

    # -- the pieces of apply_gradients -----------------------------------------------------
    def _make_local_step(self, graph, global_step) -> None:
        """`sync_rep_local_step`, a LOCAL variable kept off the ps (colocated with a NoOp)."""
        from tensorweave.ops import control_flow_ops, variables

        local_anchor = control_flow_ops.no_op()
        with graph.colocate_with(local_anchor):
            self._local_step = variables.Variable(
                initial_value=0, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                dtype=global_step.dtype.base_dtype, name="sync_rep_local_step")
        self.local_step_init_op = self._assign_local_step(graph, global_step)
        self._chief_init_ops = [self.local_step_init_op]
        self.ready_for_local_init_op = variables.report_uninitialized_variables(
            variables.global_variables())

    def _assign_local_step(self, graph, value):
        """`local_step = value`, colocated with `local_step`.

        NOTE: explicit, as TF1's op builder colocates an op with its ref inputs: an Assign
        left under the ps device scope would conflict with the worker-side variable.
        """
        from tensorweave.ops import state_ops

        with graph.colocate_with(self._local_step.op):
            return state_ops.assign(self._local_step, value)

    def _accumulate(self, graph, grads_and_vars):
        """One accumulator per variable on its device: (apply ops, aggregated grads, vars)."""
        from tensorweave.ops.accumulator_ops import (
            ConditionalAccumulator,
            SparseConditionalAccumulator,
        )

        train_ops, aggregated, var_list = [], [], []
        for grad, var in grads_and_vars:
            var_list.append(var)
            with graph.device(var.device):
                if grad is None:
                    aggregated.append(None)   # pass-through
                    continue
                if isinstance(grad, Tensor):
                    acc = ConditionalAccumulator(grad.dtype, shape=var.get_shape(),
                                                 shared_name=var.name + "/grad_accum")
                    train_ops.append(acc.apply_grad(grad, local_step=self._local_step))
                    aggregated.append(acc.take_grad(self._replicas_to_aggregate))
                elif is_indexed_slices(grad):
                    acc = SparseConditionalAccumulator(grad.dtype, shape=(),
                                                       shared_name=var.name + "/grad_accum")
                    train_ops.append(acc.apply_indexed_slices_grad(
                        grad, local_step=self._local_step))
                    aggregated.append(acc.take_indexed_slices_grad(
                        self._replicas_to_aggregate))
                else:
                    raise ValueError("Unknown grad type!")
                self._accumulator_list.append((acc, var.device))
        return train_ops, aggregated, var_list

    def _token_ops(self, graph, global_step, train_ops, update_op):
        """The token queue, this replica's train op and the chief's queue runner."""
        from tensorweave.data.queues import FIFOQueue
        from tensorweave.ops import creation_ops
        from tensorweave.training.queue_runner import QueueRunner

        with graph.device(global_step.device), graph.name_scope(""):
            # NOTE: TF passes shapes=() (one scalar shape); [()] says the same unambiguously.
            queue = FIFOQueue(-1, global_step.dtype.base_dtype, shapes=[()],
                              name="sync_token_q", shared_name="sync_token_q")
            self._sync_token_queue = queue
            with graph.control_dependencies(train_ops):
                token = queue.dequeue()
            train_op = self._assign_local_step(graph, token)
            with graph.control_dependencies([update_op]):
                tokens = creation_ops.fill([self._tokens_per_step], global_step)
                sync_op = queue.enqueue_many((tokens,))
            if self._variable_averages is not None:
                with graph.control_dependencies([sync_op]), graph.name_scope(""):
                    sync_op = self._variable_averages.apply(self._variables_to_average)
            self._chief_queue_runner = QueueRunner(queue, [sync_op])
        return train_op

    def _make_chief_init_op(self, graph, global_step) -> None:
        from tensorweave.ops import control_flow_ops

        for acc, dev in self._accumulator_list:
            with graph.device(dev):
                self._chief_init_ops.append(
                    acc.set_global_step(global_step, name="SetGlobalStep"))
        self.chief_init_op = control_flow_ops.group(*self._chief_init_ops)

    # -- the chief's side -----------------------------------------------------------------
    def get_chief_queue_runner(self):
        """The QueueRunner the chief runs: apply the aggregated gradients, then hand out
        tokens. Raises ValueError before `apply_gradients`."""
        if self._gradients_applied is False:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens=-1):
        """The op putting `num_tokens` tokens (default `replicas_to_aggregate`) into the token
        queue, so replicas can start; a NoOp `no_init_tokens` for 0.

        Raises:
          ValueError: before `apply_gradients`, or fewer tokens than the first step needs.
        """
        if self._gradients_applied is False:
            raise ValueError(
                "get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) "
                             f"vs {tokens_needed} (needed)")
        return self._init_tokens(num_tokens)

    def _init_tokens(self, num_tokens: int):
        from tensorweave.ops import control_flow_ops, creation_ops

        if num_tokens <= 0:
            return control_flow_ops.no_op(name="no_init_tokens")
        graph = get_default_graph()
        with graph.device(self._global_step.device), graph.name_scope(""):
            tokens = creation_ops.fill([num_tokens], self._global_step)
            return self._sync_token_queue.enqueue_many((tokens,))

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """A hook doing the replica's session setup (see `SyncReplicasOptimizerHook`)."""
        return SyncReplicasOptimizerHook(self, is_chief, num_tokens)

    # -- the wrapped optimizer's slots ----------------------------------------------------
    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def variables(self):
        return self._opt.variables()

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)


class SyncReplicasOptimizerHook:
    """Session setup of a replica (TF's `_SyncReplicasOptimizerHook`, a SessionRunHook).

    `begin()` picks the ops; `after_create_session(session, coord)` checks the global
    variables are initialized, runs the local init op (the chief's also sets the
    accumulators' global step), and on the chief puts the initial tokens in the queue and
    starts the chief's queue runner threads.
    """

    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self) -> None:
        """Raises ValueError when `apply_gradients` was not called."""
        opt = self._sync_optimizer
        if opt._gradients_applied is False:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before "
                             "using the hook.")
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session, coord) -> None:
        """Raises RuntimeError when a global variable is still uninitialized."""
        missing = session.run(self._ready_for_local_init_op)
        if len(missing):
            names = ", ".join(m.decode() if isinstance(m, bytes) else str(m) for m in missing)
            raise RuntimeError(
                "Init operations did not make model ready for SyncReplicasOptimizer "
                f"local_init. Init op: {self._local_init_op.name}, error: Variables not "
                f"initialized: {names}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values) -> None:
        return None

    def end(self, session) -> None:
        return None
