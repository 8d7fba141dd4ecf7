"""Small WebDataset tar shards made deterministically, for the Webdataset reader
tests and for the golden script that reads the same shards with the reference.

Plain Python (``tarfile``) only: the module is imported by the project's tests
and by the reference interpreter.
"""

import io
import os
import tarfile

__all__ = [
    "DIRECTORY",
    "ODD_MEMBERS",
    "SHARDS",
    "add_member",
    "component_bytes",
    "write_index",
    "write_shards",
    "write_tar",
]


def component_bytes(key: str, ext: str) -> bytes:
    """The contents of one component: distinct for every key and extension, of a
    length that is a multiple of 4 (so that it can also be read as int32/float32)."""
    text = f"{key}|{ext}|".encode()
    return text + b"#" * (-len(text) % 4)


# Shard name -> members in archive order, as (path inside the tar, contents or
# None for the default contents). Keys take the text before the first dot of the
# file name; "dir/" parts belong to the key.
SHARDS = {
    "shard0.tar": [
        ("s000.jpg", None),
        ("s000.cls", None),
        ("s000.json", None),
        ("s001.jpg", None),
        ("s001.cls", None),
        ("s002.png", None),  # no .jpg: "jpg;png" alternatives pick .png
        ("s002.cls", None),
        ("s002.json", None),
        ("dir/s003.jpg", None),
        ("dir/s003.cls", None),
        ("dir.x/s004.seg.png", None),  # dots in a folder name and a two-part extension
        ("dir.x/s004.cls", None),
    ],
    "shard1.tar": [
        ("t000.JPG", None),  # upper case: matches "jpg" only without case sensitivity
        ("t000.cls", None),
        ("t001.jpg", None),  # no .cls component
        ("t002.jpg", None),
        ("t002.cls", None),
        ("t002.json", None),
    ],
}


# An archive with entries that are not samples or have unusual names, in
# archive order: ``(name, data)`` for a file, ``(name, DIRECTORY)`` or
# ``(name, ("symlink", target))`` for other entries.
DIRECTORY = "directory"
ODD_MEMBERS = [
    ("a.cls", b"A-cls"),  # the .cls comes first: "jpg;cls" picks it
    ("a.jpg", b"A-jpg"),
    ("folder", DIRECTORY),
    (".hidden.jpg", b"H"),  # hidden files are left out
    ("b.jpg", b"B-jpg1"),
    ("b.jpg", b"B-jpg2"),  # a second file of one extension: the first one counts
    ("link.jpg", ("symlink", "a.jpg")),
    ("noext", b"N"),  # no dot: the extension is empty
    ("m.a.b.jpg", b"M"),  # the extension is "a.b.jpg"
    (".cfg/k.jpg", b"K"),  # a dot in a folder name does not hide the file
    ("c.jpg", b"C1"),
    ("d.jpg", b"D"),
    ("c.cls", b"C2"),  # not next to c.jpg: a sample of its own
]


def add_member(archive: tarfile.TarFile, name: str, data) -> None:
    """An entry with fixed metadata (so the archive bytes are reproducible)."""
    info = tarfile.TarInfo(name)
    info.mtime = 1_600_000_000
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if data == DIRECTORY:
        info.type = tarfile.DIRTYPE
        archive.addfile(info)
    elif isinstance(data, tuple):
        info.type = tarfile.SYMTYPE
        info.linkname = data[1]
        archive.addfile(info)
    else:
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))


def write_tar(path: str, members) -> list:
    """Write a tar of ``(name, data)`` members; returns ``(name, data offset, size)``
    of each regular file, in archive order."""
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as archive:
        for name, data in members:
            add_member(archive, name, data)
    # Data offsets are known once the archive is read back.
    with tarfile.open(path) as archive:
        return [(m.name, m.offset_data, m.size) for m in archive.getmembers() if m.isreg()]


def _split_name(name: str) -> tuple:
    """``(key, extension)``: the extension starts after the first dot of the file name."""
    slash = name.rfind("/") + 1
    dot = name.find(".", slash)
    return (name, "") if dot < 0 else (name[:dot], name[dot + 1 :])


def write_index(path: str, spans) -> None:
    """An index as DALI's ``wds2idx`` writes it: ``v1.2 <samples>``, then one line
    per sample of ``ext offset size name`` groups."""
    samples = []
    last_key = None
    for name, offset, size in spans:
        key, ext = _split_name(name)
        if key != last_key:
            samples.append([])
            last_key = key
        samples[-1].append(f"{ext} {offset} {size} {name}")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"v1.2 {len(samples)}\n")
        for components in samples:
            fh.write(" ".join(components) + "\n")


def write_shards(folder: str) -> tuple:
    """Write the shards and their indices into ``folder``; returns ``(tar paths,
    index paths)``."""
    paths, indices = [], []
    for shard, members in SHARDS.items():
        path = os.path.join(folder, shard)
        contents = []
        for name, data in members:
            key, ext = _split_name(name)
            contents.append((name, component_bytes(key, ext) if data is None else data))
        spans = write_tar(path, contents)
        index = path[: -len(".tar")] + ".idx"
        write_index(index, spans)
        paths.append(path)
        indices.append(index)
    return paths, indices
