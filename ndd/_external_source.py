"""``ExternalSource``: user data from a Python callable or iterable, one item per call.

Deliberate choices where the reference leaves room:
- Items that wrap memory the caller owns (numpy arrays, DLPack and array-interface
  objects, torch tensors, ``ndd.as_tensor``/``ndd.as_batch`` views) are copied when
  they are pulled, so the source may refill the same buffer for the next item. The
  reference shares such buffers, and a refill shows through in earlier results.
- Arguments are checked when the ExternalSource is built, before the source is
  touched (the reference checks ``device``, ``layout`` and ``dtype`` only when an
  item arrives); ``batch_size`` is checked before an item is pulled, so a bad value
  does not consume one.
- A ``dtype`` conversion is ``ndd.cast``: it rounds half away from zero and
  saturates, as the reference's conversion does, except that NaN becomes 0 for
  every integer type (see ``ndd.cast``).
"""

import collections.abc
import functools
import inspect
import numbers
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from . import _types
from ._batch import Batch, batch
from ._cuda import driver
from ._eval.device import Device
from ._eval.device import device as to_device
from ._ops.tensor_ops import CAST
from ._prepare.args import InvalidArgumentError
from ._prepare.call import invoke
from ._prepare.storage import BatchBase, TensorBase
from ._tensor import Tensor, _require_cpu, as_tensor, tensor
from ._types import DType

if TYPE_CHECKING:
    from ._eval.context import EvalContext

__all__ = ["ExternalSource"]

_NAME = "ndd.ExternalSource"

# Spellings of the three cycle modes accepted by the reference.
_CYCLE_MODES = {"no": "no", "quiet": "quiet", "raise": "raise"}

# Conversion errors of these exact types are re-raised with the ExternalSource named;
# other types may need more than a message to be constructed, so they pass unchanged.
_REWORDED_ERRORS = (TypeError, ValueError, OverflowError)


def _cycle_mode(cycle) -> str:
    """``"no"``, ``"quiet"`` or ``"raise"`` for a value of the ``cycle`` argument."""
    if cycle is None or cycle is False:
        return "no"
    if cycle is True:
        return "quiet"
    if isinstance(cycle, str) and cycle in _CYCLE_MODES:
        return _CYCLE_MODES[cycle]
    raise InvalidArgumentError(
        f"{_NAME}: 'cycle' must be \"no\", False or None (stop at the end of the data), "
        f'"quiet" or True (restart silently) or "raise" (raise StopIteration, then restart), '
        f"got {cycle!r}"
    )


def _is_generator_function(source) -> bool:
    """Whether calling ``source`` returns a new generator (a generator function, a
    partial of one, a method, or an object whose ``__call__`` is one)."""
    while isinstance(source, functools.partial):
        source = source.func
    if inspect.isgeneratorfunction(source):
        return True
    return callable(source) and inspect.isgeneratorfunction(type(source).__call__)


def _check_no_parameters(source) -> None:
    try:
        parameters = inspect.signature(source).parameters
    except (TypeError, ValueError):
        # Some builtins carry no signature metadata; a wrong one fails at the first call.
        return
    if parameters:
        listed = ", ".join(str(p) for p in parameters.values())
        raise InvalidArgumentError(
            f"{_NAME}: 'source' must be callable without arguments, but it takes ({listed})"
        )


class _IterableFeed:
    """Items of an iterable, one per call, restarted at the end when cycling.

    ``first_iterator`` serves the first epoch; ``start_epoch`` returns a fresh
    iterator over the data for each later one. An iterator whose ``iter()``
    returns itself cannot be restarted: once exhausted it keeps raising
    StopIteration, whatever the cycle mode (as in the reference).
    """

    def __init__(self, start_epoch: Callable[[], Any], mode: str, first_iterator):
        self._start_epoch = start_epoch
        self._mode = mode
        self._iterator = first_iterator

    def __call__(self):
        try:
            return next(self._iterator)
        except StopIteration:
            if self._mode == "no":
                raise
            self._iterator = self._start_epoch()
            if self._mode == "raise":
                raise
            return next(self._iterator)


def _make_feed(source, mode: str, cycle) -> Callable[[], Any]:
    """A zero-argument function returning the next item of ``source``."""
    if _is_generator_function(source):
        return _IterableFeed(lambda: iter(source()), mode, iter(source()))
    try:
        first_iterator = iter(source)
    except TypeError:
        if hasattr(type(source), "__iter__"):
            raise  # the source is iterable, but its __iter__ failed
        first_iterator = None
    if first_iterator is not None:
        if mode != "no" and inspect.isgenerator(source):
            raise InvalidArgumentError(
                f"{_NAME}: cannot cycle through a generator, it runs only once; pass the "
                "generator function itself as 'source' so that each epoch calls it anew"
            )
        return _IterableFeed(lambda: iter(source), mode, first_iterator)
    if not callable(source):
        raise InvalidArgumentError(
            f"{_NAME}: 'source' must be a callable, an iterable or a generator function, "
            f"got {type(source).__name__}"
        )
    if cycle is not None:
        raise InvalidArgumentError(f"{_NAME}: 'cycle' can only be given when 'source' is iterable")
    _check_no_parameters(source)
    return source


def _per_output(value, name: str, num_outputs: int, convert: Callable[[Any], Any]) -> tuple:
    """One converted value per output from a single value or a sequence of them."""
    if isinstance(value, collections.abc.Sequence) and not isinstance(value, (str, bytes)):
        if len(value) != num_outputs:
            raise InvalidArgumentError(
                f"{_NAME}: '{name}' must be a single value or a sequence of {num_outputs} "
                f"(one per output), got a sequence of {len(value)}"
            )
        return tuple(convert(v) for v in value)
    return (convert(value),) * num_outputs


def _layout_arg(value) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{_NAME}: 'layout' must be a string or None, got {type(value).__name__}")
    return value


def _dtype_arg(value) -> DType | None:
    if value is None:
        return None
    try:
        return _types.dtype(value)
    except (TypeError, ValueError, KeyError) as exc:
        raise InvalidArgumentError(f"{_NAME}: 'dtype' {value!r} is not a data type ({exc})") from None


def _device_arg(value) -> Device:
    if value is None:
        return Device.CPU
    try:
        dev = to_device(value)
    except driver.GpuUnavailableError as exc:
        raise driver.GpuUnavailableError(f"{_NAME}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(f"{_NAME}: 'device' {value!r} is not a device ({exc})") from None
    if dev.device_type != "cpu":
        _require_cpu(dev, _NAME)
    return dev


def _owned_tensor(data, layout: str | None) -> Tensor:
    """``data`` as a Tensor that does not share memory with the caller."""
    if isinstance(data, TensorBase) and not data._external:
        # Computed by ndd (possibly still pending): nobody else writes to it.
        return data if layout is None else as_tensor(data, layout=layout)
    return tensor(data, layout=layout)


def _owned_batch(data: BatchBase, layout: str | None) -> Batch:
    """``data`` as a Batch that does not share memory with the caller."""
    if not data._external and layout is None:
        return data
    return batch(data, layout=layout)


class ExternalSource:
    """Feed data produced by Python code into ndd, one item per call.

    Each call pulls one item from ``source`` and returns it as ndd data: a Batch
    when the item is an ``ndd.Batch``, a Tensor for anything else tensor-like
    (numpy arrays, torch tensors, objects with ``__dlpack__`` or
    ``__array_interface__``, Python scalars and nested lists; a list of arrays
    becomes one Tensor with a leading dimension, not a Batch). The data is copied
    unless ndd computed it, so the source may reuse its buffers.

    Parameters
    ----------
    source : callable or iterable
        Where the items come from. A callable is called without arguments for
        each item; an iterable is iterated once (restarted at its end when
        cycling); a generator function is called to start each epoch. Raising
        StopIteration ends the data: the call raises StopIteration.
    num_outputs : int, optional
        Number of outputs. With more than one, every item must be a sequence
        (tuple or list) of ``num_outputs`` tensor-likes or Batches, and each call
        returns a tuple.
    cycle : {"no", "quiet", "raise"} or bool or None, optional
        What happens at the end of an iterable source: ``"no"``, False or None
        raise StopIteration at every later call; ``"quiet"`` or True restart
        from the beginning silently; ``"raise"`` raise StopIteration once, then
        restart. Only for iterable sources.
    device : Device or str, optional
        Device of the outputs (``"cpu"``).
    layout : str or sequence of str, optional
        Layout of the outputs (for a Batch, of each sample), one for all outputs
        or one per output. Replaces the layout of an item.
    dtype : DType-like or sequence thereof, optional
        Element type of the outputs, one for all outputs or one per output.
        Items of another type are converted as ``ndd.cast`` does.

    Examples
    --------
    >>> images = ndd.ExternalSource(np.zeros((2, 8, 8, 3), np.uint8) for _ in range(3))
    >>> images().shape
    (2, 8, 8, 3)
    >>> labels = ndd.ExternalSource(lambda: np.array([7]), dtype=ndd.int32)
    >>> labels(batch_size=4).batch_size
    4
    """

    def __init__(
        self,
        source: Callable[[], Any] | Iterable[Any],
        num_outputs: int = 1,
        *,
        cycle: Literal["no", "quiet", "raise"] | bool | None = None,
        device: Device | str = "cpu",
        layout: str | Sequence[str] | None = None,
        dtype: Any = None,
    ):
        if isinstance(num_outputs, bool) or not isinstance(num_outputs, numbers.Integral):
            raise InvalidArgumentError(
                f"{_NAME}: 'num_outputs' must be a positive int, got {type(num_outputs).__name__}"
            )
        if num_outputs < 1:
            raise InvalidArgumentError(f"{_NAME}: 'num_outputs' must be a positive int, got {num_outputs}")
        self._num_outputs = int(num_outputs)
        mode = _cycle_mode(cycle)
        self._device = _device_arg(device)
        self._layouts = _per_output(layout, "layout", self._num_outputs, _layout_arg)
        self._dtypes = _per_output(dtype, "dtype", self._num_outputs, _dtype_arg)
        # Last: building the feed may start the source (iter(), a generator function).
        self._next_item = _make_feed(source, mode, cycle)

    def __call__(self, *, batch_size: int | None = None) -> Tensor | Batch | tuple:
        """Pull the next item from the source.

        Parameters
        ----------
        batch_size : int, optional
            Return Batches of this size: a tensor-like item is repeated
            ``batch_size`` times; a Batch item must have this many samples.

        Returns
        -------
        Tensor, Batch or tuple
            A Batch for a Batch item (or any item when ``batch_size`` is given),
            else a Tensor; a tuple of them when ``num_outputs`` > 1.

        Raises
        ------
        StopIteration
            At the end of the data (see ``cycle``).
        """
        if batch_size is not None:
            if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral):
                raise InvalidArgumentError(
                    f"{_NAME}: 'batch_size' must be an int or None, got {type(batch_size).__name__}"
                )
            if batch_size < 0:
                raise InvalidArgumentError(f"{_NAME}: 'batch_size' must not be negative, got {batch_size}")
            batch_size = int(batch_size)
        items = self._split_outputs(self._next_item())
        if batch_size is None:
            batch_outputs = [i for i, item in enumerate(items) if isinstance(item, BatchBase)]
            if batch_outputs and len(batch_outputs) != len(items):
                raise TypeError(
                    f"{_NAME}: the outputs must be all Batches or all tensor-like, but only outputs "
                    f"{batch_outputs} of the item are Batches (pass batch_size to make Batches of "
                    "the tensors)"
                )
        outputs = tuple(self._convert(item, index, batch_size) for index, item in enumerate(items))
        return outputs[0] if self._num_outputs == 1 else outputs

    def captured(self, batch_size: int, ctx: "EvalContext | None" = None) -> Iterator:
        """Iterate over the source's items, as the reference's capture mode does.

        Yields what ``self(batch_size=batch_size)`` returns, item after item, until the
        source ends (StopIteration; a source that never ends gives an endless loop).
        The reference traces the operators of the loop body on the first iteration
        and replays them afterwards; ndd runs the body as written each time, with the
        same results (see ``ndd.capture``).

        Parameters
        ----------
        batch_size : int
            As for a call: Batches of this size.
        ctx : EvalContext, optional
            The context each item is pulled in (the calling thread's by default).
        """
        while True:
            try:
                if ctx is None:
                    item = self(batch_size=batch_size)
                else:
                    with ctx:
                        item = self(batch_size=batch_size)
            except StopIteration:
                return
            yield item

    def _split_outputs(self, item) -> Sequence:
        if self._num_outputs == 1:
            return (item,)
        if not isinstance(item, collections.abc.Sequence) or isinstance(item, (str, bytes)):
            raise ValueError(
                f"{_NAME}: with num_outputs={self._num_outputs} the source must produce a tuple or list "
                f"of {self._num_outputs} items, got {type(item).__name__}"
            )
        if len(item) != self._num_outputs:
            raise ValueError(
                f"{_NAME}: with num_outputs={self._num_outputs} the source must produce a tuple or list "
                f"of {self._num_outputs} items, got {len(item)}"
            )
        return item

    def _convert(self, item, index: int, batch_size: int | None) -> Tensor | Batch:
        layout, dtype = self._layouts[index], self._dtypes[index]
        if isinstance(item, BatchBase) and batch_size is not None and item._batch_size != batch_size:
            raise ValueError(
                f"{_NAME}: 'batch_size' is {batch_size}, but the source produced a batch of "
                f"{item._batch_size} samples"
            )
        try:
            if isinstance(item, BatchBase):
                result = _owned_batch(item, layout)
            else:
                result = _owned_tensor(item, layout)
            if dtype is not None and dtype != result._dtype:
                result = invoke(CAST, (result,), None, None, {"dtype": dtype})
            if batch_size is not None and isinstance(result, TensorBase):
                # Stored densely (one array of batch_size copies): later operators process the batch in one call.
                result = batch([result] * batch_size, dtype=result._dtype, layout=result._layout or None)
        except _REWORDED_ERRORS as exc:
            if type(exc) not in _REWORDED_ERRORS:
                raise
            where = "the item" if self._num_outputs == 1 else f"output {index} of the item"
            raise type(exc)(f"{_NAME}: {where}: {exc}") from exc
        return result
