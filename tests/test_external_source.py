"""``ndd.ExternalSource``: user data from callables and iterables, one item per call.

The reference's signature and observed results are stored in
``tests/golden/external_source.json`` (made by ``make_external_source_goldens.py``)
and replayed here; the other tests pin what the goldens cannot show: copies of
the caller's buffers, other kinds of data, every evaluation mode, use by
operators, and the error messages.
"""

import builtins
import functools
import inspect
import json
import pathlib

import numpy as np
import pytest

import ndd
from ndd._cuda import driver

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent / "golden" / "external_source.json").read_text(encoding="utf-8")
)
MODES = [ndd.EvalMode.deferred, ndd.EvalMode.eager, ndd.EvalMode.sync_cpu, ndd.EvalMode.sync_full]
MODE_IDS = [m.name for m in MODES]


def _from_torch(array):
    """``array`` as a torch tensor sharing its memory (the test is skipped without torch)."""
    torch = pytest.importorskip("torch")
    return torch.from_numpy(array)


def _namespace():
    namespace = {"np": np, "ndd": ndd}
    exec(GOLDEN["prelude"], namespace)  # noqa: S102 - the helpers the golden cases were recorded with
    return namespace


def _params(fn):
    params = []
    for p in inspect.signature(fn).parameters.values():
        entry = {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        if not entry["required"]:
            entry["default"] = p.default
        params.append(entry)
    return params


# -- the reference's signature and recorded behaviour ---------------------------


def test_constructor_signature_matches_reference():
    assert _params(ndd.ExternalSource) == GOLDEN["signature"]["__init__"]


def test_call_signature_matches_reference():
    assert _params(ndd.ExternalSource.__call__) == GOLDEN["signature"]["__call__"]


def _assert_same_result(result, expected):
    if isinstance(expected, list):
        assert isinstance(result, tuple) and len(result) == len(expected)
        for r, e in zip(result, expected, strict=True):
            _assert_same_result(r, e)
        return
    assert type(result).__name__ == expected["kind"]
    assert str(result.dtype) == expected["dtype"]
    assert result.layout == expected["layout"]
    np_type = ndd.dtype(expected["dtype"]).numpy
    if expected["kind"] == "Batch":
        assert result.batch_size == len(expected["values"])
        samples = [np.asarray(s) for s in result]
        wanted = [
            np.array(v, dtype=np_type).reshape(s)
            for v, s in zip(expected["values"], expected["shape"], strict=True)
        ]
    else:
        samples = [np.asarray(result)]
        wanted = [np.array(expected["values"], dtype=np_type).reshape(expected["shape"])]
    for got, want in zip(samples, wanted, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


CASES = [c for c in GOLDEN["cases"] if "make_error" not in c]
MAKE_ERRORS = [c for c in GOLDEN["cases"] if "make_error" in c]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_reference_case(case):
    source = eval(case["make"], _namespace())  # noqa: S307 - expressions recorded by our golden script
    for kwargs, expected in zip(case["calls"], case["results"], strict=True):
        if isinstance(expected, dict) and expected.get("stop"):
            with pytest.raises(StopIteration):
                source(**kwargs)
        elif isinstance(expected, dict) and "error" in expected:
            with pytest.raises(getattr(builtins, expected["error"]), match="ndd.ExternalSource"):
                source(**kwargs)
        else:
            _assert_same_result(source(**kwargs), expected)


@pytest.mark.parametrize("case", MAKE_ERRORS, ids=[c["name"] for c in MAKE_ERRORS])
def test_reference_construction_error(case):
    with pytest.raises(getattr(builtins, case["make_error"]), match="ndd.ExternalSource"):
        eval(case["make"], _namespace())  # noqa: S307 - expressions recorded by our golden script


# -- kinds of data ----------------------------------------------------------------


class _DLPackOnly:
    """Exposes an array through DLPack only."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class _ArrayInterfaceOnly:
    """Exposes an array through ``__array_interface__`` only."""

    def __init__(self, array):
        self._array = array
        self.__array_interface__ = array.__array_interface__


@pytest.mark.parametrize(
    "wrap",
    [np.asarray, _from_torch, _DLPackOnly, _ArrayInterfaceOnly, ndd.as_tensor, ndd.tensor],
    ids=["numpy", "torch", "dlpack", "array_interface", "ndd.as_tensor", "ndd.tensor"],
)
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int64, np.float16, np.float32, np.bool_])
def test_tensor_like_items_give_their_values_and_dtype(wrap, dtype):
    data = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    result = ndd.ExternalSource(lambda: wrap(data))()
    assert isinstance(result, ndd.Tensor)
    assert result.dtype == ndd.dtype(dtype)
    got = np.asarray(result)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, data)


def test_non_contiguous_and_read_only_arrays_are_accepted():
    # The reference rejects strided numpy views; ndd takes them as they read.
    base = np.arange(24, dtype=np.int32).reshape(4, 6)
    view = base[::2, 1:5]
    read_only = np.broadcast_to(np.arange(3), (2, 3))
    np.testing.assert_array_equal(np.asarray(ndd.ExternalSource(lambda: view)()), view)
    np.testing.assert_array_equal(np.asarray(ndd.ExternalSource(lambda: read_only)()), read_only)


def test_torch_items_in_batch_mode():
    data = _from_torch(np.arange(6, dtype=np.int32).reshape(2, 3))
    result = ndd.ExternalSource(lambda: data)(batch_size=2)
    assert isinstance(result, ndd.Batch)
    for sample in result:
        np.testing.assert_array_equal(np.asarray(sample), data.numpy())


def test_list_of_arrays_is_a_stacked_tensor_not_a_batch():
    arrays = [np.full((2, 2), i, dtype=np.float32) for i in range(3)]
    result = ndd.ExternalSource(lambda: arrays)()
    assert isinstance(result, ndd.Tensor)
    np.testing.assert_array_equal(np.asarray(result), np.stack(arrays))


def test_ndd_batch_items_keep_ragged_samples():
    samples = [np.arange(n, dtype=np.int16) for n in (1, 4, 2)]
    result = ndd.ExternalSource(lambda: ndd.as_batch(samples))()
    assert isinstance(result, ndd.Batch)
    assert result.shape == [(1,), (4,), (2,)]
    for got, want in zip(result, samples, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)


def test_pending_ndd_results_are_accepted_in_deferred_mode():
    base = ndd.tensor(np.arange(4, dtype=np.int32))
    with ndd.EvalMode.deferred:
        source = ndd.ExternalSource(lambda: base * 3)
        result = source()
        np.testing.assert_array_equal(np.asarray(result), np.arange(4) * 3)


def test_output_device_is_cpu():
    for device in ["cpu", ndd.Device("cpu"), None]:
        assert ndd.ExternalSource(lambda: np.zeros(2), device=device)().device == ndd.Device("cpu")


# -- copies of the caller's memory --------------------------------------------------


def _refilled(make_item, reference_values, mode, batch_size=None):
    """Pull an item, apply an operator, then overwrite the caller's buffer; return
    (result, operator result) read afterwards."""
    source = ndd.ExternalSource(make_item)
    with mode:
        result = source(batch_size=batch_size)
        doubled = result * 2
    reference_values[...] = 99
    return result, doubled


def _values(x):
    return [np.asarray(s) for s in x] if isinstance(x, ndd.Batch) else [np.asarray(x)]


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("kind", ["numpy", "torch", "ndd.as_tensor"])
@pytest.mark.parametrize("batch_size", [None, 3])
def test_refilling_the_buffer_after_the_call_does_not_change_results(mode, kind, batch_size):
    buffer = np.arange(6, dtype=np.float32).reshape(2, 3)
    original = buffer.copy()
    wrap = {
        "numpy": lambda: buffer,
        "torch": lambda: _from_torch(buffer),
        "ndd.as_tensor": lambda: ndd.as_tensor(buffer),
    }
    result, doubled = _refilled(wrap[kind], buffer, mode, batch_size)
    for got in _values(result):
        np.testing.assert_array_equal(got, original)
    for got in _values(doubled):
        np.testing.assert_array_equal(got, original * 2)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_refilling_as_batch_samples_does_not_change_results(mode):
    samples = [np.arange(3, dtype=np.int32), np.arange(5, dtype=np.int32)]
    originals = [s.copy() for s in samples]
    source = ndd.ExternalSource(lambda: ndd.as_batch(samples))
    with mode:
        result = source()
        shifted = result + 1
    for s in samples:
        s[...] = -7
    for got, want in zip(result, originals, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
    for got, want in zip(shifted, originals, strict=True):
        np.testing.assert_array_equal(np.asarray(got), want + 1)


def test_one_buffer_refilled_for_each_item():
    buffer = np.zeros(4, dtype=np.int64)

    def refill():
        buffer[...] += 1
        return buffer

    source = ndd.ExternalSource(refill)
    items = [source() for _ in range(3)]
    for i, item in enumerate(items):
        np.testing.assert_array_equal(np.asarray(item), np.full(4, i + 1))


# -- outputs used by operators, in every evaluation mode --------------------------


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_sample_mode_outputs_feed_operators(mode):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.arange(6, 12, dtype=np.int32).reshape(2, 3)
    source = ndd.ExternalSource(lambda: (a, b), num_outputs=2)
    with mode:
        x, y = source()
        total = x + y
        as_float = ndd.cast(x, dtype=ndd.float32)
        stacked = ndd.stack(x, y)
    assert isinstance(total, ndd.Tensor)
    np.testing.assert_array_equal(np.asarray(total), a + b)
    np.testing.assert_array_equal(np.asarray(as_float), a.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(stacked), np.stack([a, b]))


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_batch_mode_outputs_feed_operators(mode):
    images = [np.full((2, 2), i, dtype=np.uint8) for i in range(4)]
    label = np.array([3], dtype=np.int32)
    source = ndd.ExternalSource(lambda: (ndd.batch(images), label), num_outputs=2)
    with mode:
        x, y = source(batch_size=4)
        scaled = x * 2
        as_float = ndd.cast(x, dtype=ndd.float32)
        stacked = ndd.stack(x, x + x)  # u8 + u8 stays u8, as stack needs
        labels = y + 1
    assert isinstance(scaled, ndd.Batch) and scaled.batch_size == 4
    for i in range(4):
        np.testing.assert_array_equal(np.asarray(scaled.select(i)), images[i] * 2)
        np.testing.assert_array_equal(np.asarray(as_float.select(i)), images[i].astype(np.float32))
        np.testing.assert_array_equal(np.asarray(stacked.select(i)), np.stack([images[i], images[i] * 2]))
        np.testing.assert_array_equal(np.asarray(labels.select(i)), label + 1)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_dtype_conversion_in_every_mode(mode):
    data = np.array([[0.5, -1.5, 2.4], [260.0, -3.0, 1.5]], dtype=np.float32)
    source = ndd.ExternalSource(lambda: data, dtype=ndd.uint8, layout="HW")
    with mode:
        result = source()
        batch = source(batch_size=2)
    expected = np.array([[1, 0, 2], [255, 0, 2]], dtype=np.uint8)  # round half away, saturate
    assert result.dtype == ndd.uint8 and result.layout == "HW"
    np.testing.assert_array_equal(np.asarray(result), expected)
    assert batch.dtype == ndd.uint8 and batch.layout == "HW"
    for sample in batch:
        np.testing.assert_array_equal(np.asarray(sample), expected)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_cycling_in_every_mode(mode):
    data = [np.array([i], dtype=np.int32) for i in range(2)]
    source = ndd.ExternalSource(data, cycle="raise")
    with mode:
        first = [int(np.asarray(source() + 10)[0]) for _ in range(2)]
        with pytest.raises(StopIteration):
            source()
        second = [int(np.asarray(source() + 10)[0]) for _ in range(2)]
    assert first == second == [10, 11]


# -- how the source is iterated -----------------------------------------------------


class _CountingIterable:
    """An iterable that counts how often ``iter()`` starts it."""

    def __init__(self, items):
        self.items = items
        self.starts = 0

    def __iter__(self):
        self.starts += 1
        return iter(self.items)


@pytest.mark.parametrize("cycle", ["no", "quiet", "raise"])
def test_iterable_is_started_once_at_construction(cycle):
    iterable = _CountingIterable([np.zeros(1)])
    ndd.ExternalSource(iterable, cycle=cycle)
    assert iterable.starts == 1


def test_each_quiet_restart_starts_the_iterable_again():
    iterable = _CountingIterable([np.array([i]) for i in range(2)])
    source = ndd.ExternalSource(iterable, cycle="quiet")
    values = [int(np.asarray(source())[0]) for _ in range(5)]
    assert values == [0, 1, 0, 1, 0]
    assert iterable.starts == 3


def test_generator_function_is_called_for_each_epoch():
    calls = []

    def epoch():
        calls.append(len(calls))
        yield np.array([len(calls)])

    source = ndd.ExternalSource(epoch, cycle="quiet")
    values = [int(np.asarray(source())[0]) for _ in range(3)]
    assert values == [1, 2, 3]
    assert len(calls) == 3


class _EpochMaker:
    """An object whose ``__call__`` is a generator function, and a generator method."""

    def __call__(self, start=0):
        for i in range(start, start + 2):
            yield np.array([i])

    def epoch(self):
        yield from self()


@pytest.mark.parametrize(
    "make_source",
    [
        lambda: _EpochMaker(),
        lambda: _EpochMaker().epoch,
        lambda: functools.partial(_EpochMaker(), 0),
    ],
    ids=["callable object", "method", "partial"],
)
def test_generator_function_forms_restart_each_epoch(make_source):
    source = ndd.ExternalSource(make_source(), cycle="quiet")
    assert [int(np.asarray(source())[0]) for _ in range(5)] == [0, 1, 0, 1, 0]


def test_callable_is_called_once_per_item():
    calls = []
    source = ndd.ExternalSource(lambda: calls.append(1) or np.array([len(calls)]))
    assert calls == []
    for i in range(3):
        assert int(np.asarray(source())[0]) == i + 1
    assert len(calls) == 3


def test_errors_raised_by_the_source_pass_through():
    def broken():
        raise KeyError("no such sample")

    with pytest.raises(KeyError, match="no such sample"):
        ndd.ExternalSource(broken)()


def test_bad_arguments_leave_the_source_untouched():
    iterable = _CountingIterable([np.zeros(1)])
    with pytest.raises(ValueError, match="'cycle'"):
        ndd.ExternalSource(iterable, cycle="sometimes")
    with pytest.raises(ValueError, match="'layout'"):
        ndd.ExternalSource(iterable, layout=["HW", "HW"])
    assert iterable.starts == 0


def test_bad_batch_size_does_not_consume_an_item():
    source = ndd.ExternalSource([np.array([i]) for i in range(2)])
    with pytest.raises(ValueError, match="'batch_size'"):
        source(batch_size=-1)
    assert int(np.asarray(source())[0]) == 0


def test_num_outputs_accepts_numpy_integers():
    a, b = ndd.ExternalSource(lambda: (np.zeros(2), np.ones(2)), num_outputs=np.int64(2))()
    np.testing.assert_array_equal(np.asarray(b), np.ones(2))


# -- errors name the class and the argument ------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"cycle": "sometimes"}, ValueError, "'cycle' must be"),
        ({"num_outputs": 0}, ValueError, "'num_outputs' must be a positive int, got 0"),
        ({"num_outputs": 1.0}, TypeError, "'num_outputs' must be a positive int, got float"),
        ({"num_outputs": True}, TypeError, "'num_outputs' must be a positive int, got bool"),
        ({"layout": 5}, TypeError, "'layout' must be a string or None, got int"),
        ({"dtype": "float33"}, ValueError, "'dtype' 'float33' is not a data type"),
        ({"dtype": [ndd.int32, ndd.int8]}, ValueError, "'dtype' must be a single value or a sequence of 1"),
        ({"device": "tpu"}, ValueError, "'device' 'tpu' is not a device"),
    ],
)
def test_argument_errors(kwargs, error, match):
    with pytest.raises(error, match=f"^ndd.ExternalSource: {match}"):
        ndd.ExternalSource([np.zeros(1)], **kwargs)


@pytest.mark.parametrize(
    "source, match",
    [
        (None, "'source' must be a callable, an iterable or a generator function, got NoneType"),
        (3.5, "'source' must be a callable, an iterable or a generator function, got float"),
        (lambda index: index, r"'source' must be callable without arguments, but it takes \(index\)"),
        (lambda *args: args, r"'source' must be callable without arguments, but it takes \(\*args\)"),
    ],
    ids=["None", "float", "one parameter", "varargs"],
)
def test_source_errors(source, match):
    with pytest.raises(ValueError, match=f"^ndd.ExternalSource: {match}"):
        ndd.ExternalSource(source)


def test_cycling_a_generator_names_the_generator_function_remedy():
    generator = (np.zeros(1) for _ in range(2))
    with pytest.raises(TypeError, match="cannot cycle through a generator.*generator function"):
        ndd.ExternalSource(generator, cycle="quiet")


def test_cycle_with_a_callable_is_rejected():
    with pytest.raises(ValueError, match="'cycle' can only be given when 'source' is iterable"):
        ndd.ExternalSource(lambda: np.zeros(1), cycle="no")


@pytest.mark.parametrize(
    "batch_size, error, match",
    [
        (-1, ValueError, "must not be negative, got -1"),
        (2.0, TypeError, "must be an int or None, got float"),
        (True, TypeError, "must be an int or None, got bool"),
    ],
)
def test_batch_size_errors(batch_size, error, match):
    with pytest.raises(error, match=f"^ndd.ExternalSource: 'batch_size' {match}"):
        ndd.ExternalSource(lambda: np.zeros(1))(batch_size=batch_size)


def test_batch_size_must_match_a_batch_item():
    source = ndd.ExternalSource(lambda: ndd.batch([np.zeros(1)] * 2))
    with pytest.raises(ValueError, match="'batch_size' is 3, but the source produced a batch of 2 samples"):
        source(batch_size=3)


def test_item_with_the_wrong_number_of_outputs():
    source = ndd.ExternalSource(lambda: (np.zeros(1),) * 3, num_outputs=2)
    with pytest.raises(
        ValueError, match="num_outputs=2 the source must produce a tuple or list of 2 items, got 3"
    ):
        source()


def test_mixed_tensor_and_batch_outputs_name_the_batch_outputs():
    source = ndd.ExternalSource(lambda: (np.zeros(1), ndd.batch([np.zeros(1)]), np.ones(1)), num_outputs=3)
    with pytest.raises(TypeError, match=r"only outputs \[1\] of the item are Batches"):
        source()


def test_item_that_is_not_data():
    source = ndd.ExternalSource(lambda: {"image": np.zeros(1)})
    with pytest.raises(TypeError, match="^ndd.ExternalSource: the item: cannot convert dict"):
        source()


def test_layout_not_matching_an_output_names_the_output():
    source = ndd.ExternalSource(lambda: (np.zeros((2, 2)), np.zeros(2)), num_outputs=2, layout="HW")
    with pytest.raises(ValueError, match="^ndd.ExternalSource: output 1 of the item: .*layout 'HW'"):
        source()


@pytest.mark.skipif(driver.device_count() > 0, reason="checks the error given without a GPU")
def test_gpu_device_without_a_gpu():
    with pytest.raises(driver.GpuUnavailableError, match="^ndd.ExternalSource: .*needs a CUDA GPU"):
        ndd.ExternalSource(lambda: np.zeros(1), device="gpu")
