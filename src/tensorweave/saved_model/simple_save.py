"""`tf.saved_model.simple_save`: one predict signature, tagged serve, in one call."""

from __future__ import annotations

from tensorweave.framework.graph import GraphKeys
from tensorweave.saved_model import signature_constants, tag_constants
from tensorweave.saved_model.builder import SavedModelBuilder
from tensorweave.saved_model.signature_def_utils import predict_signature_def


def simple_save(session, export_dir, inputs, outputs, legacy_init_op=None) -> None:
    """Saves `session`'s graph and variables as a SavedModel with the `serving_default`
    predict signature over {key: Tensor} `inputs` and `outputs` (devices cleared, the graph's
    asset files copied), as TF's simple_save."""
    signature = predict_signature_def(inputs, outputs)
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session, [tag_constants.SERVING],
        signature_def_map={signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: signature},
        assets_collection=session.graph.get_collection(GraphKeys.ASSET_FILEPATHS),
        main_op=legacy_init_op, clear_devices=True)
    builder.save()


__all__ = ["simple_save"]
