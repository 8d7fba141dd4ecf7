"""The background thread that reads a reader's samples ahead of the consumer."""

import atexit
import queue
import threading
import time
import weakref

__all__ = ["Loader"]

# How long a blocked thread sleeps before checking whether it should stop.
_POLL_SECONDS = 0.1
# How long the interpreter's exit waits for the loading threads to finish the
# sample they are reading.
_EXIT_WAIT_SECONDS = 5.0
# The loaders whose thread may still run.
_LIVE = weakref.WeakSet()
_exiting = False


def exiting() -> bool:
    """Whether the interpreter is exiting: readers then read on the calling thread."""
    return _exiting


class Loader:
    """Reads samples in stream order on a daemon thread into a bounded queue.

    Each queue item is a list of ``(index, outputs)`` pairs, ``outputs`` being
    the tuple of arrays of one sample or the exception raised reading it. The
    thread holds the reader only weakly (a reader dropped by the user stops its
    thread) and never blocks forever (it checks ``stop`` while the queue is full),
    so it can neither keep the process alive nor hang it at exit.
    """

    def __init__(self, reader, order, chunk_size: int, depth: int):
        self.queue = queue.Queue(maxsize=max(1, depth))
        self.stop_event = threading.Event()
        self.thread = threading.Thread(
            target=_read_ahead,
            args=(weakref.ref(reader), order, chunk_size, self.queue, self.stop_event),
            name=f"ndd-reader-{reader.name}",
            daemon=True,
        )
        _LIVE.add(self)
        self.thread.start()

    def get(self):
        """The next chunk; raises RuntimeError if the thread died without one."""
        while True:
            try:
                return self.queue.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                if not self.thread.is_alive():
                    raise RuntimeError("the reader's loading thread stopped unexpectedly") from None

    def stop(self):
        self.stop_event.set()


def _read_ahead(reader_ref, order, chunk_size, out, stop_event):
    # Any exception while reading belongs to one sample and travels with it to
    # the consumer (``_load_chunk`` keeps it in the sample's place); this loop
    # itself only ends when asked to or when the reader is gone.
    while not stop_event.is_set():
        reader = reader_ref()
        if reader is None:
            return
        chunk = reader._load_chunk(order.next_indices(chunk_size), stop_event)
        del reader
        while not stop_event.is_set():
            try:
                out.put(chunk, timeout=_POLL_SECONDS)
                break
            except queue.Full:
                if reader_ref() is None:
                    return


@atexit.register
def _stop_at_exit():
    """Stop the loading threads and let them finish the sample at hand before the
    interpreter finalizes. A daemon thread still inside a library when that happens
    is ended by ``pthread_exit`` as it takes the GIL back, which aborts the process
    ("terminate called without an active exception") when a C++ frame is below it."""
    global _exiting
    _exiting = True
    loaders = list(_LIVE)
    for loader in loaders:
        loader.stop_event.set()
    deadline = time.monotonic() + _EXIT_WAIT_SECONDS
    for loader in loaders:
        loader.thread.join(max(0.0, deadline - time.monotonic()))
