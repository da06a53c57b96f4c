"""`tf.saved_model.loader`: reads a SavedModel and restores one MetaGraphDef into a session.

`load` imports the graph tagged `tags`, restores the variables from `variables/`, then runs
the init op (TF2's `__saved_model_init_op` signature, else `saved_model_main_op`, else
`legacy_init_op`) with every asset tensor fed the asset's path under `assets/` — TensorFlow's
order, so SavedModels written by TensorFlow load here and ours load there.
"""

from __future__ import annotations

import logging
import os

from google.protobuf import message, text_format

from tensorweave.proto import meta_graph_pb2, saved_model_pb2
from tensorweave.saved_model import constants
from tensorweave.training.meta_graph import import_meta_graph, prepend_name_scope

_LOG = logging.getLogger("tensorweave")


def contains_saved_model(export_dir) -> bool:
    """Whether `export_dir` holds a `saved_model.pb` or `saved_model.pbtxt`."""
    d = os.fsdecode(export_dir)
    return any(os.path.isfile(os.path.join(d, f)) for f in
               (constants.SAVED_MODEL_FILENAME_PB, constants.SAVED_MODEL_FILENAME_PBTXT))


maybe_saved_model_directory = contains_saved_model


def read_saved_model(export_dir) -> saved_model_pb2.SavedModel:
    """The SavedModel proto in `export_dir`.

    Raises:
      OSError: no saved_model.pb(txt) in `export_dir` (TF raises IOError).
      ValueError: the file is not a SavedModel.
    """
    d = os.fsdecode(export_dir)
    pb = os.path.join(d, constants.SAVED_MODEL_FILENAME_PB)
    pbtxt = os.path.join(d, constants.SAVED_MODEL_FILENAME_PBTXT)
    model = saved_model_pb2.SavedModel()
    try:
        if os.path.isfile(pb):
            with open(pb, "rb") as f:
                model.ParseFromString(f.read())
        elif os.path.isfile(pbtxt):
            with open(pbtxt) as f:
                text_format.Merge(f.read(), model)
        else:
            raise OSError(f"SavedModel file does not exist at: {d}{os.sep}"
                          f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|"
                          f"{constants.SAVED_MODEL_FILENAME_PB}}}")
    except (message.DecodeError, text_format.ParseError) as e:
        raise ValueError(f"Cannot parse the SavedModel in {d}: {e}") from None
    return model


def meta_graph_for_tags(model, tags, export_dir="") -> meta_graph_pb2.MetaGraphDef:
    """The MetaGraphDef whose tag set equals `tags`.

    Raises:
      RuntimeError: none has those tags (TF's message, with the tag sets there are).
    """
    wanted = set([tags] if isinstance(tags, str) else tags)
    for meta in model.meta_graphs:
        if set(meta.meta_info_def.tags) == wanted:
            return meta
    available = [sorted(m.meta_info_def.tags) for m in model.meta_graphs]
    raise RuntimeError(
        f"MetaGraphDef associated with tags {str(sorted(wanted)).strip('[]')} could not be "
        f"found in SavedModel {os.fsdecode(export_dir)}, with available tags "
        f"'{available}'. To inspect available tag-sets in the SavedModel, please use the "
        "SavedModel CLI: `saved_model_cli`.")


def asset_file_defs(meta) -> list:
    """The AssetFileDefs of a MetaGraphDef: TF2's field, else the `saved_model_assets` list."""
    found = list(meta.asset_file_def)
    if constants.ASSETS_KEY in meta.collection_def:
        for packed in meta.collection_def[constants.ASSETS_KEY].any_list.value:
            found.append(meta_graph_pb2.AssetFileDef.FromString(packed.value))
    return found


def asset_feeds(meta, export_dir, import_scope=None) -> dict[str, str]:
    """{asset tensor name: path of the file under assets/}."""
    assets = os.path.join(os.fsdecode(export_dir), constants.ASSETS_DIRECTORY)
    return {prepend_name_scope(a.tensor_info.name, import_scope): os.path.join(assets, a.filename)
            for a in asset_file_defs(meta)}


def init_op_name(meta) -> str | None:
    """The name of the op to run after restoring, or None."""
    sig = meta.signature_def.get(constants.INIT_OP_SIGNATURE_KEY)
    if sig is not None and constants.INIT_OP_SIGNATURE_KEY in sig.outputs:
        return sig.outputs[constants.INIT_OP_SIGNATURE_KEY].name
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        col = meta.collection_def.get(key)
        if col is not None and col.node_list.value:
            if len(col.node_list.value) != 1:
                raise RuntimeError(f"Expected exactly one SavedModel main op. Found: "
                                   f"{list(col.node_list.value)}")
            return col.node_list.value[0]
    return None


def variables_path(export_dir) -> str:
    return os.path.join(os.fsdecode(export_dir), constants.VARIABLES_DIRECTORY,
                        constants.VARIABLES_FILENAME)


def load(sess, tags, export_dir, import_scope=None, **saver_kwargs):
    """Loads the MetaGraphDef tagged `tags` from `export_dir` into `sess` (its graph) and
    restores its state; returns the MetaGraphDef (its `signature_def` names the tensors).

    Raises:
      OSError: no SavedModel in `export_dir`.
      RuntimeError: no MetaGraphDef with these tags.
      ValueError, errors.OpError: the graph cannot be imported or its variables restored.
    """
    meta = meta_graph_for_tags(read_saved_model(export_dir), tags, export_dir)
    with sess.graph.as_default():
        saver = import_meta_graph(meta, import_scope=import_scope, **saver_kwargs)
    if saver is not None and os.path.exists(variables_path(export_dir) + ".index"):
        saver.restore(sess, variables_path(export_dir))
    elif saver is not None:
        _LOG.info("The specified SavedModel has no variables; no checkpoints were restored.")
    init = init_op_name(meta)
    if init is not None:
        sess.run(prepend_name_scope(init, import_scope),
                 feed_dict=asset_feeds(meta, export_dir, import_scope))
    return meta


__all__ = ["contains_saved_model", "load", "maybe_saved_model_directory"]
