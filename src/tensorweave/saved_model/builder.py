"""`tf.saved_model.builder.SavedModelBuilder`: writes a SavedModel directory.

    export_dir/
      saved_model.pb          SavedModel: one MetaGraphDef per tag set
      variables/variables.{index,data-00000-of-00001}   one V2 checkpoint shared by all
      assets/                 files the graph reads (vocabularies), fed to the init op

Layout and collection keys are TensorFlow's (TF1 `SavedModelBuilder`), so TensorFlow's loader
reads what this writes: assets are `AssetFileDef`s in the `saved_model_assets` collection, the
init op is `saved_model_main_op` (or `legacy_init_op`).

Example:
    builder = tf.saved_model.builder.SavedModelBuilder("export/1")
    builder.add_meta_graph_and_variables(sess, [tf.saved_model.tag_constants.SERVING],
        signature_def_map={"serving_default": predict_signature_def({"x": x}, {"y": y})})
    builder.save()
"""

from __future__ import annotations

import os
import shutil

from google.protobuf import any_pb2, text_format

from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.proto import meta_graph_pb2, saved_model_pb2
from tensorweave.saved_model import constants
from tensorweave.training.meta_graph import export_meta_graph
from tensorweave.training.saver import Saver


class SavedModelBuilder:
    """Builds a SavedModel in `export_dir`, which must not exist or be empty.

    Raises (constructor):
      AssertionError: `export_dir` exists and is not empty (TF's error).
    """

    def __init__(self, export_dir):
        self._export_dir = os.fsdecode(export_dir)
        if os.path.exists(self._export_dir):
            if os.listdir(self._export_dir):
                raise AssertionError(
                    "Export directory already exists, and isn't empty. Please choose a "
                    "different export directory, or delete all the contents of the specified "
                    f"directory: {self._export_dir}")
        else:
            os.makedirs(self._export_dir)
        self._saved_model = saved_model_pb2.SavedModel(
            saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        self._has_saved_variables = False

    # -- the public calls ---------------------------------------------------------------------
    def add_meta_graph_and_variables(self, sess, tags, signature_def_map=None,
                                     assets_collection=None, legacy_init_op=None,
                                     clear_devices=False, main_op=None,
                                     strip_default_attrs=False, saver=None):
        """Saves the variables of `sess` and adds its graph tagged `tags`.

        Raises:
          AssertionError: variables were saved already (use `add_meta_graph`).
          TypeError, ValueError: a bad signature map or init op.
        """
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already "
                                 "been saved. Please invoke `add_meta_graph()` instead.")
        _validate_signature_def_map(signature_def_map)
        with sess.graph.as_default():
            saver = saver or _default_saver()
            variables_dir = os.path.join(self._export_dir, constants.VARIABLES_DIRECTORY)
            os.makedirs(variables_dir, exist_ok=True)
            saver.save(sess, os.path.join(variables_dir, constants.VARIABLES_FILENAME),
                       write_meta_graph=False, write_state=False)
            self._add_meta_graph(sess.graph, tags, signature_def_map, assets_collection,
                                 main_op, legacy_init_op, clear_devices, strip_default_attrs,
                                 saver)
        self._has_saved_variables = True

    def add_meta_graph(self, tags, signature_def_map=None, assets_collection=None,
                       legacy_init_op=None, clear_devices=False, main_op=None,
                       strip_default_attrs=False, saver=None):
        """Adds the default graph tagged `tags`, sharing the variables saved before.

        Raises:
          AssertionError: no variables were saved yet (`add_meta_graph_and_variables` first).
        """
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been "
                                 "saved yet. Please invoke `add_meta_graph_and_variables()` "
                                 "first.")
        _validate_signature_def_map(signature_def_map)
        graph = get_default_graph()
        self._add_meta_graph(graph, tags, signature_def_map, assets_collection, main_op,
                             legacy_init_op, clear_devices, strip_default_attrs,
                             saver or _default_saver())

    def save(self, as_text=False) -> bytes:
        """Writes `saved_model.pb` (or `.pbtxt`) atomically; returns its path (bytes, as TF)."""
        if as_text:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
            _atomic_write(path, text_format.MessageToString(self._saved_model).encode())
        else:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PB)
            _atomic_write(path, self._saved_model.SerializeToString(deterministic=True))
        return os.fsencode(path)

    # -- one MetaGraphDef ---------------------------------------------------------------------
    def _add_meta_graph(self, graph, tags, signature_def_map, assets_collection, main_op,
                        legacy_init_op, clear_devices, strip_default_attrs, saver) -> None:
        if main_op is not None and legacy_init_op is not None:
            raise ValueError("Only one of main_op and legacy_init_op may be given.")
        keys = [k for k in graph.get_all_collection_keys()
                if k not in (constants.ASSETS_KEY, constants.MAIN_OP_KEY,
                             constants.LEGACY_INIT_OP_KEY)]
        meta = export_meta_graph(graph=graph, saver_def=saver.as_saver_def(),
                                 collection_list=keys, clear_devices=clear_devices,
                                 strip_default_attrs=strip_default_attrs)
        meta.meta_info_def.tags.extend(_tag_list(tags))
        # NOTE: tensorflow_version stays empty: TensorFlow's importer parses it as a version.
        for key, sig in (signature_def_map or {}).items():
            meta.signature_def[key].CopyFrom(sig)
        self._add_assets(meta, assets_collection)
        self._add_init_op(meta, main_op, constants.MAIN_OP_KEY)
        self._add_init_op(meta, legacy_init_op, constants.LEGACY_INIT_OP_KEY)
        self._saved_model.meta_graphs.add().CopyFrom(meta)

    def _add_assets(self, meta, assets_collection) -> None:
        """Copies each asset file into assets/ and records its AssetFileDef."""
        for tensor in assets_collection or []:
            source = _asset_source(tensor)
            filename = os.path.basename(source)
            target_dir = os.path.join(self._export_dir, constants.ASSETS_DIRECTORY)
            os.makedirs(target_dir, exist_ok=True)
            target = os.path.join(target_dir, filename)
            if not os.path.exists(target):
                shutil.copyfile(source, target)
            asset = meta_graph_pb2.AssetFileDef(filename=filename)
            asset.tensor_info.name = tensor.name
            packed = any_pb2.Any(type_url=constants.ASSET_TYPE_URL,
                                 value=asset.SerializeToString())
            meta.collection_def[constants.ASSETS_KEY].any_list.value.append(packed)

    @staticmethod
    def _add_init_op(meta, op, key: str) -> None:
        if op is None:
            return
        op = getattr(op, "op", op)
        if not hasattr(op, "type"):
            raise TypeError(f"{key} needs to be an Operation: {op!r}")
        meta.collection_def[key].node_list.value.append(op.name)


def _atomic_write(path: str, data: bytes) -> None:
    """`path` appears whole or not at all (a server watching the directory never reads half)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _default_saver() -> Saver:
    """TF's SavedModel saver: every saveable, sharded, empty allowed."""
    variables = get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES) + \
        get_default_graph().get_collection(GraphKeys.SAVEABLE_OBJECTS)
    return Saver(variables, sharded=True, allow_empty=True)


def _tag_list(tags) -> list[str]:
    if isinstance(tags, str):
        return [tags]
    return list(tags or [])


def _asset_source(tensor) -> str:
    """The file a string Const asset tensor names."""
    op = getattr(tensor, "op", None)
    if op is None or op.type != "Const":
        raise TypeError(f"Asset {tensor!r} must be a string constant naming a file.")
    value = op.get_attr("value")
    value = value.item() if hasattr(value, "item") else value
    return os.fsdecode(value)


def _validate_signature_def_map(signature_def_map) -> None:
    """Raises: TypeError (not SignatureDefs), ValueError (a reserved key, a TensorInfo
    without a name)."""
    for key, sig in (signature_def_map or {}).items():
        if not hasattr(sig, "method_name") or not hasattr(sig, "inputs"):
            raise TypeError(f"signature_def_map[{key!r}] must be a SignatureDef, got "
                            f"{type(sig).__name__}")
        if key in (constants.INIT_OP_SIGNATURE_KEY, constants.TRAIN_OP_SIGNATURE_KEY):
            raise KeyError(f"SignatureDef key {key!r} is reserved for the init/train op.")
        for kind in ("inputs", "outputs"):
            for name, info in getattr(sig, kind).items():
                if not info.name and not info.HasField("coo_sparse"):
                    raise ValueError(f"All TensorInfo protos used in the SignatureDefs must "
                                     f"have the name and dtype fields set: {key} {kind} "
                                     f"{name!r}")


__all__ = ["SavedModelBuilder"]
