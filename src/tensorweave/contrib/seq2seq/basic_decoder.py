"""`tf.contrib.seq2seq.BasicDecoder` (TF 1.15's basic_decoder.py): one cell step, then the
optional `output_layer` (e.g. a `tf.layers.Dense` projecting to the vocabulary), then the
helper's sample and next inputs."""

from __future__ import annotations

import collections

from tensorweave.contrib.seq2seq.decoder import Decoder
from tensorweave.contrib.seq2seq.helper import Helper
from tensorweave.framework.scopes import name_scope
from tensorweave.ops.control_flow_util import flatten, map_structure
from tensorweave.shapes import TensorShape
from tensorweave.training.rnn.cell_base import assert_like_rnncell


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput",
                                                ("rnn_output", "sample_id"))):
    pass


class BasicDecoder(Decoder):
    """Raises TypeError: `helper` is not a Helper, `output_layer` not a layer."""

    def __init__(self, cell, helper, initial_state, output_layer=None):
        assert_like_rnncell("cell", cell)
        if not isinstance(helper, Helper):
            raise TypeError(f"helper must be a Helper, received: {type(helper)}")
        if output_layer is not None and not hasattr(output_layer, "compute_output_shape"):
            raise TypeError(f"output_layer must be a Layer, received: {type(output_layer)}")
        self._cell, self._helper = cell, helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    batch_size = property(lambda self: self._helper.batch_size)

    def _rnn_output_size(self):
        size = self._cell.output_size
        if self._output_layer is None:
            return size
        with_batch = map_structure(lambda s: TensorShape([None]).concatenate(s), size)
        out = self._output_layer.compute_output_shape(with_batch)
        return map_structure(lambda s: TensorShape(s)[1:], out)

    @property
    def output_size(self):
        return BasicDecoderOutput(rnn_output=self._rnn_output_size(),
                                  sample_id=self._helper.sample_ids_shape)

    @property
    def output_dtype(self):
        dtype = flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(map_structure(lambda _: dtype, self._rnn_output_size()),
                                  self._helper.sample_ids_dtype)

    def initialize(self, name=None):
        return self._helper.initialize() + (self._initial_state,)

    def step(self, time, inputs, state, name=None):
        with name_scope(name, "BasicDecoderStep", (time, inputs, state)):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time=time, outputs=cell_outputs, state=cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(
                time=time, outputs=cell_outputs, state=cell_state, sample_ids=sample_ids)
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished
