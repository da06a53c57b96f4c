"""A small stand-in for the CIFAR-10 binary files (data_batch_1..5.bin, test_batch.bin): the
same record layout (1 label byte, then 3 x 32 x 32 image bytes, channel-major), a few
deterministic records per file instead of 10000."""

from __future__ import annotations

from pathlib import Path

import numpy as np

RECORDS = 6
FILES = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]


def records(index: int) -> tuple[np.ndarray, np.ndarray]:
    """(labels [RECORDS], images [RECORDS, 3, 32, 32] uint8) of file `index`."""
    rng = np.random.RandomState(100 + index)
    labels = rng.randint(0, 10, RECORDS).astype(np.uint8)
    yy, xx = np.mgrid[0:32, 0:32]
    images = []
    for k in range(RECORDS):
        base = [(np.sin(yy / (2 + c + k)) + np.cos(xx / (3 + k))) * 50 + 100 + 20 * c
                for c in range(3)]
        noise = rng.randint(0, 40, (3, 32, 32))
        images.append(np.clip(np.stack(base) + noise, 0, 255).astype(np.uint8))
    return labels, np.stack(images)


def write(data_dir) -> Path:
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(FILES):
        labels, images = records(i)
        rows = np.concatenate([labels[:, None], images.reshape(RECORDS, -1)], 1)
        (data_dir / name).write_bytes(rows.astype(np.uint8).tobytes())
    return data_dir


def write_tarball(data_dir) -> Path:
    """`data_dir/cifar-10-binary.tar.gz` holding `cifar-10-batches-bin/` with the stand-in files,
    as the tarball cifar10.maybe_download_and_extract looks for (so nothing downloads)."""
    import tarfile
    import tempfile

    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / "cifar-10-binary.tar.gz"
    with tempfile.TemporaryDirectory() as tmp:
        bins = write(Path(tmp) / "cifar-10-batches-bin")
        with tarfile.open(path, "w:gz") as tar:
            tar.add(bins, arcname="cifar-10-batches-bin")
    return path
