"""``ndd.checkpoint``: registration rules, collect/restore, the JSON format (version 2) and files.

Names, signatures, key numbering, the serialized text and the exception type of
every rule are checked against tests/golden/checkpoint_reference.json, written
by tests/golden/make_checkpoint_goldens.py with the reference.  The objects
registered here are small duck-typed stand-ins for readers and RNGs: named
``Counter`` and ``OtherCounter`` like the generator's, so that their
``__qualname__`` in the serialized text matches.
"""

import builtins
import inspect
import json
import os
import pathlib
import threading

import pytest

import ndd
from ndd.checkpoint import Checkpoint

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent / "golden" / "checkpoint_reference.json").read_text(encoding="utf-8")
)
WHERE = "ndd.checkpoint.Checkpoint"


class Counter:
    """Stands in for an RNG: its state is an int, ``set_state`` takes it back from a string."""

    def __init__(self, value=0):
        self.value = value

    def get_state(self, *, cuda_stream=None):
        return self.value

    def set_state(self, value):
        self.value = int(value)


class OtherCounter(Counter):
    pass


class FakeReader(Counter):
    """Stands in for a reader: checkpointing must be enabled before its first iteration."""

    def __init__(self, value=0, started=False, enable_checkpointing=False):
        super().__init__(value)
        self.started = started
        self.checkpointing = enable_checkpointing

    def _enable_checkpointing(self):
        if self.started and not self.checkpointing:
            raise RuntimeError("FakeReader: started without enable_checkpointing=True")
        self.checkpointing = True


class BadState:
    """A state whose text form cannot be produced."""

    def __str__(self):
        raise RuntimeError("this state cannot be written")


def collected(**values):
    ckpt = Checkpoint()
    for name, value in values.items():
        ckpt.register(Counter(value), name)
    ckpt.collect()
    return ckpt


def loaded(states):
    ckpt = Checkpoint()
    ckpt.deserialize(json.dumps({"version": 2, "states": states}))
    return ckpt


def with_state(name, value, op_type=None):
    ckpt = Checkpoint()
    ckpt.set_state(name, value, op_type)
    return ckpt


# -- names and signatures ---------------------------------------------------------


def test_module_exports_match_reference():
    assert sorted(ndd.checkpoint.__all__) == sorted(GOLDEN["module_all"])
    assert "checkpoint" in ndd.__all__


def test_public_members_and_properties_match_reference():
    assert sorted(n for n in dir(Checkpoint) if not n.startswith("_")) == GOLDEN["public_members"]
    assert [n for n in GOLDEN["public_members"] if isinstance(getattr(Checkpoint, n), property)] == (
        GOLDEN["properties"]
    )


@pytest.mark.parametrize("name", sorted(GOLDEN["signatures"]))
def test_signature_matches_reference(name):
    fn = ndd.checkpoint.current if name == "current" else getattr(Checkpoint, name)
    ours = [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in inspect.signature(fn).parameters.values()
        if p.name != "self"
    ]
    assert ours == GOLDEN["signatures"][name]


# -- current() and EvalContext.checkpoint ---------------------------------------------


def test_eval_context_has_a_checkpoint_property_like_the_reference():
    assert isinstance(ndd.EvalContext.checkpoint, property) == GOLDEN["eval_context_has_checkpoint"]


def test_current_is_the_checkpoint_of_the_current_context():
    assert ndd.checkpoint.current() is ndd.EvalContext.current().checkpoint
    assert isinstance(ndd.checkpoint.current(), Checkpoint)
    assert ndd.checkpoint.current() is ndd.checkpoint.current()


def test_each_context_owns_its_checkpoint():
    outer = ndd.checkpoint.current()
    ctx = ndd.EvalContext()
    with ctx:
        assert ndd.checkpoint.current() is ctx.checkpoint
        assert ctx.checkpoint is not outer
    assert ndd.checkpoint.current() is outer


def test_each_thread_has_its_own_default_checkpoint():
    seen = []
    thread = threading.Thread(target=lambda: seen.append(ndd.checkpoint.current()))
    thread.start()
    thread.join()
    assert isinstance(seen[0], Checkpoint)
    assert seen[0] is not ndd.checkpoint.current()


# -- register -----------------------------------------------------------------------


def test_anonymous_keys_and_serialized_text_match_reference():
    ckpt = Checkpoint()
    a, b, c = Counter(10), Counter(20), OtherCounter(30)
    keys = [ckpt.register(a), ckpt.register(b, "named"), ckpt.register(c), ckpt.register(a)]
    assert keys == GOLDEN["anonymous_keys"]
    ckpt.collect()
    assert ckpt.serialize() == GOLDEN["serialized"]


def test_registering_the_same_object_again_returns_its_key():
    ckpt = Checkpoint()
    obj = Counter()
    assert ckpt.register(obj, "x") == "x"
    assert ckpt.register(obj) == "x"
    assert ckpt.register(obj, "x") == "x"
    assert ckpt.names == ("x",)


def test_registering_under_a_taken_name_replaces_an_object_of_the_same_type():
    ckpt = Checkpoint()
    first, second = Counter(1), Counter(2)
    ckpt.register(first, "x")
    ckpt.register(second, "x")
    ckpt.collect()
    assert ckpt.names == ("x",)
    assert ckpt.get_state("x") == 2
    # The replaced object is no longer registered anywhere.
    ckpt.clear()
    assert ckpt.register(first) == "__op_0"


def test_register_enables_checkpointing_of_a_reader_not_yet_started():
    reader = FakeReader()
    Checkpoint().register(reader, "reader")
    assert reader.checkpointing


def test_a_reader_started_without_checkpointing_is_not_registered():
    ckpt = Checkpoint()
    with pytest.raises(RuntimeError, match="enable_checkpointing"):
        ckpt.register(FakeReader(started=True), "reader")
    assert ckpt.names == ()
    assert ckpt.register(FakeReader(started=True, enable_checkpointing=True), "reader") == "reader"


def test_register_applies_a_loaded_state_at_once():
    ckpt = loaded({"x": {"state": "7", "type": "Counter"}, "__op_1": {"state": "9", "type": "Counter"}})
    x, anonymous = Counter(), Counter()
    ckpt.register(x, "x")
    assert x.value == 7
    ckpt.register(anonymous)
    assert anonymous.value == 9
    assert ckpt.get_state("x") == "7"


def test_register_applies_a_preset_state_and_checks_its_type():
    ckpt = with_state("x", 5, op_type=Counter)
    obj = Counter()
    ckpt.register(obj, "x")
    assert obj.value == 5
    by_name = with_state("x", 5, op_type="OtherCounter")
    with pytest.raises(TypeError, match="'x'.*OtherCounter.*Counter"):
        by_name.register(Counter(), "x")


def test_a_failed_registration_changes_nothing():
    ckpt = loaded({"x": {"state": "7", "type": "OtherCounter"}})
    obj = Counter()
    with pytest.raises(TypeError):
        ckpt.register(obj, "x")
    assert ckpt.names == ()
    assert obj.value == 0
    right = OtherCounter()
    ckpt.register(right, "x")
    assert right.value == 7


def test_register_rejects_objects_without_state_methods():
    with pytest.raises(TypeError, match=f"{WHERE}.register: 'op' must have get_state"):
        Checkpoint().register(object())


def test_register_rejects_a_name_that_is_not_a_string():
    with pytest.raises(TypeError, match="'name' must be a str"):
        Checkpoint().register(Counter(), 5)


def test_names_len_and_contains():
    ckpt = Checkpoint()
    ckpt.register(Counter(), "x")
    ckpt.register(Counter())
    assert ckpt.names == ("x", "__op_1")
    assert len(ckpt) == 2
    assert "x" in ckpt and "__op_1" in ckpt
    assert "y" not in ckpt


# -- exception types, rule by rule, against the reference -----------------------------


def _registered_then(*calls):
    ckpt = Checkpoint()
    obj = Counter()
    ckpt.register(obj)
    for call in calls:
        call(ckpt, obj)


ENTRY = {"state": "1", "type": "Counter"}

SCENARIOS = {
    "register_named_object_already_registered_under_another_key": lambda tmp: _registered_then(
        lambda c, o: c.register(o, "x")
    ),
    "register_replace_with_different_type": lambda tmp: _registered_then(
        lambda c, o: c.register(Counter(), "x"), lambda c, o: c.register(OtherCounter(), "x")
    ),
    "register_replace_with_same_type": lambda tmp: _registered_then(
        lambda c, o: c.register(Counter(), "x"), lambda c, o: c.register(Counter(), "x")
    ),
    "register_reserved_prefix": lambda tmp: Checkpoint().register(Counter(), "__op_7"),
    "register_empty_name": lambda tmp: Checkpoint().register(Counter(), ""),
    "register_anonymous_after_collect": lambda tmp: collected(x=1).register(Counter()),
    "register_new_name_after_collect": lambda tmp: collected(x=1).register(Counter(), "y"),
    "register_existing_name_after_collect": lambda tmp: collected(x=1).register(Counter(), "x"),
    "register_unknown_name_after_load": lambda tmp: loaded({"x": ENTRY}).register(Counter(), "y"),
    "register_anonymous_without_state_after_load": lambda tmp: loaded({"x": ENTRY}).register(Counter()),
    "register_state_type_mismatch": lambda tmp: loaded({"x": ENTRY}).register(OtherCounter(), "x"),
    "register_reader_started_without_checkpointing": lambda tmp: Checkpoint().register(
        FakeReader(started=True)
    ),
    "get_state_unregistered": lambda tmp: Checkpoint().get_state("x"),
    "set_state_unknown_after_collect": lambda tmp: collected(x=1).set_state("y", 1),
    "set_state_bad_op_type": lambda tmp: Checkpoint().set_state("x", 1, op_type=3),
    "collect_state_without_object": lambda tmp: with_state("x", 1).collect(),
    "restore_state_without_object": lambda tmp: with_state("x", 1).restore(),
    "restore_object_without_state": lambda tmp: _registered_then(
        lambda c, o: c.register(Counter(), "x"), lambda c, o: c.set_state("x", 1), lambda c, o: c.restore()
    ),
    "restore_empty": lambda tmp: Checkpoint().restore(),
    "serialize_empty": lambda tmp: Checkpoint().serialize(),
    "save_empty": lambda tmp: Checkpoint().save(str(tmp / "ckpt_{seq}.json")),
    "deserialize_invalid_json": lambda tmp: Checkpoint().deserialize("{not json"),
    "deserialize_not_an_object": lambda tmp: Checkpoint().deserialize("[]"),
    "deserialize_version_missing": lambda tmp: Checkpoint().deserialize('{"states": {}}'),
    "deserialize_version_unknown": lambda tmp: Checkpoint().deserialize('{"version": 3, "states": {}}'),
    "deserialize_version_as_string": lambda tmp: Checkpoint().deserialize('{"version": "2", "states": {}}'),
    "deserialize_states_not_an_object": lambda tmp: Checkpoint().deserialize('{"version": 2, "states": []}'),
    "deserialize_entry_without_state": lambda tmp: Checkpoint().deserialize(
        '{"version": 2, "states": {"x": {"type": "Counter"}}}'
    ),
    "deserialize_type_not_a_string": lambda tmp: Checkpoint().deserialize(
        '{"version": 2, "states": {"x": {"state": "1", "type": 4}}}'
    ),
    "pattern_other_field": lambda tmp: with_state("x", 1).save(str(tmp / "ckpt_{epoch}.json")),
    "pattern_seq_twice": lambda tmp: with_state("x", 1).save(str(tmp / "{seq}_{seq}.json")),
    "load_no_match": lambda tmp: Checkpoint().load(str(tmp / "ckpt_{seq:04d}.json")),
}


def test_every_reference_rule_has_a_scenario():
    assert sorted(SCENARIOS) == sorted(GOLDEN["errors"])


@pytest.mark.parametrize("rule", sorted(GOLDEN["errors"]))
def test_rule_raises_the_reference_exception_type(rule, tmp_path):
    expected = GOLDEN["errors"][rule]
    if expected == "no error":
        SCENARIOS[rule](tmp_path)
        return
    with pytest.raises(getattr(builtins, expected)) as info:
        SCENARIOS[rule](tmp_path)
    # Our own errors name the class; the fake reader's error is its own.
    if rule != "register_reader_started_without_checkpointing":
        assert WHERE in str(info.value)


# -- collect, restore, get_state / set_state, flags -------------------------------------


def test_collect_takes_every_state_and_sets_the_flags():
    ckpt = loaded({"x": ENTRY})
    obj = Counter()
    ckpt.register(obj, "x")
    assert (ckpt.is_complete, ckpt.is_loaded) == (False, True)
    obj.value = 42
    ckpt.collect()
    assert (ckpt.is_complete, ckpt.is_loaded) == (True, False)
    assert ckpt.get_state("x") == 42


def test_get_state_of_a_registered_object_without_a_state_is_none():
    ckpt = Checkpoint()
    ckpt.register(Counter(), "x")
    assert ckpt.get_state("x") is None


def test_a_failing_get_state_leaves_the_collected_states_as_they_were():
    class Flaky(Counter):
        fail = False

        def get_state(self, *, cuda_stream=None):
            if self.fail:
                raise RuntimeError("Flaky: state unavailable")
            return self.value

    ckpt = Checkpoint()
    x, flaky = Counter(1), Flaky(2)
    ckpt.register(x, "x")
    ckpt.register(flaky, "flaky")
    ckpt.collect()
    x.value, flaky.fail = 5, True
    with pytest.raises(RuntimeError, match="Flaky"):
        ckpt.collect()
    assert (ckpt.get_state("x"), ckpt.get_state("flaky"), ckpt.is_complete) == (1, 2, True)


def test_set_state_on_a_registered_object_waits_for_restore():
    ckpt = Checkpoint()
    a, b = Counter(), Counter()
    ckpt.register(a, "a")
    ckpt.register(b, "b")
    ckpt.set_state("a", 3)
    ckpt.set_state("b", "4", op_type=Counter)
    assert (a.value, b.value) == (0, 0)
    ckpt.restore()
    assert (a.value, b.value) == (3, 4)
    # Applied states are not applied again.
    a.value = 10
    ckpt.restore()
    assert a.value == 10


def test_set_state_after_collect_replaces_one_entry():
    ckpt = collected(x=1)
    ckpt.set_state("x", 9)
    assert ckpt.get_state("x") == 9
    assert ckpt.is_complete


def test_deserialize_sets_loaded_and_clears_complete():
    ckpt = collected(x=1)
    ckpt.deserialize(ckpt.serialize())
    assert (ckpt.is_complete, ckpt.is_loaded) == (False, True)


def test_clear_forgets_everything():
    ckpt = collected(x=1, y=2)
    ckpt.clear()
    assert (ckpt.names, len(ckpt), ckpt.is_complete, ckpt.is_loaded) == ((), 0, False, False)
    with pytest.raises(RuntimeError, match="holds no state"):
        ckpt.serialize()
    assert ckpt.register(Counter()) == "__op_0"


# -- the JSON format -------------------------------------------------------------------


def test_serialize_writes_version_2_with_text_states_and_qualnames():
    ckpt = Checkpoint()
    ckpt.register(Counter(3), "x")
    ckpt.register(OtherCounter(4))
    ckpt.collect()
    assert json.loads(ckpt.serialize()) == {
        "version": 2,
        "states": {"x": {"state": "3", "type": "Counter"}, "__op_1": {"state": "4", "type": "OtherCounter"}},
    }


def test_a_preset_state_without_type_is_written_with_null_type():
    assert json.loads(with_state("x", 5).serialize())["states"] == {"x": {"state": "5", "type": None}}


@pytest.mark.parametrize("version", ["2.0", "true", '"2"', "1", "3", None])
def test_only_format_version_2_is_read(version):
    text = '{"states": {}}' if version is None else f'{{"version": {version}, "states": {{}}}}'
    with pytest.raises(
        ValueError, match="version" if version is None else f"version {version}; .* version 2"
    ):
        Checkpoint().deserialize(text)


def test_a_state_that_is_not_text_is_rejected():
    with pytest.raises(ValueError, match="'x' must be an object with a string 'state'"):
        Checkpoint().deserialize('{"version": 2, "states": {"x": {"state": 3}}}')


def test_a_failed_deserialize_keeps_the_previous_states():
    ckpt = loaded({"x": ENTRY})
    with pytest.raises(ValueError):
        ckpt.deserialize(json.dumps({"version": 2, "states": {"y": ENTRY, "z": 1}}))
    ckpt.register(Counter(), "x")
    assert "y" not in ckpt and ckpt.get_state("x") == "1"


# -- files ------------------------------------------------------------------------------


def listing(folder):
    return sorted(str(p.relative_to(folder)) for p in pathlib.Path(folder).rglob("*"))


def test_save_numbers_files_after_the_existing_ones_like_the_reference(tmp_path):
    (tmp_path / "ckpt_0004.json").write_text("{}")
    ckpt = with_state("x", 1)
    pattern = str(tmp_path / "ckpt_{seq:04d}.json")
    saved = [os.path.basename(ckpt.save(pattern)) for _ in range(2)]
    assert saved == GOLDEN["saved_files"]
    assert os.path.basename(Checkpoint().load(pattern)) == GOLDEN["loaded_file"]


def test_save_in_an_empty_folder_starts_at_zero(tmp_path):
    ckpt = with_state("x", 1)
    assert ckpt.save(str(tmp_path / "ckpt_{seq:04d}.json")) == str(tmp_path / "ckpt_0000.json")
    assert ckpt.save(str(tmp_path / "ckpt_{seq:04d}.json")) == str(tmp_path / "ckpt_0001.json")
    assert ckpt.save(tmp_path / "plain_{seq}.json") == str(tmp_path / "plain_0.json")


def test_save_creates_folders_and_writes_the_serialized_text(tmp_path):
    ckpt = collected(x=5)
    path = ckpt.save(str(tmp_path / "a" / "b" / "ckpt_{seq}.json"))
    assert path == str(tmp_path / "a" / "b" / "ckpt_0.json")
    assert pathlib.Path(path).read_text(encoding="utf-8") == ckpt.serialize()


def test_seq_may_name_a_folder(tmp_path):
    ckpt = with_state("x", 1)
    pattern = str(tmp_path / "run_{seq:02d}" / "state.json")
    assert ckpt.save(pattern) == str(tmp_path / "run_00" / "state.json")
    assert with_state("x", 1).save(pattern) == str(tmp_path / "run_01" / "state.json")
    assert Checkpoint().load(pattern) == str(tmp_path / "run_01" / "state.json")


def test_literal_braces_in_the_pattern(tmp_path):
    pattern = str(tmp_path / "ckpt{{x}}_{seq}.json")
    assert with_state("x", 1).save(pattern) == str(tmp_path / "ckpt{x}_0.json")
    assert with_state("x", 1).save(pattern) == str(tmp_path / "ckpt{x}_1.json")
    assert Checkpoint().load(pattern) == str(tmp_path / "ckpt{x}_1.json")


def test_a_pattern_with_doubled_separators_finds_its_files(tmp_path):
    pattern = f"{tmp_path}//sub//ckpt_{{seq}}.json"
    assert with_state("x", 1).save(pattern) == str(tmp_path / "sub" / "ckpt_0.json")
    assert with_state("x", 1).save(pattern) == str(tmp_path / "sub" / "ckpt_1.json")
    assert Checkpoint().load(pattern) == str(tmp_path / "sub" / "ckpt_1.json")


def test_files_not_fitting_the_pattern_are_ignored(tmp_path):
    for name in ["ckpt_abc.json", "other_0009.json", "ckpt_0009.json.tmp", "ckpt_.json", "ckpt_0002.json"]:
        (tmp_path / name).write_text("{}")
    ckpt = with_state("x", 1)
    assert ckpt.save(str(tmp_path / "ckpt_{seq:04d}.json")) == str(tmp_path / "ckpt_0003.json")
    assert Checkpoint().load(str(tmp_path / "ckpt_{seq:04d}.json")) == str(tmp_path / "ckpt_0003.json")


def test_numbering_continues_when_old_files_are_deleted(tmp_path):
    ckpt = with_state("x", 1)
    pattern = str(tmp_path / "ckpt_{seq}.json")
    for _ in range(3):
        os.remove(ckpt.save(pattern))
    assert ckpt.save(pattern) == str(tmp_path / "ckpt_3.json")


def test_each_pattern_is_numbered_on_its_own(tmp_path):
    # The reference keeps one counter per checkpoint: the second pattern would start at 1.
    ckpt = with_state("x", 1)
    ckpt.save(str(tmp_path / "a_{seq}.json"))
    assert ckpt.save(str(tmp_path / "b_{seq}.json")) == str(tmp_path / "b_0.json")


def test_save_after_load_continues_after_the_file_read(tmp_path):
    pattern = str(tmp_path / "ckpt_{seq}.json")
    for _ in range(2):
        with_state("x", 1).save(pattern)
    ckpt = Checkpoint()
    ckpt.load(pattern)
    os.remove(tmp_path / "ckpt_1.json")
    ckpt.register(Counter(), "x")
    ckpt.collect()
    assert ckpt.save(pattern) == str(tmp_path / "ckpt_2.json")


def test_a_plain_file_name_is_replaced_and_read(tmp_path):
    # The reference documents {seq} as optional but rejects a pattern without it.
    path = str(tmp_path / "latest.json")
    assert collected(x=1).save(path) == path
    assert collected(x=2).save(path) == path
    assert listing(tmp_path) == ["latest.json"]
    ckpt = Checkpoint()
    assert ckpt.load(path) == path
    obj = Counter()
    ckpt.register(obj, "x")
    assert obj.value == 2


def test_load_of_a_missing_plain_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="latest.json"):
        Checkpoint().load(str(tmp_path / "latest.json"))


def test_load_of_a_file_that_is_not_a_checkpoint_names_the_file(tmp_path):
    (tmp_path / "ckpt_0.json").write_text('{"version": 1, "states": {}}')
    with pytest.raises(ValueError, match=r"load: '.*ckpt_0\.json' has checkpoint format version 1"):
        Checkpoint().load(str(tmp_path / "ckpt_{seq}.json"))


@pytest.mark.parametrize("pattern", ["c_{seq:x}.json", "c_{seq:4d}.json", "c_{seq:b}.json", "c_{seq!r}.json"])
def test_seq_must_be_written_in_decimal_digits(tmp_path, pattern):
    with pytest.raises(ValueError, match=r"\{seq\}"):
        with_state("x", 1).save(str(tmp_path / pattern))
    assert listing(tmp_path) == []


def test_save_rejects_a_broken_format_string(tmp_path):
    with pytest.raises(ValueError, match="not a valid format string"):
        with_state("x", 1).save(str(tmp_path / "c_{seq.json"))


def test_a_failing_serialization_leaves_no_file(tmp_path):
    ckpt = with_state("x", BadState())
    with pytest.raises(RuntimeError, match="cannot be written"):
        ckpt.save(str(tmp_path / "sub" / "ckpt_{seq}.json"))
    assert listing(tmp_path) == []


def test_a_failing_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = str(tmp_path / "latest.json")
    collected(x=1).save(path)

    def refuse(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        collected(x=2).save(path)
    assert listing(tmp_path) == ["latest.json"]
    assert json.loads(pathlib.Path(path).read_text(encoding="utf-8"))["states"]["x"]["state"] == "1"


# -- round trip -------------------------------------------------------------------------


def test_save_and_load_into_fresh_objects(tmp_path):
    pattern = str(tmp_path / "ck" / "ckpt_{seq:04d}.json")
    ckpt = Checkpoint()
    reader, rng, anonymous = FakeReader(11), Counter(22), OtherCounter(33)
    ckpt.register(reader, "reader")
    ckpt.register(rng, "rng")
    ckpt.register(anonymous)
    ckpt.collect()
    first = ckpt.save(pattern)
    reader.value, rng.value, anonymous.value = 12, 23, 34
    ckpt.collect()
    second = ckpt.save(pattern)
    assert first != second

    resumed = Checkpoint()
    assert resumed.load(pattern) == second
    fresh = FakeReader(), Counter(), OtherCounter()
    assert [
        resumed.register(fresh[0], "reader"),
        resumed.register(fresh[1], "rng"),
        resumed.register(fresh[2]),
    ] == [
        "reader",
        "rng",
        "__op_2",
    ]
    assert [obj.value for obj in fresh] == [12, 23, 34]
    assert fresh[0].checkpointing
    resumed.collect()
    assert resumed.serialize() == ckpt.serialize()
