"""Public functions and classes have the reference's parameters: names, kinds,
order and which are required (tests/golden/signatures.json). Defaults may differ
in form: the reference shows None for every operator default, ndd the real value,
and passing None means the default in both."""

import inspect
import json
import pathlib

import numpy as np
import pytest

import ndd

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent / "golden" / "signatures.json").read_text(encoding="utf-8")
)


def _deprecated(entry):
    args = entry.get("schema", {}).get("arguments", {})
    return {name for name, info in args.items() if info.get("deprecated")}


def _params(fn):
    return [
        (p.name, p.kind.name, p.default is inspect.Parameter.empty)
        for p in inspect.signature(fn).parameters.values()
        if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]


def _expected(entry):
    deprecated = _deprecated(entry)
    return [
        (p["name"], p["kind"], p["required"]) for p in entry["parameters"] if p["name"] not in deprecated
    ], deprecated


def _resolve(path):
    obj = ndd
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


CASES = [(name, entry) for name, entry in GOLDEN["top"].items()]
CASES += [(f"math.{name}", entry) for name, entry in GOLDEN["math"].items()]
CASES += [(f"reductions.{name}", entry) for name, entry in GOLDEN["reductions"].items()]


@pytest.mark.parametrize("name, entry", CASES, ids=[c[0] for c in CASES])
def test_function_signature_matches_reference(name, entry):
    expected, deprecated = _expected(entry)
    ours = [p for p in _params(_resolve(name)) if p[0] not in deprecated]
    assert ours == expected


@pytest.mark.parametrize("name", sorted(GOLDEN["classes"]))
def test_class_constructor_parameters_match_reference(name):
    expected, _ = _expected(GOLDEN["classes"][name])
    expected = [p for p in expected if p[0] != "self"]
    assert _params(getattr(ndd, name)) == expected


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: ndd.cast(None, dtype=ndd.int32), "ndd.cast: input 'input' is required, got None"),
        (lambda x: ndd.reductions.sum(None), "ndd.reductions.sum: input 'input' is required, got None"),
        (
            lambda x: ndd.multi_paste(x, None, in_anchors=[[0]], in_ids=[0]),
            "ndd.multi_paste: input 'inputs' is required, got None",
        ),
        (lambda x: ndd.stack(None), "ndd.stack: input 'input_0' is required; got 0 input"),
        (lambda x: ndd.cast(x, dtype=None), "ndd.cast: missing required argument 'dtype' \\(got None\\)"),
        (lambda x: ndd.expand_dims(x, axes=None), "ndd.expand_dims: missing required argument 'axes'"),
    ],
)
def test_none_for_a_required_input_or_argument_is_refused_at_the_call(call, message):
    # The reference refuses these as missing arguments; None used to reach the kernels.
    with pytest.raises(TypeError, match=message):
        call(ndd.tensor([1.0, 2.0]))


def test_none_for_an_optional_input_or_argument_is_its_absence():
    anchor = ndd.roi_random_crop(
        None, in_shape=[10, 10], crop_shape=[4, 4], roi_start=[3, 2], roi_shape=[4, 4]
    )
    assert np.asarray(anchor).tolist() == [3, 2]  # the only window of the ROI's size
    x = ndd.tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    np.testing.assert_array_equal(np.asarray(ndd.normalize(x, mean=None)), np.asarray(ndd.normalize(x)))


def test_class_helpers_take_the_reference_keyword_names():
    assert list(inspect.signature(ndd.DType.from_fw_type).parameters) == ["numpy_type"]
    assert ndd.DType.from_fw_type(numpy_type=np.float32) is ndd.float32
    assert list(inspect.signature(ndd.Device.from_dlpack).parameters) == ["dlpack_device"]
    assert ndd.Device.from_dlpack(dlpack_device=np.zeros(2)) == ndd.Device("cpu")
    # ThreadPool's device_id=-1 (its default) means the current device, as in the reference.
    assert inspect.signature(ndd.ThreadPool).parameters["device_id"].default == -1
    pool = ndd.ThreadPool(2, device_id=-1)
    assert pool.device_id == ndd.Device.current().device_id
    with ndd.EvalContext(thread_pool=pool) as ctx:
        assert ctx.num_threads == 2
