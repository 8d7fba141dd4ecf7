"""Small MXNet RecordIO files (.rec + .idx) for the reader tests and goldens.

The writer follows the RecordIO layout on its own (not through the reader
under test): every record is ``magic, (cflag << 29 | length), payload`` padded
to 4 bytes, and a payload holding the magic number at a 4-byte boundary is
split there into parts (cflag 1 = first, 2 = middle, 3 = last; the magic
itself is dropped and comes back between the parts when read). The recipe is
plain arithmetic so that the test venv and the reference venv
(``tests/golden/make_mxnet_goldens.py``) build identical files.
"""

import struct

MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", MAGIC)


def header(labels, record_id: int, id2: int = 0) -> bytes:
    """The image record header (``IRHeader``) followed by the extra labels: one
    label goes in the header itself (flag 0), more follow it (flag = count)."""
    labels = list(labels)
    if len(labels) == 1:
        return struct.pack("<IfQQ", 0, labels[0], record_id, id2)
    return struct.pack("<IfQQ", len(labels), 0.0, record_id, id2) + struct.pack(f"<{len(labels)}f", *labels)


def _part(cflag: int, data: bytes) -> bytes:
    padding = b"\0" * (-len(data) % 4)
    return _MAGIC_BYTES + struct.pack("<I", cflag << 29 | len(data)) + data + padding


def frame(payload: bytes) -> bytes:
    """One RecordIO record: the payload, split at aligned magic numbers."""
    parts, start = [], 0
    for pos in range(0, len(payload) - 3, 4):
        if payload[pos : pos + 4] == _MAGIC_BYTES:
            parts.append(_part(1 if start == 0 else 2, payload[start:pos]))
            start = pos + 4
    parts.append(_part(3 if start else 0, payload[start:]))
    return b"".join(parts)


def image_bytes(index: int, size: int) -> bytes:
    """``size`` deterministic bytes for record ``index``."""
    return bytes((index * 53 + k * 7 + 1) % 256 for k in range(size))


def mxnet_samples() -> list[tuple[list[float], bytes]]:
    """(labels, image bytes) of the test file: one or several labels, sizes that
    need padding, and images holding the magic number (split records)."""
    samples = []
    for i in range(6):
        labels = [float(i) + 0.5] if i % 2 == 0 else [float(i), -1.25, 3.0 * i][: 2 + i % 3]
        image = image_bytes(i, 9 + 5 * i)
        if i == 3:
            image = image[:8] + _MAGIC_BYTES + image[8:] + _MAGIC_BYTES + b"tail"
        samples.append((labels, image))
    return samples


def write_recordio(rec_path, idx_path, samples=None) -> list[int]:
    """Write the records and an index (``position\\toffset`` lines); returns the offsets."""
    samples = mxnet_samples() if samples is None else samples
    offsets, blob = [], b""
    for i, (labels, image) in enumerate(samples):
        offsets.append(len(blob))
        payload = header(labels, i) + image
        blob += frame(payload)
    with open(rec_path, "wb") as fh:
        fh.write(blob)
    with open(idx_path, "w", encoding="utf-8") as fh:
        fh.writelines(f"{i}\t{offset}\n" for i, offset in enumerate(offsets))
    return offsets
