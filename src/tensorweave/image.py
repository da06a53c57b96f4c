"""`tf.image`: decoding and encoding, resizing, crops and pads, flips, colour, boxes and
measures (TF1 names). Re-exports only; the functions live in ops/image_*.py."""

from tensorweave.ops.image_codec_ops import (
    decode_bmp, decode_gif, decode_image, decode_jpeg, decode_png, encode_jpeg, encode_png,
    extract_jpeg_shape,
)
from tensorweave.ops.image_color import (
    adjust_brightness, adjust_contrast, adjust_gamma, adjust_hue, adjust_jpeg_quality,
    adjust_saturation, convert_image_dtype, grayscale_to_rgb, hsv_to_rgb,
    per_image_standardization, random_brightness, random_contrast, random_hue,
    random_jpeg_quality, random_saturation, rgb_to_grayscale, rgb_to_hsv,
)
from tensorweave.ops.image_geometry import (
    ResizeMethod, central_crop, crop_and_resize, crop_to_bounding_box, extract_glimpse,
    extract_image_patches, extract_patches, flip_left_right, flip_up_down, pad_to_bounding_box,
    random_flip_left_right, random_flip_up_down, resize, resize_area, resize_bicubic,
    resize_bilinear, resize_image_with_crop_or_pad, resize_image_with_pad, resize_images,
    resize_nearest_neighbor, resize_with_crop_or_pad, rot90, transpose, transpose_image,
)
from tensorweave.ops.image_metrics import (
    draw_bounding_boxes, image_gradients, non_max_suppression, psnr,
    sample_distorted_bounding_box, ssim, total_variation,
)
from tensorweave.ops.random_ops import random_crop
