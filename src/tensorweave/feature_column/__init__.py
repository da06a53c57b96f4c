"""`tf.feature_column` (TF1): columns describing model inputs, and the layers that turn
them into tensors (`input_layer`, `linear_model`)."""

from tensorweave.feature_column.columns import (
    bucketized_column,
    categorical_column_with_hash_bucket,
    categorical_column_with_identity,
    categorical_column_with_vocabulary_file,
    categorical_column_with_vocabulary_list,
    crossed_column,
    embedding_column,
    indicator_column,
    make_parse_example_spec,
    numeric_column,
    shared_embedding_columns,
    weighted_categorical_column,
)
from tensorweave.feature_column.layers import input_layer, linear_model

__all__ = [
    "bucketized_column", "categorical_column_with_hash_bucket",
    "categorical_column_with_identity", "categorical_column_with_vocabulary_file",
    "categorical_column_with_vocabulary_list", "crossed_column", "embedding_column",
    "indicator_column", "input_layer", "linear_model", "make_parse_example_spec",
    "numeric_column", "shared_embedding_columns", "weighted_categorical_column",
]
