"""ndd.dump_image (ndd/_ops/debug.py): files as the reference writes them (probed
with DALI 2.4.0) and the input passed through."""

import numpy as np
import pytest

import ndd


def test_rgb_image_is_written_as_text_ppm(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = (np.arange(18, dtype=np.uint8) * 10).reshape(2, 3, 3)
    out = ndd.dump_image(ndd.tensor(x, layout="HWC"), suffix="a")
    np.testing.assert_array_equal(np.asarray(out), x)
    assert out.layout == "HWC"
    assert (tmp_path / "0-a-0.ppm").read_text(encoding="utf-8") == (
        "P3\n3 2\n255\n0 10 20 30 40 50 60 70 80 \n90 100 110 120 130 140 150 160 170 \n"
    )


def test_gray_batch_writes_one_pgm_per_sample(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = (np.arange(6, dtype=np.uint8) * 30).reshape(2, 3, 1)
    out = ndd.dump_image(ndd.batch([x, x[:1]], layout="HWC"))
    assert [np.asarray(s).shape for s in out] == [(2, 3, 1), (1, 3, 1)]
    assert (tmp_path / "0--0.ppm").read_text(encoding="utf-8") == "P2\n3 2\n255\n0 30 60 \n90 120 150 \n"
    assert (tmp_path / "1--0.ppm").read_text(encoding="utf-8") == "P2\n3 1\n255\n0 30 60 \n"


@pytest.mark.parametrize(
    "data, kwargs, message",
    [
        (np.zeros((2, 2, 2), np.uint8), {}, "1 or 3 channels"),
        (np.zeros((2, 2, 3), np.float32), {}, "uint8"),
        (np.zeros((2, 2), np.uint8), {}, "HWC"),
        (np.zeros((2, 2, 3), np.uint8), {"input_layout": "CHW"}, "'input_layout'"),
    ],
)
def test_bad_input(tmp_path, monkeypatch, data, kwargs, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=message):
        np.asarray(ndd.dump_image(ndd.tensor(data), **kwargs))
