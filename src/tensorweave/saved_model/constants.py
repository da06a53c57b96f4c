"""`tf.saved_model.constants`: a SavedModel's file names and the collection keys it uses."""

SAVED_MODEL_SCHEMA_VERSION = 1
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
ASSETS_DIRECTORY = "assets"
EXTRA_ASSETS_DIRECTORY = "assets.extra"

ASSETS_KEY = "saved_model_assets"          # AssetFileDefs, as Any protos
MAIN_OP_KEY = "saved_model_main_op"        # the op run after the variables are restored
LEGACY_INIT_OP_KEY = "legacy_init_op"      # the same, from TF releases before main_op
TRAIN_OP_KEY = "saved_model_train_op"
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"   # TF2 writers keep the init op here
TRAIN_OP_SIGNATURE_KEY = "__saved_model_train_op"

# NOTE: TensorFlow unpacks the Any by its type URL, so assets carry TF's message name.
ASSET_TYPE_URL = "type.googleapis.com/tensorflow.AssetFileDef"
