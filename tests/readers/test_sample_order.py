"""``SampleOrder.next_indices``: the same stream as ``next_index``, taken in runs."""

import itertools

import pytest

from ndd.readers._stream import OrderConfig, SampleOrder

CONFIGS = [
    {},
    {"num_shards": 3, "shard_id": 1},
    {"num_shards": 3, "shard_id": 2, "stick_to_shard": True},
    {"num_shards": 4, "shard_id": 3, "pad_last_batch": True},
    {"num_shards": 2, "shard_id": 1, "shuffle_after_epoch": True},
    {"random_shuffle": True, "initial_fill": 4, "seed": 7},
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(c) or "plain")
@pytest.mark.parametrize("runs", [[1], [5], [3, 7, 2], [64]])
def test_next_indices_gives_the_stream_of_next_index(config, runs):
    one_by_one = SampleOrder(OrderConfig(23, **config), batch_size=5, seed=11)
    in_runs = SampleOrder(OrderConfig(23, **config), batch_size=5, seed=11)
    want, got = [], []
    for count in itertools.islice(itertools.cycle(runs), 12):
        want += [one_by_one.next_index() for _ in range(count)]
        got += in_runs.next_indices(count)
    assert got == want
    assert in_runs.get_state() == one_by_one.get_state()


@pytest.mark.parametrize(
    "config, plain",
    [
        ({}, True),
        ({"stick_to_shard": True}, True),
        ({"pad_last_batch": True}, False),
        ({"random_shuffle": True}, False),
    ],
)
def test_plain_says_whether_the_stream_runs_in_order(config, plain):
    assert SampleOrder(OrderConfig(10, **config), batch_size=4, seed=0).plain is plain
