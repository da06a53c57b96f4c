"""`tf.contrib.seq2seq` (TF 1.15): `sequence_loss`, the helpers, `BasicDecoder`,
`dynamic_decode`, the attention mechanisms and `AttentionWrapper`, `BeamSearchDecoder` and
`tile_batch`."""

from tensorweave.contrib.seq2seq.attention_wrapper import (
    AttentionWrapper,
    AttentionWrapperState,
    BahdanauAttention,
    LuongAttention,
)
from tensorweave.contrib.seq2seq.basic_decoder import BasicDecoder, BasicDecoderOutput
from tensorweave.contrib.seq2seq.beam_search_decoder import (
    BeamSearchDecoder,
    BeamSearchDecoderOutput,
    BeamSearchDecoderState,
    FinalBeamSearchDecoderOutput,
)
from tensorweave.contrib.seq2seq.beam_search_ops import gather_tree, tile_batch
from tensorweave.contrib.seq2seq.decoder import Decoder, dynamic_decode
from tensorweave.contrib.seq2seq.helper import (
    GreedyEmbeddingHelper,
    Helper,
    SampleEmbeddingHelper,
    TrainingHelper,
)
from tensorweave.contrib.seq2seq.loss import sequence_loss

__all__ = [
    "AttentionWrapper", "AttentionWrapperState", "BahdanauAttention", "BasicDecoder",
    "BasicDecoderOutput", "BeamSearchDecoder", "BeamSearchDecoderOutput", "BeamSearchDecoderState",
    "Decoder", "FinalBeamSearchDecoderOutput", "GreedyEmbeddingHelper", "Helper", "LuongAttention",
    "SampleEmbeddingHelper", "TrainingHelper", "dynamic_decode", "gather_tree", "sequence_loss",
    "tile_batch",
]
