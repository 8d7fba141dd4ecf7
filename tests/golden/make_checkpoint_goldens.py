"""Regenerate ``checkpoint_reference.json`` from the REFERENCE implementation.

Run with the reference interpreter (never with the project's own venv):

    $HOME/dali-ref/bin/python tests/golden/make_checkpoint_goldens.py

Only observed behaviour is recorded; nothing here is part of the package.

Output (next to this script): ``checkpoint_reference.json``

    {
      "reference_version": "2.4.0",
      "module_all": ["Checkpoint", "current"],           # checkpoint.__all__
      "public_members": [...],                           # public names of Checkpoint
      "properties": [...],                               # which of them are properties
      "eval_context_has_checkpoint": true,
      "signatures": {name: [{"name", "kind", "required"}]},   # "self" left out;
                                                         # "current" is the module function
      "anonymous_keys": [...],     # register(a), register(b, "named"), register(c),
                                   # register(a) again: the returned keys
      "serialized": "...",         # serialize() after collect() of the objects above,
                                   # with states 10, 20, 30 (exact text)
      "saved_files": [...],        # basenames written by save("ckpt_{seq:04d}.json")
                                   # twice, into a folder that already holds ckpt_0004.json
      "loaded_file": "...",        # basename that load() of the same pattern picks
      "errors": {rule: "<builtin exception class>"}
    }

``errors`` maps each scenario below to the first builtin class in the MRO of
the exception the reference raised (json.JSONDecodeError -> "ValueError"), or
"no error".  The scenarios use small duck-typed classes with
``get_state(*, cuda_stream=None)`` / ``set_state(value)``; the one about a reader
started without checkpointing uses a real ``readers.File`` over a temporary folder.
"""

import builtins
import inspect
import json
import os
import pathlib
import tempfile

import nvidia.dali as dali
import nvidia.dali.experimental.dynamic as ndd

Checkpoint = ndd.checkpoint.Checkpoint


class Counter:
    def __init__(self, value=0):
        self.value = value

    def get_state(self, *, cuda_stream=None):
        return self.value

    def set_state(self, value):
        self.value = int(value)


class OtherCounter(Counter):
    pass


def _builtin_error_name(fn):
    try:
        fn()
    except Exception as e:
        return next(cls.__name__ for cls in type(e).__mro__ if cls.__module__ == "builtins")
    return "no error"


def _signature(fn):
    return [
        {"name": p.name, "kind": p.kind.name, "required": p.default is inspect.Parameter.empty}
        for p in inspect.signature(fn).parameters.values()
        if p.name != "self"
    ]


def _collected():
    ckpt = Checkpoint()
    ckpt.register(Counter(1), "x")
    ckpt.collect()
    return ckpt


def _loaded(payload):
    ckpt = Checkpoint()
    ckpt.deserialize(json.dumps(payload))
    return ckpt


def _started_reader_without_checkpointing():
    root = pathlib.Path(tempfile.mkdtemp())
    for label in ("a", "b"):
        (root / label).mkdir()
        (root / label / "img0.jpg").write_bytes(b"x" * 8)
    reader = ndd.readers.File(file_root=str(root))
    next(iter(reader.next_epoch(batch_size=1)))
    return reader


def _with_state(name, value, op_type=None):
    ckpt = Checkpoint()
    ckpt.set_state(name, value, op_type)
    return ckpt


def _registered_then(*calls):
    ckpt = Checkpoint()
    obj = Counter()
    ckpt.register(obj)
    for call in calls:
        call(ckpt, obj)


def _save_in_temp(ckpt, pattern):
    with tempfile.TemporaryDirectory() as folder:
        return ckpt.save(os.path.join(folder, pattern))


def _load_in_temp(pattern):
    with tempfile.TemporaryDirectory() as folder:
        return Checkpoint().load(os.path.join(folder, pattern))


ENTRY = {"state": "1", "type": "Counter"}

ERRORS = {
    "register_named_object_already_registered_under_another_key": lambda: _registered_then(
        lambda c, o: c.register(o, "x")
    ),
    "register_replace_with_different_type": lambda: _registered_then(
        lambda c, o: c.register(Counter(), "x"), lambda c, o: c.register(OtherCounter(), "x")
    ),
    "register_replace_with_same_type": lambda: _registered_then(
        lambda c, o: c.register(Counter(), "x"), lambda c, o: c.register(Counter(), "x")
    ),
    "register_reserved_prefix": lambda: Checkpoint().register(Counter(), "__op_7"),
    "register_empty_name": lambda: Checkpoint().register(Counter(), ""),
    "register_anonymous_after_collect": lambda: _collected().register(Counter()),
    "register_new_name_after_collect": lambda: _collected().register(Counter(), "y"),
    "register_existing_name_after_collect": lambda: _collected().register(Counter(), "x"),
    "register_unknown_name_after_load": lambda: _loaded({"version": 2, "states": {"x": ENTRY}}).register(
        Counter(), "y"
    ),
    "register_anonymous_without_state_after_load": lambda: _loaded(
        {"version": 2, "states": {"x": ENTRY}}
    ).register(Counter()),
    "register_state_type_mismatch": lambda: _loaded({"version": 2, "states": {"x": ENTRY}}).register(
        OtherCounter(), "x"
    ),
    "register_reader_started_without_checkpointing": lambda: Checkpoint().register(
        _started_reader_without_checkpointing()
    ),
    "get_state_unregistered": lambda: Checkpoint().get_state("x"),
    "set_state_unknown_after_collect": lambda: _collected().set_state("y", 1),
    "set_state_bad_op_type": lambda: Checkpoint().set_state("x", 1, op_type=3),
    "collect_state_without_object": lambda: _with_state("x", 1).collect(),
    "restore_state_without_object": lambda: _with_state("x", 1).restore(),
    "restore_object_without_state": lambda: _registered_then(
        lambda c, o: c.register(Counter(), "x"), lambda c, o: c.set_state("x", 1), lambda c, o: c.restore()
    ),
    "restore_empty": lambda: Checkpoint().restore(),
    "serialize_empty": lambda: Checkpoint().serialize(),
    "save_empty": lambda: _save_in_temp(Checkpoint(), "ckpt_{seq}.json"),
    "deserialize_invalid_json": lambda: Checkpoint().deserialize("{not json"),
    "deserialize_not_an_object": lambda: Checkpoint().deserialize("[]"),
    "deserialize_version_missing": lambda: Checkpoint().deserialize('{"states": {}}'),
    "deserialize_version_unknown": lambda: Checkpoint().deserialize('{"version": 3, "states": {}}'),
    "deserialize_version_as_string": lambda: Checkpoint().deserialize('{"version": "2", "states": {}}'),
    "deserialize_states_not_an_object": lambda: Checkpoint().deserialize('{"version": 2, "states": []}'),
    "deserialize_entry_without_state": lambda: Checkpoint().deserialize(
        '{"version": 2, "states": {"x": {"type": "Counter"}}}'
    ),
    "deserialize_type_not_a_string": lambda: Checkpoint().deserialize(
        '{"version": 2, "states": {"x": {"state": "1", "type": 4}}}'
    ),
    "pattern_other_field": lambda: _save_in_temp(_with_state("x", 1), "ckpt_{epoch}.json"),
    "pattern_seq_twice": lambda: _save_in_temp(_with_state("x", 1), "{seq}_{seq}.json"),
    "load_no_match": lambda: _load_in_temp("ckpt_{seq:04d}.json"),
}


def _anonymous_keys():
    ckpt = Checkpoint()
    a, b, c = Counter(10), Counter(20), OtherCounter(30)
    keys = [ckpt.register(a), ckpt.register(b, "named"), ckpt.register(c), ckpt.register(a)]
    ckpt.collect()
    return keys, ckpt.serialize()


def _save_and_load_names():
    with tempfile.TemporaryDirectory() as folder:
        pattern = os.path.join(folder, "ckpt_{seq:04d}.json")
        pathlib.Path(folder, "ckpt_0004.json").write_text("{}")
        ckpt = _with_state("x", 1)
        saved = [os.path.basename(ckpt.save(pattern)) for _ in range(2)]
        loaded = os.path.basename(Checkpoint().load(pattern))
    return saved, loaded


def main():
    members = sorted(n for n in dir(Checkpoint) if not n.startswith("_"))
    signatures = {
        name: _signature(getattr(Checkpoint, name))
        for name in members + ["__init__", "__len__", "__contains__"]
        if not isinstance(getattr(Checkpoint, name), property)
    }
    signatures["current"] = _signature(ndd.checkpoint.current)
    keys, serialized = _anonymous_keys()
    saved, loaded = _save_and_load_names()
    golden = {
        "reference_version": dali.__version__,
        "module_all": list(ndd.checkpoint.__all__),
        "public_members": members,
        "properties": [n for n in members if isinstance(getattr(Checkpoint, n), property)],
        "eval_context_has_checkpoint": isinstance(ndd.EvalContext.checkpoint, property),
        "signatures": signatures,
        "anonymous_keys": keys,
        "serialized": serialized,
        "saved_files": saved,
        "loaded_file": loaded,
        "errors": {rule: _builtin_error_name(fn) for rule, fn in ERRORS.items()},
    }
    assert all(hasattr(builtins, v) or v == "no error" for v in golden["errors"].values())
    out = pathlib.Path(__file__).with_name("checkpoint_reference.json")
    out.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
