"""Operator errors are RuntimeErrors too, as in the reference (ndd/_errors.py)."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import ndd
from ndd import _errors


def _error(call):
    try:
        result = call()
        if hasattr(result, "evaluate"):
            result.evaluate()
    except Exception as exc:  # noqa: BLE001 - the error under test
        return exc
    raise AssertionError("no error")


@pytest.mark.parametrize(
    "call, kind",
    [
        (lambda: ndd.tensor(np.zeros(3)) + ndd.tensor(np.zeros(4)), ValueError),
        (lambda: ndd.cat(ndd.tensor(np.zeros(3, np.float32)), ndd.tensor(np.zeros(3, np.int32))), TypeError),
        (lambda: ndd.crop(ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC"), crop=(8, 8)), ValueError),
        (lambda: ndd.reshape(ndd.tensor(np.zeros(6)), shape=[4, 2]), ValueError),
        (lambda: ndd.resize(ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")), ValueError),
        (lambda: ndd.readers.File(file_root="/nonexistent/ndd-test"), FileNotFoundError),
        (lambda: ndd.tensor(np.zeros((2, 3)))[5], IndexError),
        (lambda: ndd.tensor(np.zeros((2, 3)))[0, 0, 0], IndexError),
        (lambda: ndd.batch([np.zeros(3)] * 2).slice[7], IndexError),
    ],
    ids=["broadcast", "cat", "crop", "reshape", "resize", "reader", "index", "indices", "batch-slice"],
)
def test_errors_of_operators_are_their_type_and_a_runtime_error(call, kind):
    # The reference raises RuntimeError for each: code written for it catches them.
    error = _error(call)
    assert isinstance(error, kind) and isinstance(error, RuntimeError)
    assert type(error).__name__ == kind.__name__ or issubclass(type(error), kind)


@pytest.mark.parametrize("mode", [None, ndd.EvalMode.sync_cpu, ndd.EvalMode.deferred])
def test_an_error_that_cannot_be_remade_from_a_message_still_names_the_operator(mode):
    # numpy's MemoryError needs a shape and a type to be made: it was raised as it
    # stood (no operator named) in sync modes. It is now a MemoryError naming it.
    # (The window's size is drawn when the call runs, so the call cannot refuse it.)
    image = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")

    def crop():
        side = ndd.random.uniform(range=[1e7, 1e7 + 1])
        return ndd.crop(image, crop_h=side, crop_w=side, out_of_bounds_policy="pad")

    def call():
        if mode is None:
            return crop()
        with mode:
            return crop().evaluate()

    error = _error(call)
    assert isinstance(error, MemoryError) and isinstance(error, RuntimeError)
    assert "ndd.crop" in str(error) and "TiB" in str(error)


def test_errors_of_deferred_runs_are_runtime_errors_too():
    with ndd.EvalMode.deferred:
        out = ndd.crop(
            ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC"), crop_h=ndd.random.uniform(range=[8, 9])
        )
    error = _error(lambda: out)
    assert isinstance(error, ValueError) and isinstance(error, RuntimeError)
    assert "deferred evaluation of ndd.crop" in str(error)


def test_a_bad_sample_of_a_reader_is_a_runtime_error(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.jpg").write_bytes(b"1")
    reader = ndd.readers.File(file_root=str(tmp_path))
    os.remove(tmp_path / "a" / "x.jpg")
    error = _error(lambda: reader(batch_size=1))
    assert isinstance(error, OSError) and isinstance(error, RuntimeError)


def test_making_one_converted_class_does_not_change_how_others_convert():
    """ndd's OSError or AttributeError once made must not hide the builtins from the
    conversion (ndd's OSError made first lost a FileNotFoundError's filename)."""
    for error in (OSError("disk"), AttributeError("name")):
        assert isinstance(_errors.as_runtime_error(error), RuntimeError)
    converted = _errors.as_runtime_error(FileNotFoundError(2, "No such file", "/x"))
    assert (converted.errno, converted.strerror, converted.filename) == (2, "No such file", "/x")
    assert isinstance(_errors.as_runtime_error(ValueError("v")), ValueError)
    assert _errors.OSError is _errors.as_runtime_error(OSError("again")).__class__


def test_converted_errors_keep_arguments_attributes_cause_and_traceback():
    try:
        try:
            raise KeyError("inner")
        except KeyError as inner:
            raise FileNotFoundError(2, "No such file", "/x") from inner
    except FileNotFoundError as exc:
        exc.extra = 7
        original, converted = exc, _errors.as_runtime_error(exc)
    assert isinstance(converted, FileNotFoundError) and isinstance(converted, RuntimeError)
    assert (converted.errno, converted.filename, converted.extra) == (2, "/x", 7)
    assert isinstance(converted.__cause__, KeyError) and converted.__traceback__ is original.__traceback__
    for same in (RuntimeError("x"), StopIteration(), ndd._prepare.args.InvalidArgumentError("x")):
        assert _errors.as_runtime_error(same) is same


def test_converted_errors_pickle_by_reference_into_a_fresh_process():
    # A DataLoader worker sends its error's type to the main process.
    error = _errors.as_runtime_error(ValueError("bad sample"))
    assert pickle.loads(pickle.dumps(error)).args == ("bad sample",)
    code = (
        "import pickle, sys; e = pickle.loads(sys.stdin.buffer.read()); "
        "print(type(e).__module__, isinstance(e, ValueError), isinstance(e, RuntimeError))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=pickle.dumps((type(error), error))[0:0] + pickle.dumps(error),
        capture_output=True,
        check=True,
    )
    assert done.stdout.decode().split() == ["ndd._errors", "True", "True"]


def test_a_shape_error_in_a_batch_names_the_sample():
    # The shape checks see one sample at a time; the message says which.
    b = ndd.batch([np.zeros((20, 30, 3), np.uint8), np.zeros((24, 16, 3), np.uint8)], layout="HWC")
    t = ndd.tensor(np.zeros((20, 30, 3), np.uint8), layout="HWC")
    with pytest.raises(
        ValueError, match=r"ndd.cat: .*input 0 has shape \(24, 16, 3\).*\(in sample 1 of the batch\)"
    ):
        ndd.cat(b, t, axis=2)
    with pytest.raises(ValueError, match=r"\(in sample 0 of the batch\)"):
        ndd.crop(b, crop=(25, 10))
    with pytest.raises(ValueError) as single:
        ndd.crop(ndd.tensor(np.zeros((20, 30, 3), np.uint8), layout="HWC"), crop=(25, 10))
    assert "sample" not in str(single.value)


def test_an_integer_division_by_zero_is_also_a_value_error():
    # The reference raises ValueError ("Integer division by zero"); Python's type is kept.
    for op in (lambda a: a // 0, lambda a: a % 0):
        with pytest.raises(ZeroDivisionError) as caught:
            op(ndd.tensor(np.array([1], np.int32))).evaluate()
        assert isinstance(caught.value, ValueError) and isinstance(caught.value, RuntimeError)


@pytest.mark.parametrize(
    "call, name",
    [
        (
            lambda x: ndd.experimental.warp_perspective(x, matrix="a"),
            "experimental.warp_perspective: 'matrix'",
        ),
        (
            lambda x: ndd.experimental.warp_perspective(x, matrix={}),
            "experimental.warp_perspective: 'matrix'",
        ),
        (lambda x: ndd.normalize(x, mean={}), "normalize: 'mean'"),
        (
            lambda x: ndd.multi_paste(ndd.batch([x, x]), in_ids=[0, 1], in_anchors="a"),
            "multi_paste: 'in_anchors'",
        ),
    ],
)
def test_array_arguments_must_be_numbers(call, name):
    # They were numpy's "could not convert string to float" or float()'s TypeError,
    # naming no argument (found by fuzzing).
    image = ndd.tensor(np.zeros((4, 4, 3), np.uint8), layout="HWC")
    with pytest.raises(
        ValueError, match=rf"^ndd\.{name} must be numbers \(one, a list or an array of them\)"
    ):
        call(image)
