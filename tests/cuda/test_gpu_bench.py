"""bench/gpu_ops.py runs end to end: ``--smoke`` takes every code path once on the
recording FakeDriver (its figures mean nothing; a GPU machine gives the real ones)."""

import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("cuda.bindings")

from ndd._cuda import kernel_files  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROWS = [
    "copy DtoD",
    "cast f32->",
    "a + b (f32)",
    "a * 2.0 (f32)",
    "transpose 2D (f32)",
    "pad 2D (f32)",
    "ndd ",
    "reference ",
]


@pytest.fixture(scope="module")
def smoke_output():
    if not (kernel_files.KERNELS_DIR / kernel_files.MANIFEST_NAME).exists():
        pytest.skip("ndd was built without its GPU kernels (NVRTC missing)")
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gpu_ops.py"), "--smoke"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


@pytest.mark.parametrize("row", ROWS)
def test_smoke_run_prints_every_row_of_the_table(smoke_output, row):
    assert any(line.startswith(row) for line in smoke_output.splitlines()), smoke_output


def test_smoke_run_says_its_figures_are_meaningless(smoke_output):
    lines = smoke_output.splitlines()
    assert lines[0].startswith("SMOKE RUN") and lines[-1].startswith("SMOKE RUN")


def test_smoke_run_measures_the_ndd_dispatch_cost(smoke_output):
    ndd_row = next(line for line in smoke_output.splitlines() if line.startswith("ndd "))
    assert float(ndd_row.split()[1]) > 0


STAGES = ("decode", "random_resized_crop", "flip", "crop_mirror_normalize", "resize")


def _gpu_pipeline(*options, codec=True):
    """The standard output of ``bench/gpu_pipeline.py`` run with ``options`` (skipped
    without the kernels, or without nvImageCodec when the run decodes)."""
    if codec:
        pytest.importorskip("nvidia.nvimgcodec")
    if not (kernel_files.KERNELS_DIR / kernel_files.MANIFEST_NAME).exists():
        pytest.skip("ndd was built without its GPU kernels (NVRTC missing)")
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gpu_pipeline.py"), *options],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def _pipeline_rows(stdout):
    return [
        line.split() for line in stdout.splitlines() if line.split()[:1] in (["training"], ["validation"])
    ]


def test_the_gpu_pipeline_benchmark_runs_its_pipelines_in_a_smoke_run(tmp_path):
    """bench/gpu_pipeline.py --smoke: ndd's training and validation pipelines on the
    FakeDriver (nvImageCodec's CPU codecs decode), one row each."""
    stdout = _gpu_pipeline("--smoke", "--stages", "--data", str(tmp_path / "jpegs"))
    rows = _pipeline_rows(stdout)
    assert [row[0] for row in rows] == ["training", "validation"]
    assert all(float(row[1]) > 0 for row in rows)
    stages = {line.split()[0]: line.split()[1] for line in stdout.splitlines() if len(line.split()) > 1}
    for stage in STAGES:
        assert float(stages[stage]) > 0, stage
    assert "SMOKE RUN" in stdout


def test_the_gpu_pipeline_benchmark_measures_ndds_host_time_per_batch():
    """bench/gpu_pipeline.py --host-cost: a row per pipeline with ndd's host time per
    batch on the recording FakeDriver, and the images per second it allows."""
    rows = _pipeline_rows(_gpu_pipeline("--host-cost", "--repeats", "1", "--batch-size", "8", codec=False))
    assert [row[0] for row in rows] == ["training", "validation"]
    assert all(float(row[1]) > 0 and row[-1] == "images/s" for row in rows)


def test_the_gpu_pipeline_benchmark_splits_each_operators_time_into_host_and_gpu(tmp_path):
    """bench/gpu_pipeline.py --gpu-times: a row per operator with its host and GPU
    milliseconds (on the FakeDriver in a smoke run, its events' fixed 1 ms)."""
    lines = _gpu_pipeline("--smoke", "--gpu-times", "--data", str(tmp_path / "jpegs")).splitlines()
    assert lines[0].startswith("SMOKE RUN") and lines[-1].startswith("SMOKE RUN")
    rows = {line.split()[0]: line.split() for line in lines if len(line.split()) >= 5}
    for stage in STAGES:
        host, gpu = float(rows[stage][1]), float(rows[stage][3])
        assert host > 0 and gpu > 0, rows[stage]
