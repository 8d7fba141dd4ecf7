"""ndd.random.RNG, the default RNG of each thread, and the rng= mechanism of the
random operators: bit-exact draws and state strings against the reference
(tests/golden/random_reference.json, made by tests/golden/make_random_goldens.py),
and reproducible operator results in every EvalMode, thread and process."""

import hashlib
import inspect
import json
import multiprocessing
import pathlib
import pickle
import sys
import threading

import numpy as np
import pytest
from arrays import sample_arrays

import ndd
from ndd._prepare.args import draw_random_key
from ndd._prepare.philox import KEY_WORDS, philox4x32_10

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent / "golden" / "random_reference.json").read_text(encoding="utf-8")
)
RNG = ndd.random.RNG


# --------------------------------------------------------------------------- Philox


# Known-answer tests of Random123 (the authors' reference implementation), kat_vectors.
@pytest.mark.parametrize(
    "key, counter, expected",
    [
        (0, 0, (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        (2**64 - 1, 2**128 - 1, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        (
            0x299F31D0_A4093822,
            0x03707344_13198A2E_85A308D3_243F6A88,
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
        ),
    ],
)
def test_philox_block_matches_the_published_known_answers(key, counter, expected):
    assert philox4x32_10(key, counter) == expected


# --------------------------------------------------------------------------- draws and states


@pytest.mark.parametrize("seed", sorted(GOLDEN["sequences"], key=int))
def test_draws_and_states_match_the_reference(seed):
    expected = GOLDEN["sequences"][seed]
    rng = RNG(seed=int(seed))
    states, draws = [], []
    for _ in range(len(expected["draws"])):
        states.append(str(rng.get_state()))
        draws.append(rng())
    states.append(str(rng.get_state()))
    assert draws == expected["draws"]
    assert states == expected["states"]


def test_draws_are_the_philox_blocks_in_counter_order():
    rng = RNG(seed=0xDEADBEEF_12345678)
    words = [w for block in range(3) for w in philox4x32_10(0xDEADBEEF_12345678, block)]
    assert [rng() for _ in range(12)] == words


@pytest.mark.parametrize("case", GOLDEN["advances"], ids=lambda c: str(c["n"]))
def test_advance_matches_the_reference(case):
    rng = RNG(seed=7)
    if isinstance(case["n"], list):
        first, _, second = case["n"]
        rng.advance(first)
        rng()
        rng.advance(second)
    else:
        rng.advance(case["n"])
    assert str(rng.get_state()) == case["state"]
    assert [rng() for _ in range(len(case["next"]))] == case["next"]


def test_advance_equals_drawing():
    drawn, skipped = RNG(seed=11), RNG(seed=11)
    for _ in range(13):
        drawn()
    skipped.advance(13)
    assert skipped.get_state() == drawn.get_state()
    assert skipped() == drawn()


def test_advance_beyond_the_reference_limit_wraps_the_counter():
    # The reference fails beyond 2**64 - 1 words; the counter wraps at 2**128 blocks.
    rng = RNG(seed=7)
    rng.advance(2**130 - 1)
    assert str(rng.get_state()) == "Philox_0000000000000007_FFFFFFFFFFFFFFFF:FFFFFFFFFFFFFFFF_3"
    rng()
    assert str(rng.get_state()) == "Philox_0000000000000007_0000000000000000:0000000000000000_0"


@pytest.mark.parametrize("n, error", [(-1, ValueError), (1.5, TypeError), ("3", TypeError)])
def test_advance_rejects_bad_counts(n, error):
    with pytest.raises(error):
        RNG(seed=1).advance(n)


@pytest.mark.parametrize("case", GOLDEN["from_states"], ids=lambda c: c["state"])
def test_starting_from_a_state_matches_the_reference(case):
    rng = RNG(state=case["state"])
    draws, states = [], []
    for _ in range(len(case["draws"])):
        draws.append(rng())
        states.append(str(rng.get_state()))
    assert draws == case["draws"]
    assert states == case["states"]


@pytest.mark.parametrize("case", GOLDEN["clones"], ids=lambda c: f"after {c['before']} draws")
def test_clone_matches_the_reference(case):
    rng = RNG(seed=case["seed"])
    for _ in range(case["before"]):
        rng()
    clone = rng.clone()
    assert repr(clone) == case["clone_repr"]
    assert [clone() for _ in range(6)] == case["clone"]
    assert [rng() for _ in range(6)] == case["original"]


def test_clone_is_independent():
    rng = RNG(seed=3)
    clone = rng.clone()
    rng.advance(100)
    assert clone.get_state() != rng.get_state()
    assert type(clone) is RNG


def test_state_round_trips_through_strings_objects_and_the_property():
    rng = RNG(seed=1234)
    rng.advance(5)
    state = rng.get_state()
    expected = [rng() for _ in range(4)]
    for restore in (
        lambda r: r.set_state(state),
        lambda r: r.set_state(str(state)),
        lambda r: setattr(r, "state", state),
        lambda r: setattr(r, "state", str(state)),
    ):
        other = RNG(seed=99)
        restore(other)
        assert [other() for _ in range(4)] == expected
    assert [RNG(state=state)() for _ in range(1)] == expected[:1]
    assert [RNG(state=str(state))() for _ in range(1)] == expected[:1]
    assert rng.state == rng.get_state(cuda_stream=None)


def test_state_objects_compare_by_value_and_are_immutable_snapshots():
    rng = RNG(seed=5)
    state = rng.get_state()
    rng()
    assert str(state) == "Philox_0000000000000005_0000000000000000:0000000000000000_0"
    assert state == RNG(seed=5).get_state() and state != rng.get_state()
    assert hash(state) == hash(RNG(seed=5).get_state())
    assert type(state).parse(str(state)) == state


@pytest.mark.parametrize("case", GOLDEN["bad_states"], ids=lambda c: repr(c["value"]))
def test_invalid_states_raise_the_reference_exception(case):
    with pytest.raises({"ValueError": ValueError, "TypeError": TypeError}[case["error_type"]]):
        RNG(seed=1).set_state(case["value"])


def test_invalid_state_message_names_the_class_and_the_expected_form():
    with pytest.raises(
        ValueError, match=r"ndd.random.RNG: invalid state string 'nonsense'; expected 'Philox_"
    ):
        RNG(state="nonsense")


def test_repr_shows_the_state():
    rng = RNG(seed=1234)
    rng.advance(6)
    assert repr(rng) == "RNG(state='Philox_00000000000004D2_0000000000000000:0000000000000001_2')"


@pytest.mark.parametrize(
    "seed, key",
    [
        (2**64 + 5, 5),
        (-1, 2**64 - 1),
        (-5, 2**64 - 5),
        (True, 1),
        (np.uint32(5), 5),
        (np.int64(-2), 2**64 - 2),
    ],
)
def test_seeds_are_integers_reduced_to_64_bits(seed, key):
    # The reference raises OverflowError for numpy integers; ndd takes them as ints.
    assert str(RNG(seed=seed).get_state()) == f"Philox_{key:016X}_0000000000000000:0000000000000000_0"


@pytest.mark.parametrize("case", [c for c in GOLDEN["seeds"] if c["seed"] in ("True", "1.5", "'12'")])
def test_seed_types_match_the_reference(case):
    seed = eval(case["seed"])  # noqa: S307 - literals recorded by the golden script
    if "state" in case:
        assert str(RNG(seed=seed).get_state()) == case["state"]
    else:
        with pytest.raises(TypeError, match="ndd.random.RNG: 'seed' must be an integer"):
            RNG(seed=seed)


def test_seed_is_write_only():
    rng = RNG(seed=1)
    rng.advance(3)
    rng.seed = 1234
    assert str(rng.get_state()) == "Philox_00000000000004D2_0000000000000000:0000000000000000_0"
    with pytest.raises(AttributeError, match="write-only"):
        rng.seed  # noqa: B018


def test_seed_and_state_are_exclusive():
    with pytest.raises(ValueError, match="cannot specify both 'seed' and 'state'"):
        RNG(seed=1, state="Philox_0000000000000001_0000000000000000:0000000000000000_0")


def test_unseeded_rngs_differ():
    assert len({str(RNG().get_state()) for _ in range(8)}) == 8


def test_rng_pickles_with_its_state():
    rng = RNG(seed=21)
    rng.advance(9)
    copy = pickle.loads(pickle.dumps(rng))
    assert type(copy) is RNG and copy.get_state() == rng.get_state()
    assert pickle.loads(pickle.dumps(rng.get_state())) == rng.get_state()


def test_draws_from_several_threads_are_all_distinct():
    """Concurrent draws never hand out the same position twice."""
    rng = RNG(seed=8)
    results = [[] for _ in range(4)]

    def work(out):
        out.extend(rng() for _ in range(2000))

    threads = [threading.Thread(target=work, args=(r,)) for r in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = RNG(seed=8)
    assert sorted(sum(results, [])) == sorted(expected() for _ in range(8000))


# --------------------------------------------------------------------------- default RNG


def test_default_rng_is_one_per_thread():
    main = ndd.random.get_default_rng()
    assert ndd.random.get_default_rng() is main and type(main) is RNG
    seen = {}

    def other():
        seen["rng"] = ndd.random.get_default_rng()
        ndd.random.set_seed(5)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen["rng"] is not main
    ndd.random.set_seed(42)
    assert ndd.random.get_default_rng() is main
    assert str(main.get_state()) == "Philox_000000000000002A_0000000000000000:0000000000000000_0"
    # Seeding in the other thread left this thread's default RNG alone.
    assert str(seen["rng"].get_state()) == "Philox_0000000000000005_0000000000000000:0000000000000000_0"


def test_set_seed_makes_default_rng_results_repeat():
    ndd.random.set_seed(42)
    first = np.asarray(ndd.random.uniform(shape=[16]))
    ndd.random.set_seed(42)
    second = np.asarray(ndd.random.uniform(shape=[16]))
    np.testing.assert_array_equal(first, second)
    assert np.unique(first).size == 16


def test_operators_without_rng_draw_from_the_default_rng():
    ndd.random.set_seed(3)
    ndd.random.normal()
    state = ndd.random.get_default_rng().get_state()
    expected = RNG(seed=3)
    expected.advance(KEY_WORDS)
    assert state == expected.get_state()


# --------------------------------------------------------------------------- the rng= mechanism


@pytest.mark.parametrize("case", GOLDEN["op_draws"], ids=lambda c: c["call"])
def test_each_call_draws_as_many_words_as_the_reference(case):
    """rng() draws around a call see the reference's sequence (deferred mode: the
    call draws when it is made, not when it runs)."""
    call = OP_CALLS[case["call"]]
    rng = RNG(seed=2024)
    assert str(rng.get_state()) == case["before"]
    assert rng() == case["first_draw"]
    with ndd.EvalMode.deferred:
        result = call(rng)
        assert str(rng.get_state()) == case["after"]
        assert rng() == case["second_draw"]
    del result


SHAPE = np.array([100, 200], np.int64)
OP_CALLS = {
    "uniform()": lambda r: ndd.random.uniform(rng=r),
    "uniform(batch_size=5, shape=[3])": lambda r: ndd.random.uniform(batch_size=5, shape=[3], rng=r),
    "normal(shape=[100])": lambda r: ndd.random.normal(shape=[100], rng=r),
    "coin_flip(batch_size=3)": lambda r: ndd.random.coin_flip(batch_size=3, rng=r),
    "beta()": lambda r: ndd.random.beta(rng=r),
    "choice(5, shape=[4])": lambda r: ndd.random.choice(5, shape=[4], rng=r),
    "batch_permutation(batch_size=4)": lambda r: ndd.batch_permutation(batch_size=4, rng=r),
    "random_crop_generator([100, 200])": lambda r: ndd.random_crop_generator(SHAPE, rng=r),
    "random_crop_generator(batch of 3)": lambda r: ndd.random_crop_generator(
        ndd.as_batch([SHAPE] * 3), rng=r
    ),
}


def _arrays(result):
    """The arrays of a result: its samples, or those of each output of a tuple."""
    if isinstance(result, tuple):
        return [a for r in result for a in _arrays(r)]
    if isinstance(result, ndd.Batch):
        return sample_arrays(result)
    return [np.asarray(result)]


def _digest(result):
    """A fingerprint of the dtype, shape and bytes of every array of a result."""
    digest = hashlib.sha256()
    for a in _arrays(result):
        digest.update(f"{a.dtype}{a.shape}".encode())
        digest.update(np.ascontiguousarray(a).tobytes())
    return digest.hexdigest()


# Calls covering the paths of the run phase: one sample, a batch drawn at once,
# ragged and per-sample batches drawn sample by sample, large ones on the thread pool.
REPRODUCED_CALLS = {
    "uniform tensor": lambda r: ndd.random.uniform(shape=[5], rng=r),
    "uniform batch": lambda r: ndd.random.uniform(batch_size=4, shape=[3], rng=r),
    "uniform ragged": lambda r: ndd.random.uniform(ndd.batch([np.zeros(2), np.zeros(5)]), rng=r),
    "uniform large ragged": lambda r: ndd.random.uniform(
        shape=ndd.batch([np.int32([300, 200]), np.int32([200, 300]), np.int32([100, 10])]), rng=r
    ),
    "normal per-sample mean": lambda r: ndd.random.normal(mean=ndd.batch(np.float32([0, 10, 20])), rng=r),
    "coin_flip": lambda r: ndd.random.coin_flip(batch_size=6, shape=[4], rng=r),
    "beta": lambda r: ndd.random.beta(batch_size=2, shape=[3], alpha=2.0, rng=r),
    "choice": lambda r: ndd.random.choice(ndd.batch([np.int32(5), np.int32(9)]), shape=[4], rng=r),
    "random_crop_generator": lambda r: ndd.random_crop_generator(ndd.batch([SHAPE] * 4), rng=r),
    "batch_permutation": lambda r: ndd.batch_permutation(batch_size=8, rng=r),
}


def _reproduce(seed=77):
    """The values of every call of REPRODUCED_CALLS, in order, from one RNG."""
    rng = RNG(seed=seed)
    results = [(name, call(rng)) for name, call in REPRODUCED_CALLS.items()]
    return {name: _digest(result) for name, result in results}


@pytest.mark.parametrize("mode", ["deferred", "eager", "sync_cpu", "sync_full"])
def test_same_seed_gives_same_results_in_every_eval_mode(mode):
    with ndd.EvalMode.sync_cpu:
        expected = _reproduce()
    with getattr(ndd.EvalMode, mode):
        assert _reproduce() == expected


def test_same_seed_gives_same_results_whatever_the_evaluation_order():
    """Deferred results evaluated in reverse order equal those evaluated at once."""
    with ndd.EvalMode.sync_cpu:
        expected = _reproduce()
    with ndd.EvalMode.deferred:
        rng = RNG(seed=77)
        results = [(name, call(rng)) for name, call in REPRODUCED_CALLS.items()]
        values = {name: _digest(result) for name, result in reversed(results)}
    assert values == expected


def test_same_seed_gives_same_results_on_another_thread():
    expected = _reproduce()
    seen = {}
    thread = threading.Thread(target=lambda: seen.update(values=_reproduce()))
    thread.start()
    thread.join()
    assert seen["values"] == expected


def _reproduce_in_child(connection):
    connection.send(_reproduce())
    connection.close()


def test_same_seed_gives_same_results_in_a_spawned_process():
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_reproduce_in_child, args=(sender,))
    child.start()
    try:
        # A child that fails before sending must fail the test, not hang it.
        assert receiver.poll(120), f"the child process sent nothing (exit code {child.exitcode})"
        values = receiver.recv()
    finally:
        child.join(timeout=30)
        if child.is_alive():
            child.kill()
    assert child.exitcode == 0
    assert values == _reproduce()


def test_distinct_rngs_give_distinct_results():
    assert _reproduce(seed=1)["uniform tensor"] != _reproduce(seed=2)["uniform tensor"]
    values = _reproduce()
    # Consecutive calls of one RNG differ too.
    rng = RNG(seed=77)
    first, second = ndd.random.uniform(shape=[5], rng=rng), ndd.random.uniform(shape=[5], rng=rng)
    assert _digest(first) == values["uniform tensor"] and _digest(second) != _digest(first)


def test_one_rng_shared_by_calls_interleaved_with_draws():
    """A call's results depend only on the RNG's position when it is made."""
    rng = RNG(seed=9)
    rng.advance(3)
    skipped = ndd.random.uniform(shape=[4], rng=rng)
    direct = RNG(seed=9)
    for _ in range(3):
        direct()
    np.testing.assert_array_equal(ndd.random.uniform(shape=[4], rng=direct), skipped)


def _random_key(seed):
    return draw_random_key(ndd.random.uniform.__ndd_operator__, "rng", RNG(seed=seed))


def test_random_key_holds_the_drawn_words():
    expected = RNG(seed=31)
    assert _random_key(31).words == tuple(expected() for _ in range(KEY_WORDS))


def test_random_key_generators_are_reproducible_and_independent():
    key = _random_key(32)
    streams = [key.generator()] + [key.sample_generator(i) for i in range(3)]
    values = [g.random(4).tolist() for g in streams]
    assert len({tuple(v) for v in values}) == 4
    assert key.generator().random(4).tolist() == values[0]
    assert _random_key(32).sample_generator(2).random(4).tolist() == values[3]
    assert _random_key(33).generator().random(4).tolist() != values[0]
    with pytest.raises(ValueError, match="sample index must be non-negative"):
        key.sample_generator(-1)


@pytest.mark.parametrize(
    "rng",
    [5, "seed", np.random.default_rng(0), lambda: 5, ndd.tensor(np.uint32(3))],
    ids=["int", "str", "numpy-generator", "function", "tensor"],
)
@pytest.mark.parametrize(
    "call",
    [
        lambda rng: ndd.random.uniform(rng=rng),
        lambda rng: ndd.random.choice(3, rng=rng),
        lambda rng: ndd.batch_permutation(batch_size=2, rng=rng),
        lambda rng: ndd.random_crop_generator(SHAPE, rng=rng),
    ],
    ids=["random.uniform", "random.choice", "batch_permutation", "random_crop_generator"],
)
def test_rng_must_be_an_rng(call, rng):
    with pytest.raises(
        ValueError, match=r"ndd\.[a-z_.]+: 'rng' must be an ndd.random.RNG or None, got "
    ) as info:
        call(rng)
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("op", ["uniform", "normal", "coin_flip", "beta"])
def test_seed_is_not_a_parameter(op):
    with pytest.raises(TypeError, match="seed"):
        getattr(ndd.random, op)(seed=3)


@pytest.mark.parametrize(
    "call",
    [
        lambda rng: ndd.random.uniform(np.zeros(3), shape=[3], rng=rng),
        lambda rng: ndd.random.uniform(range=[2, 1], rng=rng),
        lambda rng: ndd.random.coin_flip(dtype=ndd.float32, rng=rng),
        lambda rng: ndd.random.choice(0, rng=rng),
    ],
)
def test_a_call_that_fails_at_the_call_site_draws_nothing(call):
    # The reference draws before some of its checks; a failed call has no result to key.
    rng = RNG(seed=4)
    with pytest.raises((ValueError, TypeError)):
        call(rng)
    assert rng.get_state() == RNG(seed=4).get_state()


def test_bad_rng_draws_nothing_from_the_default_rng():
    default = ndd.random.get_default_rng()
    state = default.get_state()
    with pytest.raises(ValueError):
        ndd.random.uniform(rng=3)
    assert default.get_state() == state


# --------------------------------------------------------------------------- signatures


def _signature(fn):
    return [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in inspect.signature(fn).parameters.values()
    ]


def _resolve(path):
    obj = ndd
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


SIGNATURES = {name: params for name, params in GOLDEN["signatures"].items() if not name.endswith("__all__")}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signature_matches_the_reference(name):
    assert _signature(_resolve(name)) == SIGNATURES[name]


def test_public_names_match_the_reference():
    assert sorted(ndd.random.__all__) == GOLDEN["signatures"]["random.__all__"]
    assert "random" in ndd.__all__ and "random_crop_generator" in ndd.__all__


@pytest.mark.skipif(sys.version_info < (3, 11), reason="typing.final marks the class from Python 3.11 on")
def test_rng_is_final():
    assert getattr(RNG, "__final__", False) is True


def _draws_in_fork(connection):
    connection.send(np.asarray(ndd.random.uniform(shape=[4])).tolist())
    connection.close()


def _draws_of_forked_child():
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_draws_in_fork, args=(sender,))
    child.start()
    try:
        assert receiver.poll(60), "the forked child sent nothing"
        return receiver.recv()
    finally:
        child.join(timeout=30)


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_forked_children_do_not_repeat_the_parents_default_draws():
    def run():
        ndd.random.uniform()  # the default RNG exists before the fork
        child = _draws_of_forked_child()
        return child, np.asarray(ndd.random.uniform(shape=[4])).tolist()

    results = {}
    thread = threading.Thread(target=lambda: results.update(unseeded=run()))
    thread.start()
    thread.join()
    child, parent = results["unseeded"]
    assert child != parent

    def seeded():
        ndd.random.set_seed(5)
        child = _draws_of_forked_child()
        return child, np.asarray(ndd.random.uniform(shape=[4])).tolist()

    thread = threading.Thread(target=lambda: results.update(seeded=seeded()))
    thread.start()
    thread.join()
    child, parent = results["seeded"]
    assert child == parent  # set_seed chose the sequence: the child keeps it
