"""`tf.contrib.legacy_seq2seq` (TF 1.15's), the basic part: static, list-of-steps decoders
(`rnn_decoder`, `basic_rnn_seq2seq`, `tied_rnn_seq2seq`, `embedding_rnn_decoder`,
`embedding_rnn_seq2seq`) and the losses over lists of logits (`sequence_loss_by_example`,
`sequence_loss`). The attention and bucketing models are not here.

Inputs and outputs are Python lists with one [batch, ...] tensor per time step. The decoder
cell runs once per step in one variable scope (reused after the first step), so variable
names are TF's: `rnn_decoder/<cell>/...`, `embedding_rnn_seq2seq/rnn/embedding_wrapper/...`.
"""

from __future__ import annotations

import copy

from tensorweave.contrib.rnn_cells import EmbeddingWrapper, OutputProjectionWrapper
from tensorweave.framework.scopes import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array_ops, math_ops, nn_losses, nn_ops, reduction_ops
from tensorweave.ops import variable_scope as vs
from tensorweave.ops.control_flow_util import flatten, is_sequence, pack_sequence_as
from tensorweave.ops.embedding_ops import embedding_lookup
from tensorweave.ops.math_matmul_ops import add_n
from tensorweave.training.rnn.static_rnn import static_rnn

__all__ = ["basic_rnn_seq2seq", "embedding_rnn_decoder", "embedding_rnn_seq2seq",
           "rnn_decoder", "sequence_loss", "sequence_loss_by_example", "tied_rnn_seq2seq"]


def rnn_decoder(decoder_inputs, initial_state, cell, loop_function=None, scope=None):
    """Runs `cell` over the decoder inputs from `initial_state`.

    With `loop_function(prev_output, i)`, every step after the first takes its input from the
    previous step's output instead (inference), in a reused `loop_function` scope.

    Returns:
      (outputs, state): one [batch, output_size] tensor per step, and the final state.
    """
    with vs.variable_scope(scope or "rnn_decoder"):
        state, outputs, prev = initial_state, [], None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with vs.variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            if i > 0:
                vs.get_variable_scope().reuse_variables()
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


def basic_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, dtype="float32", scope=None):
    """A static encoder (a copy of `cell`) whose final state starts `rnn_decoder`."""
    with vs.variable_scope(scope or "basic_rnn_seq2seq"):
        _, enc_state = static_rnn(copy.deepcopy(cell), encoder_inputs, dtype=dtype)
        return rnn_decoder(decoder_inputs, enc_state, cell)


def tied_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, loop_function=None,
                     dtype="float32", scope=None):
    """As basic_rnn_seq2seq, but encoder and decoder share one cell's variables."""
    with vs.variable_scope("combined_tied_rnn_seq2seq"):
        scope = scope or "tied_rnn_seq2seq"
        _, enc_state = static_rnn(cell, encoder_inputs, dtype=dtype, scope=scope)
        vs.get_variable_scope().reuse_variables()
        return rnn_decoder(decoder_inputs, enc_state, cell, loop_function=loop_function,
                           scope=scope)


def _extract_argmax_and_embed(embedding, output_projection=None, update_embedding=True):
    """A loop function: the previous output's argmax symbol, embedded."""

    def loop_function(prev, _):
        if output_projection is not None:
            prev = nn_ops.xw_plus_b(prev, output_projection[0], output_projection[1])
        emb_prev = embedding_lookup(embedding, reduction_ops.argmax(prev, 1))
        return emb_prev if update_embedding else array_ops.stop_gradient(emb_prev)

    return loop_function


def embedding_rnn_decoder(decoder_inputs, initial_state, cell, num_symbols, embedding_size,
                          output_projection=None, feed_previous=False,
                          update_embedding_for_previous=True, scope=None):
    """rnn_decoder over embedded integer inputs ([batch] each); with `feed_previous`, each step
    after the first embeds the previous output's argmax (through `output_projection`, a
    (W [output_size, num_symbols], b [num_symbols]) pair, when given).

    Raises:
      ValueError: an output_projection of the wrong shape.
    """
    with vs.variable_scope(scope or "embedding_rnn_decoder") as sc:
        if output_projection is not None:
            weights = convert_to_tensor(output_projection[0], dtype=sc.dtype)
            weights.get_shape().assert_is_compatible_with([None, num_symbols])
            biases = convert_to_tensor(output_projection[1], dtype=sc.dtype)
            biases.get_shape().assert_is_compatible_with([num_symbols])
        embedding = vs.get_variable("embedding", [num_symbols, embedding_size])
        loop_function = _extract_argmax_and_embed(
            embedding, output_projection, update_embedding_for_previous) \
            if feed_previous else None
        embedded = [embedding_lookup(embedding, i) for i in decoder_inputs]
        return rnn_decoder(embedded, initial_state, cell, loop_function=loop_function)


def embedding_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, num_encoder_symbols,
                          num_decoder_symbols, embedding_size, output_projection=None,
                          feed_previous=False, dtype=None, scope=None):
    """An embedding encoder (a copy of `cell` in an EmbeddingWrapper) and an
    embedding_rnn_decoder (the cell in an OutputProjectionWrapper to num_decoder_symbols
    unless `output_projection` is given). `feed_previous` may be a bool or a bool Tensor
    (both decoders are built and a cond picks one).

    Returns:
      (outputs, state): one [batch, num_decoder_symbols] (or output_size) tensor per step.
    """
    with vs.variable_scope(scope or "embedding_rnn_seq2seq") as sc:
        if dtype is not None:
            sc.set_dtype(dtype)
        else:
            dtype = sc.dtype
        encoder_cell = EmbeddingWrapper(copy.deepcopy(cell), embedding_classes=num_encoder_symbols,
                                        embedding_size=embedding_size)
        _, encoder_state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)
        if isinstance(feed_previous, bool):
            return embedding_rnn_decoder(decoder_inputs, encoder_state, cell,
                                         num_decoder_symbols, embedding_size,
                                         output_projection=output_projection,
                                         feed_previous=feed_previous)
        return _decode_either_way(decoder_inputs, encoder_state, cell, num_decoder_symbols,
                                  embedding_size, output_projection, feed_previous)


def _decode_either_way(decoder_inputs, encoder_state, cell, num_symbols, embedding_size,
                       output_projection, feed_previous):
    """Both decoders (feeding previous outputs or not), sharing variables, picked by a cond
    on the `feed_previous` tensor."""
    from tensorweave.ops.control_flow_ops import cond

    def decoder(feed_previous_bool):
        reuse = None if feed_previous_bool else True
        with vs.variable_scope(vs.get_variable_scope(), reuse=reuse):
            outputs, state = embedding_rnn_decoder(
                decoder_inputs, encoder_state, cell, num_symbols, embedding_size,
                output_projection=output_projection, feed_previous=feed_previous_bool,
                update_embedding_for_previous=False)
            return outputs + (flatten(state) if is_sequence(state) else [state])

    both = cond(feed_previous, lambda: decoder(True), lambda: decoder(False))
    n = len(decoder_inputs)
    state_list = both[n:]
    state = state_list[0]
    if is_sequence(encoder_state):
        state = pack_sequence_as(structure=encoder_state, flat_sequence=state_list)
    return both[:n], state


def sequence_loss_by_example(logits, targets, weights, average_across_timesteps=True,
                             softmax_loss_function=None, name=None):
    """The weighted cross-entropy of each example, summed over the steps ([batch]); divided
    by the summed weights (+1e-12) when `average_across_timesteps`.

    Args:
      logits: one [batch, num_classes] tensor per step.
      targets: one int [batch] tensor per step.
      weights: one float [batch] tensor per step.
      softmax_loss_function: `fn(labels=, logits=)` instead of sparse softmax cross-entropy.

    Raises:
      ValueError: the three lists differ in length.
    """
    if len(targets) != len(logits) or len(weights) != len(logits):
        raise ValueError(f"Lengths of logits, weights, and targets must be the same "
                         f"{len(logits)}, {len(weights)}, {len(targets)}.")
    with name_scope(name, "sequence_loss_by_example", list(logits) + list(targets)
                    + list(weights)):
        log_perps = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                crossent = nn_losses.sparse_softmax_cross_entropy_with_logits(
                    labels=array_ops.reshape(target, [-1]), logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            log_perps.append(crossent * weight)
        total = add_n(log_perps)
        if average_across_timesteps:
            total = total / (add_n(weights) + 1e-12)
    return total


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, softmax_loss_function=None, name=None):
    """The summed sequence_loss_by_example, divided by the batch size when
    `average_across_batch` (a scalar)."""
    with name_scope(name, "sequence_loss", list(logits) + list(targets) + list(weights)):
        cost = reduction_ops.reduce_sum(sequence_loss_by_example(
            logits, targets, weights, average_across_timesteps=average_across_timesteps,
            softmax_loss_function=softmax_loss_function))
        if not average_across_batch:
            return cost
        batch = array_ops.shape(targets[0])[0]
        return cost / math_ops.cast(batch, cost.dtype)
