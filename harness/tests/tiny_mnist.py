"""Writes a small MNIST in its own IDX file format where torchvision's ``datasets.MNIST(root)``
looks for it (``root/MNIST/raw/*-ubyte`` and their ``.gz``), so that code calling it with
``download=True`` finds the files and downloads nothing. Each digit is a bright 8x8 block at a
place of its own plus noise, so a small model learns it in a few dozen batches."""

import gzip
import os
import random
import struct
from typing import List, Tuple

FILES = {
    True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


def _images(n: int, seed: int) -> Tuple[bytes, List[int]]:
    rng = random.Random(seed)
    pixels = bytearray()
    labels = []
    for _ in range(n):
        label = rng.randrange(10)
        img = bytearray(rng.randrange(0, 160) for _ in range(28 * 28))
        row, col = 2 + (label // 5) * 12, 1 + (label % 5) * 5
        for r in range(row, row + 8):
            for c in range(col, col + 4):
                img[r * 28 + c] = 110 + rng.randrange(0, 146)
        pixels += img
        labels.append(label)
    return bytes(pixels), labels


def write(root: str, n_train: int = 512, n_test: int = 128, seed: int = 0) -> str:
    """Write the four files under ``root/MNIST/raw``; returns that directory."""
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    for train, n in ((True, n_train), (False, n_test)):
        pixels, labels = _images(n, seed + (0 if train else 1))
        img_name, lbl_name = FILES[train]
        contents = {
            img_name: struct.pack(">IIII", 0x0803, n, 28, 28) + pixels,
            lbl_name: struct.pack(">II", 0x0801, n) + bytes(labels),
        }
        for name, data in contents.items():
            with open(os.path.join(raw, name), "wb") as f:
                f.write(data)
            with gzip.open(os.path.join(raw, name + ".gz"), "wb") as g:
                g.write(data)
    return raw


if __name__ == "__main__":
    import sys

    print(write(sys.argv[1]))
