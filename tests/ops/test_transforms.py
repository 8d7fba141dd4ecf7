"""ndd.transforms.* matrices and ndd.coord_transform against the reference goldens
(tests/golden/transforms_reference.json, made by make_transforms_goldens.py) and numpy."""

import json
import pathlib
import warnings

import numpy as np
import pytest

import ndd
from ndd._prepare.args import InvalidArgumentError

GOLDEN = pathlib.Path(__file__).parent.parent / "golden" / "transforms_reference.json"
CASES = json.loads(GOLDEN.read_text(encoding="utf-8"))["cases"]


def _op(name):
    obj = ndd
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _arg(value):
    return (
        np.asarray(value, np.float32)
        if isinstance(value, list) and value and isinstance(value[0], list)
        else value
    )


def _case_id(case):
    return f"{case['op']}-{'batch' if case['batch'] else 'sample'}-{json.dumps(case.get('kwargs'))}"


def _assert_matrix(actual, expected):
    actual = np.asarray(actual)
    expected = np.asarray(expected, np.float32)
    assert actual.dtype == np.float32
    assert actual.shape == expected.shape
    # float32 arithmetic in the reference's order: equal to within an ulp or two.
    np.testing.assert_allclose(actual, expected, rtol=3e-7, atol=3e-7)


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_golden(case):
    fn = _op(case["op"])
    kwargs = {k: _arg(v) for k, v in case["kwargs"].items()}
    if case["op"] == "transforms.combine":
        result = fn(*[np.asarray(m, np.float32) for m in case["inputs"]], **kwargs)
        _assert_matrix(result, case["expected"])
        return
    if not case["batch"]:
        args = () if case["input"] is None else (np.asarray(case["input"], np.float32),)
        expected = case["expected"]
        if (
            case["op"] == "coord_transform"
            and np.ndim(case["kwargs"].get("MT")) == 0
            and "MT" in case["kwargs"]
        ):
            # Divergence: a scalar MT gives vectors of the input's length, as documented
            # (the reference appends a zero component).
            expected = np.asarray(expected)[:, :-1]
        _assert_matrix(fn(*args, **kwargs), expected)
        return
    per_sample = {
        k: ndd.batch([np.asarray(v, np.float32) for v in vals]) for k, vals in case["per_sample"].items()
    }
    n = len(case["expected"])
    if case["input"] is None:
        result = fn(batch_size=n, **per_sample, **kwargs)
    else:
        result = fn(ndd.batch([np.asarray(x, np.float32) for x in case["input"]]), **per_sample, **kwargs)
    assert isinstance(result, ndd.Batch)
    samples = [np.asarray(t) for t in result.tensors]
    assert len(samples) == n
    for actual, expected in zip(samples, case["expected"], strict=True):
        _assert_matrix(actual, expected)


def test_matrix_layout_and_shape():
    m = ndd.transforms.rotation(angle=90)
    assert m.dtype == ndd.float32
    assert m.layout == "**"
    assert m.shape == (2, 3)
    assert ndd.transforms.rotation(angle=10, axis=[0, 1, 0]).shape == (3, 4)


def test_composition_matches_numpy():
    t = np.asarray(ndd.transforms.translation(offset=[1, 2]))
    r = np.asarray(ndd.transforms.rotation(angle=30))

    def h(m):
        return np.vstack([m, [0, 0, 1]]).astype(np.float64)

    after = np.asarray(ndd.transforms.rotation(t, angle=30))
    before = np.asarray(ndd.transforms.rotation(t, angle=30, reverse_order=True))
    np.testing.assert_allclose(after, (h(r) @ h(t))[:2], atol=1e-6)
    np.testing.assert_allclose(before, (h(t) @ h(r))[:2], atol=1e-6)


def test_coord_transform_applies_matrix():
    pts = np.random.default_rng(0).normal(size=(5, 7, 3)).astype(np.float32)
    mt = np.asarray(ndd.transforms.rotation(angle=20, axis=[1, 2, 3], center=[1, 0, 0]))
    out = np.asarray(ndd.coord_transform(pts, MT=mt))
    assert out.shape == (5, 7, 3)
    np.testing.assert_allclose(out, pts @ mt[:, :3].T + mt[:, 3], atol=1e-5)


def test_coord_transform_keeps_input_type_when_asked():
    pts = np.array([[1, 2], [3, 4]], np.int32)
    out = ndd.coord_transform(pts, M=np.array([[1, 1], [0, 2]], np.float32), dtype=ndd.int32)
    assert out.dtype == ndd.int32
    np.testing.assert_array_equal(np.asarray(out), [[3, 4], [7, 8]])
    assert ndd.coord_transform(pts, M=2.0).dtype == ndd.float32


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ndd.transforms.translation(np.eye(3, dtype=np.float32), offset=[1, 2]), "input"),
        (lambda: ndd.transforms.translation(np.eye(2, 3), offset=[1, 2]), "float32"),
        (lambda: ndd.transforms.rotation(angle=10, axis=[0, 0, 0]), "axis"),
        (lambda: ndd.transforms.rotation(angle=10, axis=[0, 1]), "axis"),
        (lambda: ndd.transforms.rotation(angle=10, center=[1, 2, 3]), "center"),
        (lambda: ndd.transforms.scale(scale=[1, 2], ndim=3), "scale"),
        (lambda: ndd.transforms.shear(shear=[0.1, 0.2], angles=[1, 2]), "exclusive"),
        (lambda: ndd.transforms.shear(angles=[95, 0]), "angles"),
        (lambda: ndd.transforms.shear(shear=[1, 2, 3]), "shear"),
        (lambda: ndd.transforms.crop(from_start=[0, 0], from_end=[1, 2, 3]), "same number"),
        (
            lambda: ndd.transforms.combine(np.eye(2, 3, dtype=np.float32), np.eye(3, 4, dtype=np.float32)),
            "combine",
        ),
        (lambda: ndd.coord_transform(np.ones((3, 2), np.float32), M=[[1, 2, 3]]), "'M'"),
        (lambda: ndd.coord_transform(np.ones((3, 2), np.float32), MT=2.0, T=[1, 2]), "'MT'"),
        (lambda: ndd.coord_transform(np.ones(2, np.float32)), "2 dimensions"),
        (lambda: ndd.coord_transform(np.ones((2, 2), np.float32), dtype=ndd.uint8), "dtype"),
    ],
)
def test_errors_name_the_argument(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        np.asarray(call())


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_coord_transform_of_a_batch_equals_each_sample_alone(dtype):
    """Samples sharing the arguments are transformed together; each gets what it gets alone, to the bit."""
    rng = np.random.default_rng(1)
    samples = [rng.uniform(-50, 50, shape).astype(dtype) for shape in [(14, 3), (5, 3), (0, 3), (1, 3)]]
    mt = np.asarray(ndd.transforms.rotation(angle=33, axis=[1, 2, 3], center=[1, 0, 2]))
    out_type = ndd.float32 if dtype is np.float32 else ndd.int32
    for kwargs in (dict(MT=mt), dict(M=[[0.3, 1, 2], [4, 5, 6]], T=[0.25, -7]), dict(dtype=out_type)):
        out = ndd.coord_transform(ndd.batch(samples), **kwargs)
        for got, sample in zip(out, samples, strict=True):
            alone = np.asarray(ndd.coord_transform(sample, **kwargs))
            assert np.asarray(got).dtype == alone.dtype
            np.testing.assert_array_equal(np.asarray(got), alone, strict=True)
    # Arguments given per sample, and samples without components.
    per_sample = ndd.batch([np.float32([[2, 0, 0], [0, 1, 0]]), np.float32([[1, 1, 1], [0, 0, 1]])] * 2)
    out = ndd.coord_transform(ndd.batch(samples), M=per_sample)
    for got, sample, m in zip(out, samples, per_sample, strict=True):
        np.testing.assert_array_equal(
            np.asarray(got), np.asarray(ndd.coord_transform(sample, M=np.asarray(m)))
        )
    empty = ndd.coord_transform(ndd.batch([np.zeros((3, 0), np.float32), np.zeros((1, 0), np.float32)]))
    assert [np.asarray(x).shape for x in empty] == [(3, 0), (1, 0)]


def test_coord_transform_of_points_without_components_and_of_infinities():
    out = ndd.coord_transform(np.zeros((3, 0), np.float32))
    assert np.asarray(out).shape == (3, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning escapes: inf * 0 is NaN, as in IEEE
        moved = np.asarray(ndd.coord_transform(np.float32([[np.inf, 1.0]]), M=[[1, 1], [0, 1]]))
    np.testing.assert_array_equal(moved, [[np.inf, np.nan]])


def test_transform_messages_show_plain_numbers():
    with pytest.raises(ValueError, match=r"'shear' must have 2 or 6 elements, got \[0.3\]$"):
        ndd.transforms.shear(shear=0.3)


@pytest.mark.parametrize(
    "call, expected",
    [
        # The reference's matrices for a center of one value: every coordinate.
        (lambda: ndd.transforms.rotation(angle=90.0, center=1.0), [[0, -1, 2], [1, 0, 0]]),
        (lambda: ndd.transforms.scale(scale=[2.0, 2.0], center=1.0), [[2, 0, -1], [0, 2, -1]]),
        (
            lambda: ndd.transforms.scale(scale=[2.0, 2.0, 2.0], center=1.0),
            [[2, 0, 0, -1], [0, 2, 0, -1], [0, 0, 2, -1]],
        ),
    ],
)
def test_a_center_of_one_value_is_every_coordinate(call, expected):
    np.testing.assert_allclose(np.asarray(call()), expected, atol=1e-6)


@pytest.mark.parametrize("name", ["M", "MT"])
def test_coord_transform_refuses_an_empty_matrix(name):
    # As the reference; an empty M gave points of no coordinates.
    points = ndd.tensor(np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match=f"'{name}' must not be empty"):
        np.asarray(ndd.coord_transform(points, **{name: []}))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(M=[[[1]]]), r"'M' must be a matrix \(2-D\), got shape \(1, 1, 1\)"),
        (dict(M=np.eye(2)[None]), r"'M' must be a matrix \(2-D\), got shape \(1, 2, 2\)"),
        (dict(MT=[[[1, 0, 0], [0, 1, 0]]]), r"'MT' must be a matrix \(2-D\), got shape \(1, 2, 3\)"),
        (dict(T=[[1, 1]]), r"'T' must be a vector \(1-D\), got shape \(1, 2\)"),
    ],
)
def test_coord_transform_refuses_arguments_of_too_many_dimensions(kwargs, match):
    # As the reference; [[[1]]] was taken as a scale of 1, [[1, 1]] as the vector.
    points = ndd.tensor(np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match=match):
        np.asarray(ndd.coord_transform(points, **kwargs))


def test_a_rotation_axis_of_one_value_is_every_component():
    """As in the reference: axis=1.0 (or [1.0]) rotates about (1, 1, 1), per sample too."""
    expected = np.asarray(ndd.transforms.rotation(angle=30.0, axis=[1.0, 1.0, 1.0]))
    assert expected.shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(ndd.transforms.rotation(angle=30.0, axis=1.0)), expected)
    per_sample = ndd.transforms.rotation(
        angle=30.0, axis=ndd.as_batch([np.float32([2.0]), np.float32([0, 0, 1])])
    )
    np.testing.assert_array_equal(np.asarray(per_sample.select(0)), expected)
    np.testing.assert_allclose(
        np.asarray(per_sample.select(1)), np.asarray(ndd.transforms.rotation(angle=30.0, axis=[0, 0, 1]))
    )
    with pytest.raises(ValueError, match=r"'axis' must have 1 or 3 elements, got \[1.0, 2.0\]"):
        ndd.transforms.rotation(angle=30.0, axis=ndd.as_batch([np.float32([1, 2])])).evaluate()


def test_combine_skips_none_inputs():
    m = ndd.transforms.translation(offset=[1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(ndd.transforms.combine(m, None, m)), [[1, 0, 2], [0, 1, 4]])
    with pytest.raises(TypeError, match="input 'input_1' is required"):
        ndd.transforms.combine(m, None)


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: ndd.transforms.shear(shear=b"x"),
            r"ndd\.transforms\.shear: 'shear' must be numbers \(one, a list or an array of them\), got bytes b'x'",
        ),
        (
            lambda: ndd.coord_transform(ndd.tensor(np.zeros((3, 2), np.float32)), MT="HWC"),
            r"ndd\.coord_transform: 'MT' must be numbers \(one, a list or an array of them\), got str 'HWC'",
        ),
        (
            lambda: ndd.transforms.shear(shear=[[1, 2], [3]]),
            r"ndd\.transforms\.shear: 'shear' must be a list of numbers or a rectangular list of lists",
        ),
    ],
    ids=["bytes", "string", "ragged"],
)
# (The array arguments of every operator convert so: warp_perspective's 'matrix',
# normalize's 'mean', multi_paste's anchors; see test_array_arguments_must_be_numbers.)
def test_arguments_that_are_not_numbers_are_refused_naming_them(call, message):
    # numpy's "could not convert string to float" and "inhomogeneous shape" errors
    # named neither the operator nor the argument (found by fuzzing).
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"scale": 2.0}, [[2, 0, 2], [0, 2, 4]]),
        ({"scale": [2.0]}, [[2, 0, 2], [0, 2, 4]]),
        # About (1, 1), after the input: x' = 2 (x + 1) - 1, y' = 2 (y + 2) - 1.
        ({"scale": 2.0, "center": [1.0]}, [[2, 0, 1], [0, 2, 3]]),
        ({"scale": 2.0, "center": [1.0, 1.0]}, [[2, 0, 1], [0, 2, 3]]),
        ({"scale": 2.0, "center": [1.0, 1.0], "reverse_order": True}, [[2, 0, 0], [0, 2, 1]]),
    ],
)
def test_one_scale_value_takes_the_input_matrix_dimensions(kwargs, expected):
    # As in the reference: ndim is needed only without an input matrix.
    m = np.array([[1, 0, 1], [0, 1, 2]], np.float32)
    np.testing.assert_array_equal(np.asarray(ndd.transforms.scale(m, **kwargs)), expected)
    batch = ndd.transforms.scale(ndd.batch([m, m]), **kwargs)
    np.testing.assert_array_equal(np.asarray(batch.select(1)), expected)


def test_one_scale_value_without_an_input_is_one_dimensional():
    np.testing.assert_array_equal(np.asarray(ndd.transforms.scale(scale=2.0)), [[2, 0]])
    with pytest.raises(InvalidArgumentError, match="'center' must have 1 element for a 1-D transform"):
        ndd.transforms.scale(scale=2.0, center=[1.0, 1.0])
