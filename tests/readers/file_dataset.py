"""A small class-folder dataset, made the same way for the reference's goldens
(tests/golden/make_reader_goldens.py) and for ndd's tests."""

import os

# Class folder -> file names; unequal class sizes and a file the default
# filters skip, so that listing, labelling and sharding all matter.
LAYOUT = {
    "cat": ["c0.jpg", "c1.JPG", "c2.png", "notes.txt"],
    "dog": ["d0.jpg", "d1.jpeg", "d2.bmp"],
    "eel": ["e0.png", "e1.webp"],
}


def file_content(folder: str, name: str) -> bytes:
    # Different lengths per file, so that ragged batches are exercised.
    return f"{folder}/{name}|".encode() * (1 + len(name) % 3)


def make_dataset(root: str) -> str:
    for folder, names in LAYOUT.items():
        os.makedirs(os.path.join(root, folder), exist_ok=True)
        for name in names:
            with open(os.path.join(root, folder, name), "wb") as fh:
                fh.write(file_content(folder, name))
    return root


def sample_name(data) -> str:
    """The relative path a sample's bytes encode."""
    return bytes(data).decode().split("|")[0]
