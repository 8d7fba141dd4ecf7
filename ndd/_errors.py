"""Operator errors as RuntimeErrors.

The reference raises a RuntimeError for every failure of an operator, so code
written for it skips a bad batch with ``except RuntimeError``. ndd raises the
Python type that says what went wrong (ValueError, TypeError, IndexError,
FileNotFoundError, ...) and makes it a RuntimeError as well: an error of a
builtin type leaves an operator as an instance of this module's class of the same
name, which derives from that type and from RuntimeError. ``except ValueError``
and ``except RuntimeError`` both catch it.

The classes are made on first use (module ``__getattr__``), under their builtin
names, so that they pickle by reference (a DataLoader worker sends the type of its
error to the main process) and unpickle in a fresh process.
"""

import builtins

__all__ = ["SampleDecodeError", "as_runtime_error", "raise_as_runtime_error"]

# Errors that are not failures: they steer iteration.
_SIGNALS = (StopIteration, StopAsyncIteration)


def _convertible(base):
    return (
        isinstance(base, type)
        and issubclass(base, Exception)
        and not issubclass(base, RuntimeError)
        and not issubclass(base, _SIGNALS)
    )


class SampleDecodeError(RuntimeError):
    """Samples of a batch that could not be decoded (the decoders' errors derive from
    this class).

    In batch mode, the exception raised from the run phase carries the samples
    that were decoded: ``decoded`` (one result per sample, None for the samples
    that failed) and ``failed`` (the indices of the failed samples).
    """

    def __init__(self, message, *, decoded=None, failed=()):
        super().__init__(message)
        self.decoded = decoded
        self.failed = tuple(failed)

    @classmethod
    def for_batch(cls, message, decoded, failed):
        """The error of a batch whose samples ``failed`` (their indices, in order):
        ``message`` says why the first one failed; how many others did is added."""
        if len(failed) > 1:
            message += f"; {len(failed) - 1} more sample(s) failed: {list(failed[1:])}"
        return cls(message, decoded=decoded, failed=failed)


# Builtin types whose ndd class also derives from another: the reference raises
# ValueError for an integer division by zero, so ``except ValueError`` catches ours.
_ALSO = {"ZeroDivisionError": (ValueError,)}

# The classes made so far, by name. Not module globals: ``OSError`` there would hide
# the builtin from this module's own code (``isinstance(exc, OSError)`` turned false for
# builtin errors once ndd's OSError was made).
_CLASSES = {}


def __getattr__(name):
    cls = _CLASSES.get(name)
    if cls is not None:
        return cls
    base = getattr(builtins, name, None)
    if not _convertible(base):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    cls = type(
        name,
        (base, *_ALSO.get(name, ()), RuntimeError),
        {
            "__module__": __name__,
            "__qualname__": name,
            "__doc__": f"{base.__doc__} Raised by an ndd operator: also a RuntimeError, as in the reference.",
        },
    )
    return _CLASSES.setdefault(name, cls)


def as_runtime_error(exc):
    """``exc`` itself when it is a RuntimeError (or not of a builtin type); else the same
    error (arguments, attributes, traceback and cause) as an instance of the class of
    this module named after its type."""
    kind = type(exc)
    if kind.__module__ != "builtins" or not _convertible(kind):
        return exc
    args = exc.args
    if isinstance(exc, OSError) and exc.filename is not None:  # not among its args
        args = (exc.errno, exc.strerror, exc.filename, None, exc.filename2)
    try:
        converted = __getattr__(kind.__name__)(*args)
    except Exception:  # noqa: BLE001 - a type whose arguments do not rebuild it: left as it is
        return exc
    converted.__dict__.update(exc.__dict__)
    converted.__cause__ = exc.__cause__
    converted.__suppress_context__ = exc.__suppress_context__
    converted.__context__ = exc.__context__
    return converted.with_traceback(exc.__traceback__)


def raise_as_runtime_error(exc):
    """Raise ``exc`` (being handled) as ``as_runtime_error`` converts it, chained to its
    cause; return when it stays as it is, for the caller's bare ``raise``."""
    converted = as_runtime_error(exc)
    if converted is not exc:
        raise converted from exc.__cause__
