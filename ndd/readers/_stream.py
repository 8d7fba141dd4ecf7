"""The order in which a reader visits its dataset: sharding, padding and shuffling.

A reader is a continuous stream of sample indices; epochs only say how many of
them one ``next_epoch()`` takes. ``SampleOrder`` computes that stream from a
small, serialisable state, so that the loader thread (which runs ahead) and
the consumer (whose position a checkpoint records) can each keep a copy and
agree on every index.

The arithmetic is the reference's (REFERENCE_API.md, section 4.2):

- shard ``k`` of ``S`` over ``N`` samples is ``[floor(k*N/S), floor((k+1)*N/S))``;
- without ``pad_last_batch`` the stream runs through the whole dataset from the
  start of the reader's shard and wraps around; the shard advances by one per
  epoch run to its end (unless ``stick_to_shard``) and sets how many batches
  the next epoch has;
  with ``stick_to_shard`` the stream cycles within the shard;
- with ``pad_last_batch`` every epoch reads exactly one shard, padded with its
  last sample to ``ceil(N/S)`` samples and then to whole batches, so that every
  shard yields the same number of batches;
- ``shuffle_after_epoch`` reads, in epoch ``e``, the shard's slice of the
  ``e``-th permutation of the dataset, the same permutations on every shard (so
  that shards stay disjoint across processes); with ``pad_last_batch`` the shard
  stays the same, without it the shard advances every epoch and the slices form
  one continuous stream, the last batch of an epoch running into the next slice;
- ``random_shuffle`` reads the dataset in one fixed random order, the same in
  every process whatever the ``seed`` (so that shards stay disjoint), and on
  top of that draws each sample from a buffer of ``initial_fill`` upcoming
  samples of the same pass, drawn with ``seed``. A pass is one shard's samples
  (the whole dataset when unsharded): a buffer never mixes two shards or two
  passes, so an epoch that covers a shard is a permutation of it. With
  ``pad_last_batch`` the padding repeats the last sample drawn.
"""

import random

import numpy as np

__all__ = ["OrderConfig", "SampleOrder", "shard_bounds"]


# The key of random_shuffle's fixed order of the dataset: a constant, so that every
# process of a sharded job (whatever its seed) splits the same order into shards.
_BASE_ORDER_KEY = 0x6E6464


def shard_bounds(num_samples: int, shard_id: int, num_shards: int) -> tuple[int, int]:
    """First and one-past-last sample index of a shard."""
    return (shard_id * num_samples // num_shards, (shard_id + 1) * num_samples // num_shards)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class OrderConfig:
    """What fixes a reader's sample order (constructor arguments + dataset size)."""

    def __init__(
        self,
        num_samples,
        *,
        num_shards=1,
        shard_id=0,
        stick_to_shard=False,
        pad_last_batch=False,
        shuffle_after_epoch=False,
        shuffle_after_epoch_seed=None,
        random_shuffle=False,
        initial_fill=1024,
        seed=-1,
    ):
        self.num_samples = num_samples
        self.num_shards = num_shards
        self.shard_id = shard_id
        self.stick_to_shard = stick_to_shard
        self.pad_last_batch = pad_last_batch
        self.shuffle_after_epoch = shuffle_after_epoch
        # Every process of a sharded job must draw the same permutation: the
        # default seed is a constant, never the operating system's entropy.
        self.shuffle_after_epoch_seed = 0 if shuffle_after_epoch_seed is None else shuffle_after_epoch_seed
        self.random_shuffle = random_shuffle
        self.initial_fill = max(1, initial_fill)
        self.seed = seed

    def shard_size(self, shard: int) -> int:
        begin, end = shard_bounds(self.num_samples, shard, self.num_shards)
        return end - begin

    @property
    def padded_shard_size(self) -> int:
        return _ceil_div(self.num_samples, self.num_shards)

    @property
    def epoch_size_padded(self) -> int:
        if self.pad_last_batch:
            return self.padded_shard_size * self.num_shards
        return self.num_samples

    def fingerprint(self) -> list:
        """The settings a saved position is only valid for."""
        return [
            self.num_samples,
            self.num_shards,
            self.shard_id,
            self.stick_to_shard,
            self.pad_last_batch,
            self.shuffle_after_epoch,
            self.shuffle_after_epoch_seed,
            self.random_shuffle,
            self.initial_fill,
        ]


class SampleOrder:
    """The stream of dataset indices of one reader, for a fixed batch size.

    ``next_index()`` gives the next index; ``epoch_length(epoch)`` how many
    indices the ``epoch``-th call of ``next_epoch`` takes. The state is the
    position in the underlying stream plus, with ``random_shuffle``, the
    shuffle buffer and its generator.
    """

    def __init__(self, config: OrderConfig, batch_size: int, seed: int):
        self.config = config
        self.batch_size = batch_size
        self.seed = seed
        self.position = 0
        self._permutations = {}
        self._buffer = None
        self._pass_end = 0
        self._rng = None
        self._base_order = None
        # With random_shuffle: indices returned so far, and the last of them (padding).
        self._returned = 0
        self._last = 0
        if config.random_shuffle:
            self._rng = random.Random(seed)
            generator = np.random.Generator(np.random.Philox(key=_BASE_ORDER_KEY))
            self._base_order = generator.permutation(config.num_samples)

    # -- epochs -------------------------------------------------------------
    def _epoch_shard(self, epoch: int) -> int:
        c = self.config
        if c.stick_to_shard or (c.shuffle_after_epoch and c.pad_last_batch):
            return c.shard_id
        return (c.shard_id + epoch) % c.num_shards

    def _segment_length(self) -> int:
        """Indices per epoch with ``pad_last_batch``: one padded shard, whole batches."""
        return _ceil_div(self.config.padded_shard_size, self.batch_size) * self.batch_size

    def _segment(self, pos: int) -> tuple[int, int, int]:
        """With ``pad_last_batch``: the start of the segment (epoch) holding stream
        position ``pos``, the offset of ``pos`` in it, and its count of real samples
        (its shard's size; the rest is padding)."""
        length = self._segment_length()
        epoch, offset = divmod(pos, length)
        return epoch * length, offset, self.config.shard_size(self._epoch_shard(epoch))

    def epoch_length(self, epoch: int) -> int:
        """Number of indices of an epoch after ``epoch`` epochs run to their end."""
        c = self.config
        if c.pad_last_batch:
            return self._segment_length()
        return _ceil_div(c.shard_size(self._epoch_shard(epoch)), self.batch_size) * self.batch_size

    # -- the underlying stream ----------------------------------------------
    def _permutation(self, epoch: int) -> np.ndarray:
        perm = self._permutations.get(epoch)
        if perm is None:
            generator = np.random.Generator(
                np.random.Philox(key=[self.config.shuffle_after_epoch_seed & (2**64 - 1), epoch])
            )
            perm = generator.permutation(self.config.num_samples)
            # Keep the current and the next epoch's permutations only.
            self._permutations = {k: v for k, v in self._permutations.items() if k >= epoch - 1}
            self._permutations[epoch] = perm
        return perm

    def _shuffled_slices_index(self, pos: int) -> int:
        """``shuffle_after_epoch`` without padding: slice ``j`` of the stream is shard
        ``shard_id + j`` of permutation ``j``; one rotation over the shards covers
        the ``N`` samples once."""
        c = self.config
        rotation, offset = divmod(pos, c.num_samples)
        for k in range(c.num_shards):
            shard = (c.shard_id + k) % c.num_shards
            size = c.shard_size(shard)
            if offset < size:
                begin, _ = shard_bounds(c.num_samples, shard, c.num_shards)
                return int(self._permutation(rotation * c.num_shards + k)[begin + offset])
            offset -= size
        raise AssertionError("shard sizes do not add up to the dataset size")

    def _stream_index(self, pos: int) -> int:
        c = self.config
        n = c.num_samples
        if c.shuffle_after_epoch and not c.pad_last_batch:
            return self._shuffled_slices_index(pos)
        if c.pad_last_batch:
            segment_length = self._segment_length()
            epoch, offset = divmod(pos, segment_length)
            shard = self._epoch_shard(epoch)
            begin, end = shard_bounds(n, shard, c.num_shards)
            size = end - begin
            # Past the shard's end: repeat its last sample.
            offset = min(offset, size - 1)
            if c.shuffle_after_epoch:
                return int(self._permutation(epoch)[begin + offset])
            return begin + offset
        if c.stick_to_shard:
            begin, end = shard_bounds(n, c.shard_id, c.num_shards)
            return begin + pos % (end - begin)
        begin, _ = shard_bounds(n, c.shard_id, c.num_shards)
        return (begin + pos) % n

    def _take(self) -> int:
        index = self._stream_index(self.position)
        self.position += 1
        if self._base_order is not None:
            return int(self._base_order[index])
        return index

    def _end_of_pass(self) -> int:
        """Stream position where the pass that ``self.position`` is in ends: the end of
        the shard being read (of the padded segment's real samples with
        ``pad_last_batch``; of the dataset when unsharded)."""
        c = self.config
        pos = self.position
        if c.pad_last_batch:
            start, _, real = self._segment(pos)
            return start + real
        if c.stick_to_shard:
            size = c.shard_size(c.shard_id)
            return (pos // size + 1) * size
        n = c.num_samples
        begin, _ = shard_bounds(n, c.shard_id, c.num_shards)
        index = (begin + pos) % n
        shard = index * c.num_shards // n
        while shard_bounds(n, shard, c.num_shards)[1] <= index:
            shard += 1
        return pos + shard_bounds(n, shard, c.num_shards)[1] - index

    @property
    def plain(self) -> bool:
        """Whether the stream runs through the shard or dataset in order (no shuffling
        or padding): ``next_indices`` then steps at once."""
        c = self.config
        return self._rng is None and not c.pad_last_batch and not c.shuffle_after_epoch

    def next_indices(self, count: int) -> list:
        """The next ``count`` indices (``next_index`` ``count`` times); a plain
        stream steps all of them or, interrupted, none."""
        if not self.plain:
            return [self.next_index() for _ in range(count)]
        c = self.config
        start, n = self.position, c.num_samples
        if c.stick_to_shard:
            begin, end = shard_bounds(n, c.shard_id, c.num_shards)
            size = end - begin
            indices = [begin + pos % size for pos in range(start, start + count)]
        else:
            begin, _ = shard_bounds(n, c.shard_id, c.num_shards)
            indices = [(begin + pos) % n for pos in range(start, start + count)]
        self.position = start + count
        return indices

    def next_index(self) -> int:
        if self._rng is None:
            return self._take()
        c = self.config
        if c.pad_last_batch:
            _, offset, real = self._segment(self._returned)
            self._returned += 1
            if offset >= real:
                return self._last  # padding: the last sample drawn once more
        buffer = self._buffer
        if not buffer:
            if c.pad_last_batch:
                # The stream's padding positions are not read: on to the next segment.
                start, offset, real = self._segment(self.position)
                if offset >= real:
                    self.position = start + self._segment_length()
            self._pass_end = self._end_of_pass()
            fill = min(c.initial_fill, self._pass_end - self.position)
            buffer = self._buffer = [self._take() for _ in range(fill)]
        slot = self._rng.randrange(len(buffer))
        index = buffer[slot]
        if self.position < self._pass_end:
            buffer[slot] = self._take()
        else:
            # The pass is exhausted: drain the buffer.
            buffer[slot] = buffer[-1]
            buffer.pop()
        self._last = index
        return index

    # -- state ----------------------------------------------------------------
    def get_state(self) -> dict:
        state = {"position": self.position}
        if self._rng is not None:
            version, internal, gauss = self._rng.getstate()
            state["buffer"] = self._buffer
            state["pass_end"] = self._pass_end
            state["returned"] = self._returned
            state["last"] = self._last
            state["rng"] = [version, list(internal), gauss]
        return state

    def set_state(self, state: dict) -> None:
        self.position = int(state["position"])
        if self._rng is not None:
            self._buffer = state.get("buffer")
            self._pass_end = state.get("pass_end", 0)
            self._returned = state.get("returned", 0)
            self._last = state.get("last", 0)
            if "rng" in state:
                version, internal, gauss = state["rng"]
                self._rng.setstate((version, tuple(internal), gauss))

    def copy(self) -> "SampleOrder":
        twin = SampleOrder(self.config, self.batch_size, self.seed)
        twin.set_state(self.get_state())
        if twin._buffer is not None:
            twin._buffer = list(twin._buffer)
        return twin
