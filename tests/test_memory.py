"""The memory size that claimed sizes are checked against (ndd/_memory.py)."""

from ndd import _memory


def _limit_files(tmp_path, *texts):
    paths = []
    for i, text in enumerate(texts):
        path = tmp_path / f"limit{i}"
        path.write_bytes(text)
        paths.append(str(path))
    return paths


def test_a_cgroup_v2_limit_is_read(tmp_path):
    assert _memory._cgroup_limit_bytes(_limit_files(tmp_path, b"1073741824\n")) == 2**30


def test_max_and_missing_files_set_no_limit(tmp_path):
    paths = _limit_files(tmp_path, b"max\n") + [str(tmp_path / "absent")]
    assert _memory._cgroup_limit_bytes(paths) is None


def test_the_smallest_of_several_limits_counts(tmp_path):
    paths = _limit_files(tmp_path, b"9223372036854771712\n", b"536870912\n", b"0\n")
    assert _memory._cgroup_limit_bytes(paths) == 2**29


def test_the_process_memory_is_at_most_the_machine_memory():
    machine = _memory._machine_memory_bytes()
    assert machine and 0 < _memory.physical_memory_bytes() <= machine


def test_half_of_memory_is_the_threshold(monkeypatch):
    monkeypatch.setattr(_memory, "physical_memory_bytes", lambda: 1000)
    assert not _memory.exceeds_half_of_memory(500)
    assert _memory.exceeds_half_of_memory(501)
