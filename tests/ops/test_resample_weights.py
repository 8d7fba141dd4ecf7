"""Resampling weights against the reference's, read off float32 resizes of an identity
matrix (see tests/golden/make_resample_weight_goldens.py)."""

import json
import pathlib

import numpy as np
import pytest

import ndd
from ndd import types

GOLDEN = pathlib.Path(__file__).parent.parent / "golden"
CASES = json.loads((GOLDEN / "resample_weights.json").read_text(encoding="utf-8"))
VALUES = np.load(GOLDEN / "resample_weights.npz")
# The filters whose weights (on a scale of 1) are exact between whole pixels, so that
# the row pass of the identity copies it (see the goldens' script).
EXACT = {"INTERP_LINEAR", "INTERP_CUBIC", "INTERP_TRIANGULAR"}


def _weights(case):
    n_in, n_out, roi = case["n_in"], case["n_out"], case["roi"]
    image = np.eye(n_in, dtype=np.float32)[:, :, None]
    kwargs = {"antialias": case["antialias"], "dtype": types.FLOAT}
    if case["interp"] in EXACT:
        kwargs["interp_type"] = getattr(types, case["interp"])
    else:
        kwargs["min_filter"] = getattr(types, case["interp"])
        kwargs["mag_filter"] = types.INTERP_NN
    if roi:
        kwargs["roi_start"] = [0.0, roi[0]]
        kwargs["roi_end"] = [float(n_in), roi[1]]
    out = ndd.resize(ndd.as_tensor(image, layout="HWC"), size=[n_in, n_out], **kwargs)
    return np.asarray(out)[:, :, 0].T


@pytest.mark.parametrize("index", range(len(CASES)))
def test_weights_are_the_references(index):
    case = CASES[index]
    expected = VALUES[f"case{index}"]
    # The Lanczos and Gaussian samples come from sinf and expf: equal where ndd and
    # the reference use the same math library (as on one machine).
    np.testing.assert_array_equal(_weights(case), expected)


def test_the_cases_cover_every_filter_scaling_both_ways_and_regions():
    kinds = {
        (c["interp"], c["n_out"] >= (abs(c["roi"][1] - c["roi"][0]) if c["roi"] else c["n_in"]))
        for c in CASES
    }
    assert {k for k, _ in kinds} == EXACT | {"INTERP_LANCZOS3", "INTERP_GAUSSIAN"}
    assert {up for _, up in kinds} == {True, False}
    assert sum(c["roi"] is not None for c in CASES) >= 10
