"""`tf.contrib.slim.nets` (TF 1.15): the slim network definitions; here `vgg`, `resnet_v1`
and `resnet_utils`."""

from tensorweave.contrib.slim.nets import resnet_utils, resnet_v1, vgg

__all__ = ["resnet_utils", "resnet_v1", "vgg"]
