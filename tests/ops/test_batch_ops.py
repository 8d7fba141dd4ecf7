"""permute_batch and batch_permutation (ndd/_ops/batch_ops.py)."""

import numpy as np
import pytest
from arrays import sample_arrays
from golden_cases import build_input, cases_for, golden_tests, replay

import ndd

DTYPES = [np.uint8, np.int32, np.int64, np.float16, np.float32, np.bool_]

# The reference turns a list of indices into a constant 1-D tensor per sample and then
# fails; its schema (and pipeline mode) take the list as the whole permutation, as we do.
LIST_INDICES_FAIL_IN_REFERENCE = {
    "permute_batch_000",
    "permute_batch_001",
    "permute_batch_002",
    "permute_batch_009",
    "permute_batch_011",
}


# The flags of the reference's recorded batch_permutation draws, by case note.
GOLDEN_FLAGS = {
    "20 seeds, batch_size=6, defaults": {},
    "allow_repetitions=True": {"allow_repetitions": True},
    "no_fixed_points=True": {"no_fixed_points": True},
    "both flags": {"allow_repetitions": True, "no_fixed_points": True},
}


def _values(batch):
    return [int(s) for s in sample_arrays(batch)]


def _ragged(dtype=np.int32):
    return [np.full((n, 2), n, dtype) for n in (1, 2, 3, 4)]


# --------------------------------------------------------------------------- permute_batch


def _check_list_of_indices(case):
    """ndd's result for a case of LIST_INDICES_FAIL_IN_REFERENCE: the indexed samples."""
    x = build_input(case["inputs"][0])
    indices = case["kwargs"]["indices"]
    out = replay(case)
    samples = sample_arrays(x) if isinstance(x, ndd.Batch) else [np.asarray(x)]
    assert out.dtype == x.dtype and out.layout == x.layout
    for got, index in zip(sample_arrays(out) if isinstance(out, ndd.Batch) else [out], indices, strict=True):
        np.testing.assert_array_equal(np.asarray(got), samples[index], strict=True)


test_permute_batch_matches_reference_golden, _ = golden_tests(
    "permute_batch",
    checks=dict.fromkeys(LIST_INDICES_FAIL_IN_REFERENCE, _check_list_of_indices),
    errors=(ValueError, TypeError, IndexError),
)


@pytest.mark.parametrize("dtype", DTYPES)
def test_permute_batch_with_a_list_of_indices(dtype):
    samples = _ragged(dtype)
    out = ndd.permute_batch(ndd.batch(samples, layout="HW"), indices=[3, 0, 2, 1])
    assert out.dtype == ndd.dtype(np.dtype(dtype)) and out.layout == "HW" and out.batch_size == 4
    for got, index in zip(sample_arrays(out), [3, 0, 2, 1], strict=True):
        np.testing.assert_array_equal(got, samples[index], strict=True)


def test_permute_batch_repeats_and_drops_samples():
    samples = _ragged()
    out = ndd.permute_batch(ndd.batch(samples), indices=np.array([2, 2, 0, 2]))
    assert [s.shape for s in sample_arrays(out)] == [(3, 2), (3, 2), (1, 2), (3, 2)]
    for got, index in zip(sample_arrays(out), [2, 2, 0, 2], strict=True):
        np.testing.assert_array_equal(got, samples[index], strict=True)


def test_permute_batch_with_a_batch_of_indices():
    samples = _ragged()
    indices = ndd.batch([np.int32(1), np.int32(3), np.int32(3), np.int32(0)])
    out = ndd.permute_batch(ndd.batch(samples), indices=indices)
    for got, index in zip(sample_arrays(out), [1, 3, 3, 0], strict=True):
        np.testing.assert_array_equal(got, samples[index], strict=True)


@pytest.mark.parametrize("index_type", [np.int8, np.uint16, np.int64, np.float32])
def test_permute_batch_accepts_integral_indices_of_any_numeric_type(index_type):
    samples = _ragged()
    indices = ndd.batch([np.array(i, index_type) for i in (2, 0, 1, 3)])
    out = ndd.permute_batch(ndd.batch(samples), indices=indices)
    assert [s.shape[0] for s in sample_arrays(out)] == [3, 1, 2, 4]


def test_permute_batch_one_index_for_all_samples():
    samples = _ragged()
    out = ndd.permute_batch(ndd.batch(samples), indices=ndd.tensor(np.int32(2)))
    for got in sample_arrays(out):
        np.testing.assert_array_equal(got, samples[2], strict=True)


def test_permute_batch_with_batch_permutation():
    samples = _ragged()
    order = ndd.batch_permutation(batch_size=4, rng=ndd.random.RNG(seed=3))
    out = ndd.permute_batch(ndd.batch(samples), indices=order)
    for got, index in zip(sample_arrays(out), _values(order), strict=True):
        np.testing.assert_array_equal(got, samples[index], strict=True)


def test_permute_batch_tensor_input_is_a_batch_of_one():
    out = ndd.permute_batch(np.float32([1, 2]), indices=0)
    assert isinstance(out, ndd.Tensor)
    np.testing.assert_array_equal(np.asarray(out), np.float32([1, 2]), strict=True)


def test_permute_batch_tensor_input_broadcast_over_batch_size():
    out = ndd.permute_batch(np.float32([1, 2]), indices=[0, 2, 1], batch_size=3)
    assert isinstance(out, ndd.Batch) and out.batch_size == 3
    for got in sample_arrays(out):
        np.testing.assert_array_equal(got, np.float32([1, 2]))


def test_permute_batch_shapes_of_a_deferred_result():
    with ndd.EvalMode.deferred:
        out = ndd.permute_batch(ndd.batch(_ragged()), indices=[1, 0, 3, 2])
        assert out.shape == [(2, 2), (1, 2), (4, 2), (3, 2)]


@pytest.mark.parametrize(
    "indices, error, match",
    [
        ([0, 1, 4, 2], IndexError, "'indices' value 4 is out of range for a batch of 4 samples"),
        ([0, -1, 3, 2], IndexError, "'indices' value -1 is out of range"),
        ([0, 1, 2], ValueError, "'indices' must be one index per sample or a list of 4 indices"),
        ([0, 1, 2, 3, 0], ValueError, "'indices' must be one index per sample or a list of 4 indices"),
        ([[0, 1], [2, 3]], ValueError, "'indices' must be one index per sample or a list of 4 indices"),
        ([0.5, 1, 2, 3], TypeError, "'indices' must hold integers"),
        (ndd.batch([np.int32(0), np.int32(9), np.int32(0), np.int32(0)]), IndexError, "'indices' value 9"),
        (ndd.batch([np.int32([0])] * 4), ValueError, "'indices' must be one index per sample"),
    ],
)
def test_permute_batch_bad_indices(indices, error, match):
    with pytest.raises(error, match=f"ndd.permute_batch: {match}"):
        ndd.permute_batch(ndd.batch(_ragged()), indices=indices)


def test_permute_batch_bad_index_found_when_running():
    with pytest.raises(
        IndexError, match="ndd.permute_batch.*'indices' value 1 is out of range for a batch of 1"
    ):
        ndd.permute_batch(np.int32([1]), indices=1).evaluate()


def test_permute_batch_indices_batch_size_must_match():
    with pytest.raises(ValueError, match="ndd.permute_batch: Inconsistent batch size"):
        ndd.permute_batch(ndd.batch(_ragged()), indices=ndd.batch([np.int32(0), np.int32(1)]))


def test_permute_batch_requires_indices():
    with pytest.raises(TypeError, match="indices"):
        ndd.permute_batch(ndd.batch(_ragged()))


# --------------------------------------------------------------------------- batch_permutation


def _draws(count, batch_size, **kwargs):
    source = ndd.random.RNG(seed=0)
    return [_values(ndd.batch_permutation(batch_size=batch_size, rng=source, **kwargs)) for _ in range(count)]


def _properties(draws, batch_size):
    return {
        "all_permutations": all(sorted(d) == list(range(batch_size)) for d in draws),
        "any_repetition": any(len(set(d)) < batch_size for d in draws),
        "any_fixed_point": any(i == v for d in draws for i, v in enumerate(d)),
        "all_in_range": all(0 <= v < batch_size for d in draws for v in d),
    }


@pytest.mark.parametrize("case", cases_for("batch_permutation"), ids=lambda c: f"{c['id']}: {c['note']}")
def test_batch_permutation_matches_reference_golden(case):
    result = case["result"]
    if not result["ok"]:
        with pytest.raises(ValueError):
            ndd.batch_permutation(**case["kwargs"])
        return
    if "custom" in result:
        # The reference records 20 draws with a batch size of 6 and what they have in common.
        expected = result["custom"]
        flags = GOLDEN_FLAGS[case["note"]]
        out = ndd.batch_permutation(batch_size=expected["batch_size"], rng=ndd.random.RNG(seed=1), **flags)
        assert type(out).__name__ == expected["type"] and out.batch_size == expected["batch_size"]
        assert out.dtype == ndd.dtype(expected["dtype"]) and out.layout == expected["layout"]
        assert out.shape == [tuple(expected["sample_shape"])] * expected["batch_size"]
        keys = ("all_permutations", "any_repetition", "any_fixed_point", "all_in_range")
        assert _properties(_draws(200, 6, **flags), 6) == {k: expected[k] for k in keys}
        return
    out = ndd.batch_permutation(**case["kwargs"])
    value = result["value"]
    assert out.dtype == ndd.dtype(value["dtype"]) and out.batch_size == value["batch_size"]
    assert out.shape == [tuple(s) for s in value["shapes"]]
    assert sorted(_values(out)) == sorted(int(v) for v in value["values"])


@pytest.mark.parametrize("batch_size", [1, 2, 5, 16])
def test_batch_permutation_is_a_permutation(batch_size):
    for draw in _draws(20, batch_size):
        assert sorted(draw) == list(range(batch_size))


@pytest.mark.parametrize("batch_size", [2, 3, 7])
def test_batch_permutation_without_fixed_points(batch_size):
    for draw in _draws(50, batch_size, no_fixed_points=True):
        assert sorted(draw) == list(range(batch_size))
        assert all(v != i for i, v in enumerate(draw))


def _cycle_lengths(order):
    seen, lengths = set(), []
    for start in range(len(order)):
        length, i = 0, start
        while i not in seen:
            seen.add(i)
            i = order[i]
            length += 1
        if length:
            lengths.append(length)
    return lengths


def test_batch_permutation_without_fixed_points_draws_single_cycles_evenly():
    # As the reference: of the 9 derangements of 4 samples, only the 6 that are one cycle.
    counts = {}
    for draw in _draws(1200, 4, no_fixed_points=True):
        assert _cycle_lengths(draw) == [4]
        counts[tuple(draw)] = counts.get(tuple(draw), 0) + 1
    assert len(counts) == 6
    assert all(150 <= c <= 250 for c in counts.values())


def test_batch_permutation_with_repetitions():
    draws = _draws(50, 6, allow_repetitions=True)
    assert all(0 <= v < 6 for d in draws for v in d)
    assert any(len(set(d)) < 6 for d in draws)


def test_batch_permutation_with_repetitions_and_without_fixed_points():
    draws = _draws(50, 5, allow_repetitions=True, no_fixed_points=True)
    assert all(0 <= v < 5 and v != i for d in draws for i, v in enumerate(d))
    assert any(len(set(d)) < 5 for d in draws)
    # Every other index appears at every position.
    assert all({d[i] for d in draws} == set(range(5)) - {i} for i in range(5))


def test_batch_permutation_draws_all_permutations_evenly():
    counts = {}
    for draw in _draws(1200, 3):
        counts[tuple(draw)] = counts.get(tuple(draw), 0) + 1
    assert len(counts) == 6
    assert all(150 <= c <= 250 for c in counts.values())


@pytest.mark.parametrize("flags", [{}, {"no_fixed_points": True}, {"allow_repetitions": True}])
def test_batch_permutation_of_one_sample_is_zero(flags):
    out = ndd.batch_permutation(batch_size=1, **flags)
    assert _values(out) == [0]


def test_batch_permutation_of_no_samples_is_empty():
    out = ndd.batch_permutation(batch_size=0)
    assert isinstance(out, ndd.Batch) and out.batch_size == 0 and out.dtype == ndd.int32


def test_batch_permutation_metadata():
    out = ndd.batch_permutation(batch_size=4)
    assert isinstance(out, ndd.Batch) and out.dtype == ndd.int32 and out.layout is None
    assert out.shape == [()] * 4
    assert all(s.dtype == np.int32 for s in sample_arrays(out))


def test_batch_permutation_same_rng_seed_gives_same_order():
    first = _values(ndd.batch_permutation(batch_size=10, rng=ndd.random.RNG(seed=5)))
    second = _values(ndd.batch_permutation(batch_size=10, rng=ndd.random.RNG(seed=5)))
    assert first == second


def test_batch_permutation_default_rng_varies():
    draws = {tuple(_values(ndd.batch_permutation(batch_size=8))) for _ in range(10)}
    assert len(draws) > 1


def test_batch_permutation_needs_a_batch_size():
    with pytest.raises(ValueError, match="ndd.batch_permutation needs a batch"):
        ndd.batch_permutation()


@pytest.mark.parametrize("rng", [3, "seed", np.random.default_rng(0), lambda: 5])
def test_batch_permutation_rng_must_be_an_rng(rng):
    with pytest.raises(ValueError, match="ndd.batch_permutation: 'rng' must be an ndd.random.RNG or None"):
        ndd.batch_permutation(batch_size=2, rng=rng)


def test_batch_permutation_with_the_same_default_rng_seed_gives_the_same_order():
    ndd.random.set_seed(12)
    first = _values(ndd.batch_permutation(batch_size=10))
    ndd.random.set_seed(12)
    assert _values(ndd.batch_permutation(batch_size=10)) == first
