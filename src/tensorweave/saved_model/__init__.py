# ruff: noqa: F401
"""`tf.saved_model` (TF1 names): write, read and describe SavedModel directories.

`builder.SavedModelBuilder`/`simple_save` write, `loader.load` reads, `signature_def_utils`
and `utils` build the SignatureDefs a server (`tensorweave serve`, TensorFlow Serving) calls.
"""

from tensorweave.saved_model import (  # noqa: F401
    builder,
    constants,
    loader,
    main_op,
    signature_constants,
    signature_def_utils,
    tag_constants,
    utils,
)
from tensorweave.saved_model.builder import SavedModelBuilder
from tensorweave.saved_model.loader import contains_saved_model, load, maybe_saved_model_directory
from tensorweave.saved_model.main_op import main_op_with_restore
from tensorweave.saved_model.signature_constants import *  # noqa: F403
from tensorweave.saved_model.signature_def_utils import (
    build_signature_def,
    classification_signature_def,
    is_valid_signature,
    predict_signature_def,
    regression_signature_def,
)
from tensorweave.saved_model.simple_save import simple_save
from tensorweave.saved_model.tag_constants import EVAL, GPU, SERVING, TPU, TRAINING
from tensorweave.saved_model.utils import build_tensor_info, get_tensor_from_tensor_info

Builder = SavedModelBuilder
ASSETS_DIRECTORY = constants.ASSETS_DIRECTORY
ASSETS_KEY = constants.ASSETS_KEY
LEGACY_INIT_OP_KEY = constants.LEGACY_INIT_OP_KEY
MAIN_OP_KEY = constants.MAIN_OP_KEY
SAVED_MODEL_FILENAME_PB = constants.SAVED_MODEL_FILENAME_PB
SAVED_MODEL_FILENAME_PBTXT = constants.SAVED_MODEL_FILENAME_PBTXT
SAVED_MODEL_SCHEMA_VERSION = constants.SAVED_MODEL_SCHEMA_VERSION
VARIABLES_DIRECTORY = constants.VARIABLES_DIRECTORY
VARIABLES_FILENAME = constants.VARIABLES_FILENAME
