"""Writes tests/data/images/anim.gif (3 frames, 16x12, a 16-colour palette) and
tests/data/images/rgb.bmp (24-bit) with Pillow, because the TensorFlow peer encodes only JPEG
and PNG. Run with the project's venv before make_image_expected.py (which decodes them with TF):

    .venv/bin/python tests/image/make_image_gif.py
"""

from pathlib import Path

import numpy as np
from PIL import Image

OUT = Path(__file__).resolve().parents[1] / "data" / "images"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(7)
    palette = rng.randint(0, 256, (16, 3)).astype(np.uint8)
    frames = []
    for k in range(3):
        idx = (np.add.outer(np.arange(12), np.arange(16)) + 5 * k) % 16
        img = Image.fromarray(idx.astype(np.uint8), mode="P")
        img.putpalette(palette.ravel().tolist())
        frames.append(img)
    frames[0].save(OUT / "anim.gif", save_all=True, append_images=frames[1:], duration=50,
                   loop=0, disposal=1)
    rgb = rng.randint(0, 256, (10, 13, 3)).astype(np.uint8)   # odd width: row padding
    Image.fromarray(rgb).save(OUT / "rgb.bmp")


if __name__ == "__main__":
    main()
