"""`tf.saved_model.tag_constants`: the tags a MetaGraphDef in a SavedModel is stored under."""

SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"
