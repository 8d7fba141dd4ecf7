"""GPU dump_image (ndd/_ops/debug.py): the files are those the CPU writes, and the
output is the input itself, on the FakeDriver and on a real GPU (``any_gpu``)."""

import numpy as np
import pytest

pytest.importorskip("cuda.bindings")

from gpu_testing import assert_same  # noqa: E402

import ndd  # noqa: E402

RAGGED = [(4, 5, 3), (2, 7, 3), (0, 3, 3), (3, 1, 3)]


def _files(folder):
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}


def _dump_both(tmp_path, monkeypatch, data, **kwargs):
    """The files written and the result, on the GPU and on the CPU (each in its own folder)."""
    results = []
    for device in ("gpu", "cpu"):
        folder = tmp_path / device
        folder.mkdir()
        monkeypatch.chdir(folder)
        x = data.gpu() if device == "gpu" else data
        out = ndd.dump_image(x, **kwargs)
        out.evaluate()
        results.append((_files(folder), out))
    return results


def test_a_batch_writes_the_cpus_files_and_passes_through(tmp_path, monkeypatch, any_gpu):
    rng = np.random.default_rng(0)
    samples = [rng.integers(0, 256, s, dtype=np.uint8) for s in RAGGED]
    (gpu_files, gpu_out), (cpu_files, cpu_out) = _dump_both(
        tmp_path, monkeypatch, ndd.batch(samples, layout="HWC"), suffix="x"
    )
    assert sorted(gpu_files) == ["0-x-0.ppm", "1-x-0.ppm", "2-x-0.ppm", "3-x-0.ppm"]
    assert gpu_files == cpu_files
    assert_same(gpu_out, cpu_out)


def test_a_gray_tensor_writes_one_pgm(tmp_path, monkeypatch, any_gpu):
    x = (np.arange(12, dtype=np.uint8) * 20).reshape(3, 4, 1)
    (gpu_files, gpu_out), (cpu_files, cpu_out) = _dump_both(
        tmp_path, monkeypatch, ndd.tensor(x, layout="HWC")
    )
    assert (
        gpu_files
        == cpu_files
        == {"0--0.ppm": "P2\n4 3\n255\n0 20 40 60 \n80 100 120 140 \n160 180 200 220 \n"}
    )
    assert_same(gpu_out, cpu_out)


def test_the_output_shares_the_inputs_memory(tmp_path, monkeypatch, any_gpu):
    monkeypatch.chdir(tmp_path)
    x = ndd.tensor(np.zeros((2, 2, 3), np.uint8), layout="HWC").gpu()
    out = ndd.dump_image(x)
    assert out.__cuda_array_interface__["data"][0] == x.__cuda_array_interface__["data"][0]


def test_a_host_input_on_the_gpu_is_refused_at_the_call(tmp_path, monkeypatch, any_gpu):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NotImplementedError, match="ndd.dump_image on the GPU"):
        ndd.dump_image(ndd.tensor(np.zeros((2, 2, 3), np.uint8)), device="gpu")
