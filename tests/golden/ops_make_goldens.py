"""Regenerate the ``ops_*`` / ``signatures`` golden files from the reference.

Run with the reference interpreter (DALI installed in a side virtualenv):

    $HOME/dali-ref/bin/python tests/golden/ops_make_goldens.py

Outputs (next to this file):
  signatures.json  - inspect.signature of the public callables in scope, plus the
                     operator schema metadata (argument types/defaults) observed in
                     the reference.
  ops_cases.json   - one record per probed call (inputs, kwargs, result or error).
  ops_values.npz   - the arrays referenced by ops_cases.json (keys "<case id>/<tag>").

Format of a case record (ops_cases.json -> "cases"):
  id       unique string, also the prefix of its arrays in the npz
  op       dotted name relative to the ndd module ("reshape", "reductions.sum")
  call     human readable form of the call
  note     what the case probes (may be empty)
  source   the exact call that was executed (I = inputs, K = kwargs that are not literals)
  literal_kwargs  true: plain-Python kwargs were written as literals at the call site
           (the normal case); false: passed through variables (documents a reference quirk)
  inputs   list of value specs (positional inputs)
  kwargs   dict name -> JSON value or value spec; a kwarg named "dtype" (or
           "output_dtype") given as a plain string is a dtype name: numpy-style
           ("float32", "uint8", "bool") -> the ndd dtype constant;
           "types.INT16" -> nvidia.dali.types.DALIDataType.INT16;
           {"raw": x} -> x passed verbatim (e.g. the string "f16").
  result   {"ok": true, "value": value spec}  or
           {"ok": false, "error_type": "RuntimeError", "message": "..."}
           (error_type "CRASH": the reference process died on this call)
  custom cases ("call": "custom") have {"ok": true, "custom": {...}} instead
Value specs:
  {"kind": "tensor", "array": key, "dtype": name, "shape": [...], "layout": str|null}
  {"kind": "batch", "arrays": [key, ...], "dtype": name, "shapes": [[...]...],
   "layout": str|null}
  {"kind": "py", "value": x}            (a Python scalar / nested list passed as is)
  {"kind": "numpy", "array": key, ...}  (a raw numpy array passed as is)
  {"kind": "raw", "repr": r}             (a non-JSON object, e.g. np.float32, as kwarg)
  {"kind": "tuple", "items": [spec, ...]}   (multiple outputs)
  results may also be {"kind": "other", "repr": ...}
Input tensors are created with ndd.tensor(array, layout=layout) and batches with
ndd.batch([arrays...], layout=layout); the arrays in the npz already have the
intended numpy dtype.
"""

import inspect
import json
import os
import sys
import traceback

import numpy as np
import nvidia.dali.experimental.dynamic as ndd
from nvidia.dali import types as dali_types

HERE = os.path.dirname(os.path.abspath(__file__))

# ----------------------------------------------------------------------------
# dtype helpers

NP_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
            "uint64", "float16", "float32", "float64"]
NDD_BY_NAME = {n: getattr(ndd, n) for n in NP_NAMES}


def dtype_name(dt):
    for n, d in NDD_BY_NAME.items():
        if d == dt:
            return n
    return str(dt)


def resolve_dtype_kwarg(v):
    if isinstance(v, dict) and "raw" in v:
        return v["raw"]
    if isinstance(v, str):
        if v.startswith("types."):
            return getattr(dali_types.DALIDataType, v[len("types."):])
        return NDD_BY_NAME[v]
    return v


# ----------------------------------------------------------------------------
# value specs

ARRAYS = {}
CASES = []
# Every case runs in a forked child process of a parent that has only imported the
# reference (no operator ever ran in the parent). Reasons: (1) some calls segfault the
# reference; (2) in the reference, a failing operator call can poison later calls of
# the same operator in the same process (observed: after a Reshape error, the next
# Reshape with other arguments fails with "AddArg failed. Argument with name
# \"num_threads\" already exists"). A child killed by a signal is recorded with
# error_type "CRASH".


def run_isolated(fn):
    """Run fn() -> (result_dict, arrays) in a forked child; return the same."""
    import pickle
    r_fd, w_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r_fd)
        try:
            payload = pickle.dumps(("ok", fn()))
        except BaseException as e:  # noqa: BLE001
            payload = pickle.dumps(("exc", f"{type(e).__name__}: {e}\n"
                                           + traceback.format_exc()))
        with os.fdopen(w_fd, "wb") as fh:
            fh.write(payload)
        os._exit(0)
    os.close(w_fd)
    with os.fdopen(r_fd, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) or not data:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        return ({"ok": False, "error_type": "CRASH",
                 "message": f"the reference process died (signal {sig}) on this call"}, {})
    kind, val = pickle.loads(data)
    if kind == "exc":
        raise RuntimeError("golden generator failure in child:\n" + val)
    return val


class T:
    """Tensor input spec."""

    def __init__(self, arr, dtype=None, layout=None):
        self.arr = np.array(arr, dtype=dtype)
        self.layout = layout


class B:
    """Batch input spec (list of samples)."""

    def __init__(self, samples, dtype=None, layout=None):
        self.samples = [np.array(s, dtype=dtype) for s in samples]
        self.layout = layout


def materialize(v):
    if isinstance(v, T):
        return ndd.tensor(v.arr, layout=v.layout)
    if isinstance(v, B):
        return ndd.batch([s for s in v.samples], layout=v.layout)
    return v


def store(key, arr):
    assert key not in ARRAYS, key
    ARRAYS[key] = np.asarray(arr)
    return key


def encode_input(v, key):
    if isinstance(v, T):
        return {"kind": "tensor", "array": store(key, v.arr), "dtype": str(v.arr.dtype),
                "shape": list(v.arr.shape), "layout": v.layout}
    if isinstance(v, B):
        keys = [store(f"{key}_s{i}", s) for i, s in enumerate(v.samples)]
        return {"kind": "batch", "arrays": keys, "dtype": str(v.samples[0].dtype),
                "shapes": [list(s.shape) for s in v.samples], "layout": v.layout}
    if isinstance(v, np.ndarray):
        return {"kind": "numpy", "array": store(key, v), "dtype": str(v.dtype),
                "shape": list(v.shape)}
    if isinstance(v, dict) and "raw" in v:
        return {"kind": "raw", "repr": repr(v["raw"])}
    return {"kind": "py", "value": v}


def encode_output(r, key):
    if isinstance(r, ndd.Tensor):
        r.evaluate()
        a = np.asarray(r)
        return {"kind": "tensor", "array": store(key, a), "dtype": dtype_name(r.dtype),
                "shape": list(r.shape), "layout": r.layout}
    if isinstance(r, ndd.Batch):
        r.evaluate()
        keys, shapes = [], []
        for i, t in enumerate(r):
            keys.append(store(f"{key}_s{i}", np.asarray(t)))
            shapes.append(list(t.shape))
        return {"kind": "batch", "arrays": keys, "dtype": dtype_name(r.dtype),
                "shapes": shapes, "layout": r.layout, "batch_size": r.batch_size}
    if isinstance(r, (tuple, list)):
        return {"kind": "tuple",
                "items": [encode_output(x, f"{key}_{i}") for i, x in enumerate(r)]}
    return {"kind": "other", "repr": repr(r)}


def fmt_arg(v):
    if isinstance(v, T):
        return f"T({v.arr.dtype}{list(v.arr.shape)}{',' + v.layout if v.layout else ''})"
    if isinstance(v, B):
        return (f"B({v.samples[0].dtype}{[list(s.shape) for s in v.samples]}"
                f"{',' + v.layout if v.layout else ''})")
    return repr(v)


def get_op(name):
    f = ndd
    for part in name.split("."):
        f = getattr(f, part)
    return f


COUNTER = {}
DTYPE_KEYS = ("dtype", "output_dtype")
PENDING = []


def next_id(op):
    n = COUNTER.get(op, 0)
    COUNTER[op] = n + 1
    return f"{op}_{n:03d}"


def case(op, *inputs, note="", literal=True, **kwargs):
    """Declare a probe. With literal=True (default) the call is emitted into a generated
    module with every plain-Python argument written as a literal at the call site, as a
    user would write it. This matters: the reference analyses the call-site source and
    passes literal constants as operator arguments, but non-literal values of
    per-sample ("tensor") arguments as argument inputs, and several operators behave
    differently (or break) in the latter case (see OPS_NOTES.md). literal=False passes
    every kwarg through a variable to record that path."""
    PENDING.append(("case", next_id(op), op, inputs, kwargs, note, literal))


def custom(op, note, fn):
    """A case whose call cannot be expressed declaratively; fn(cid) returns a JSON dict."""
    PENDING.append(("custom", next_id(op), op, fn, note))


def render_call(op, inputs, kwargs, literal):
    parts = []
    for i, v in enumerate(inputs):
        is_plain = not isinstance(v, (T, B, np.ndarray, dict))
        parts.append(repr(v) if (is_plain and literal) else f"I[{i}]")
    for k, v in kwargs.items():
        if not literal:
            parts.append(f"{k}=K[{k!r}]")
        elif k in DTYPE_KEYS and isinstance(v, str):
            parts.append(f"{k}=types.{v[6:]}" if v.startswith("types.") else f"{k}=ndd.{v}")
        elif isinstance(v, dict) and isinstance(v.get("raw"), str):
            parts.append(f"{k}={v['raw']!r}")
        elif isinstance(v, (T, B, np.ndarray, dict)):
            parts.append(f"{k}=K[{k!r}]")
        else:
            parts.append(f"{k}={v!r}")
    return f"ndd.{op}(" + ", ".join(parts) + ")"


def write_call_module(path):
    lines = ["# generated by ops_make_goldens.py: one literal call per golden case",
             "import numpy as np",
             "import nvidia.dali.experimental.dynamic as ndd",
             "from nvidia.dali import types", ""]
    for item in PENDING:
        if item[0] != "case":
            continue
        _, cid, op, inputs, kwargs, note, literal = item
        fname = "c_" + cid.replace(".", "_")
        lines += [f"def {fname}(I, K):", f"    return {render_call(op, inputs, kwargs, literal)}", ""]
    with open(path, "w") as fh:
        fh.write("\n".join(lines))


def run_case(mod, cid, op, inputs, kwargs, note, literal):
    call = (f"{op}(" + ", ".join([fmt_arg(i) for i in inputs]
                                 + [f"{k}={fmt_arg(v)}" for k, v in kwargs.items()]) + ")")
    rec = {"id": cid, "op": op, "call": call, "note": note, "literal_kwargs": literal,
           "source": render_call(op, inputs, kwargs, literal),
           "inputs": [encode_input(v, f"{cid}/in{i}") for i, v in enumerate(inputs)],
           "kwargs": {k: (encode_input(v, f"{cid}/kw_{k}")
                          if isinstance(v, (T, B, np.ndarray)) or
                          (isinstance(v, dict) and not isinstance(v.get("raw"), str))
                          else v)
                      for k, v in kwargs.items()}}
    fn = getattr(mod, "c_" + cid.replace(".", "_"))

    def run():
        before = set(ARRAYS)
        try:
            with ndd.EvalMode.sync_cpu:
                args = [materialize(v) if isinstance(v, (T, B)) else
                        (v["raw"] if isinstance(v, dict) and "raw" in v else v)
                        for v in inputs]
                kw = {}
                for k, v in kwargs.items():
                    kw[k] = resolve_dtype_kwarg(v) if k in DTYPE_KEYS else materialize(v)
                r = fn(args, kw)
                out = encode_output(r, f"{cid}/out")
            res = {"ok": True, "value": out}
        except Exception as e:  # noqa: BLE001 - we record whatever the reference raises
            for k in [k for k in ARRAYS if k.startswith(f"{cid}/out")]:
                del ARRAYS[k]
            res = {"ok": False, "error_type": type(e).__name__, "message": str(e)}
            if e.__cause__ is not None:
                res["cause_type"] = type(e.__cause__).__name__
                res["cause_message"] = str(e.__cause__)
        return res, {k: v for k, v in ARRAYS.items() if k not in before}

    res, arrs = run_isolated(run)
    ARRAYS.update(arrs)
    rec["result"] = res
    CASES.append(rec)


def run_custom(cid, op, fn, note):
    rec = {"id": cid, "op": op, "call": "custom", "note": note, "inputs": [], "kwargs": {}}

    def run():
        try:
            with ndd.EvalMode.sync_cpu:
                return {"ok": True, "custom": fn(cid)}, {}
        except Exception as e:  # noqa: BLE001
            return {"ok": False, "error_type": type(e).__name__, "message": str(e)}, {}

    rec["result"], _ = run_isolated(run)
    CASES.append(rec)


def run_all():
    import importlib.util
    import shutil
    import tempfile
    td = tempfile.mkdtemp(prefix="ops_goldens_")
    try:
        path = os.path.join(td, "ops_golden_calls.py")
        write_call_module(path)
        spec = importlib.util.spec_from_file_location("ops_golden_calls", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        warm_source_analysis([getattr(mod, n).__code__ for n in dir(mod) if n.startswith("c_")])
        for item in PENDING:
            if item[0] == "case":
                run_case(mod, *item[1:])
            else:
                run_custom(*item[1:])
    finally:
        shutil.rmtree(td, ignore_errors=True)


# ----------------------------------------------------------------------------
# signatures

SIG_TOP = ["cast", "cast_like", "copy", "reshape", "reinterpret", "transpose", "squeeze",
           "expand_dims", "slice", "cat", "stack", "pad", "full", "full_like", "zeros",
           "zeros_like", "ones", "ones_like", "one_hot", "lookup_table", "element_extract",
           "get_property", "permute_batch", "batch_permutation", "tensor", "as_tensor",
           "batch", "as_batch", "dtype", "type_id", "set_num_threads", "get_num_threads",
           "stream", "set_current_stream", "get_current_stream", "set_default_stream",
           "get_default_stream"]
SIG_CLASSES = ["EvalContext", "ThreadPool", "Device", "Stream"]


def default_info(d):
    if d is inspect.Parameter.empty:
        return {"required": True}
    info = {"required": False, "repr": repr(d)}
    if d is getattr(ndd.Stream, "create_new", None):
        info["repr"] = "<Stream.create_new sentinel>"
        info["sentinel"] = "Stream.create_new"
    import enum
    if isinstance(d, enum.Enum) or type(d).__module__.startswith("nvidia.dali.backend"):
        info["enum_type"] = type(d).__name__
        info["enum_name"] = getattr(d, "name", str(d))
        try:
            info["enum_value"] = int(d)
        except Exception:  # noqa: BLE001
            info["enum_value"] = getattr(d, "value", None)
    return info


def schema_info(f):
    s = getattr(f, "_schema", None)
    if s is None:
        return None
    args = {}
    for a in s.GetArgumentNames():
        info = {"type": str(s.GetArgumentType(a)).replace("DALIDataType.", ""),
                "tensor_arg": bool(s.IsTensorArgument(a)),
                "optional": bool(s.IsArgumentOptional(a)),
                "deprecated": bool(s.IsDeprecatedArg(a))}
        if s.HasArgumentDefaultValue(a):
            info["default"] = s.GetArgumentDefaultValueString(a)
            enum_type = {"DATA_TYPE": dali_types.DALIDataType,
                         "IMAGE_TYPE": dali_types.DALIImageType,
                         "INTERP_TYPE": dali_types.DALIInterpType}.get(info["type"])
            if enum_type is not None:
                try:
                    ev = enum_type(int(info["default"]))
                    info["default_enum"] = {"type": enum_type.__name__, "name": ev.name,
                                            "value": int(ev), "repr": repr(ev)}
                except Exception:  # noqa: BLE001
                    pass
        args[a] = info
    return {"schema_name": getattr(f, "_schema_name", s.Name()),
            "min_inputs": s.MinNumInput(), "max_inputs": s.MaxNumInput(),
            "backends": list(s.GetSupportedBackends()),
            "arguments": args}


def sig_entry(f):
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError) as e:
        return {"error": str(e)}
    s = str(sig).replace(repr(getattr(ndd.Stream, "create_new", object())),
                         "<Stream.create_new sentinel>")
    params = []
    for p in sig.parameters.values():
        e = {"name": p.name, "kind": p.kind.name}
        e.update(default_info(p.default))
        if p.annotation is not inspect.Parameter.empty:
            e["annotation"] = (p.annotation if isinstance(p.annotation, str)
                               else inspect.formatannotation(p.annotation))
        params.append(e)
    out = {"signature": s, "parameters": params}
    si = schema_info(f)
    if si is not None:
        out["schema"] = si
    return out


def make_signatures():
    res = {"reference_version": __import__("nvidia.dali").dali.__version__,
           "math": {}, "reductions": {}, "top": {}, "classes": {}}
    for n in sorted(x for x in dir(ndd.math) if not x.startswith("_")):
        res["math"][n] = sig_entry(getattr(ndd.math, n))
    for n in sorted(x for x in dir(ndd.reductions) if not x.startswith("_")):
        res["reductions"][n] = sig_entry(getattr(ndd.reductions, n))
    for n in SIG_TOP:
        res["top"][n] = sig_entry(getattr(ndd, n))
    for n in SIG_CLASSES:
        res["classes"][n] = sig_entry(getattr(ndd, n))
    with open(os.path.join(HERE, "signatures.json"), "w") as fh:
        json.dump(res, fh, indent=1, sort_keys=True)


# ----------------------------------------------------------------------------
# inputs

I32 = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
U8 = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
F32 = (np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10) * 0.5
X = T(I32, layout="HWC")
XU = T(U8, layout="HWC")
XF = T(F32, layout="HWC")
XN = T(I32)  # no layout
IMG = T(np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3), layout="HWC")
RAG = B([np.arange(6, dtype=np.int32).reshape(2, 3),
         np.arange(12, dtype=np.int32).reshape(4, 3) + 100], layout="HW")
RAG3 = B([np.arange(6, dtype=np.int32).reshape(2, 3),
          np.arange(12, dtype=np.int32).reshape(4, 3) + 100,
          np.arange(3, dtype=np.int32).reshape(1, 3) + 200], layout="HW")


def probes_reshape():
    case("reshape", X, shape=[4, 6], note="ndim changes")
    case("reshape", X, shape=[-1])
    case("reshape", X, shape=[6, -1])
    case("reshape", X, shape=(4, 6), note="shape as tuple")
    case("reshape", X, shape=[3, 2, 4], note="same ndim: layout kept?")
    case("reshape", X, shape=[3, 2, 4], layout="ABC")
    case("reshape", X, shape=[6, 4], layout="AB")
    case("reshape", X, shape=[6, 4], layout="ABC", note="layout length mismatch")
    case("reshape", X, shape=[3, 2, 4], layout="", note="explicit empty layout")
    case("reshape", X, layout="XYZ", note="layout only")
    case("reshape", X, note="no arguments")
    case("reshape", X, rel_shape=[0.5, 2, 1])
    case("reshape", X, rel_shape=[1, -1], note="rel_shape with -1")
    case("reshape", X, rel_shape=[0.5, 2], note="rel_shape shorter than ndim")
    case("reshape", X, rel_shape=[1, 3, 4], note="rel_shape wrong volume")
    case("reshape", X, src_dims=[2, 0, 1])
    case("reshape", X, src_dims=[0, -1, 1, 2], note="-1 inserts unit dim")
    case("reshape", X, src_dims=[1, 2])
    case("reshape", T(I32.reshape(2, 3, 4)[:, :1, :].copy(), layout="HWC"), src_dims=[0, 2],
         note="src_dims dropping a unit dim")
    case("reshape", X, src_dims=[2, 0, 1], layout="XYZ")
    case("reshape", X, src_dims=[2, 0, 1], rel_shape=[0.5, 2, 1], note="src_dims + rel_shape")
    case("reshape", X, shape=[4, 6], src_dims=[0, 1], note="shape+src_dims")
    case("reshape", X, T(np.array([4, 6], np.int32)), note="shape_input tensor")
    case("reshape", X, T(np.array([4, 6], np.int64)), note="shape_input int64")
    case("reshape", X, [4, 6], note="shape_input as list")
    case("reshape", X, T(np.array([4, 6], np.int32)), shape=[4, 6], note="both shape input and arg")
    case("reshape", X, shape=T(np.array([4, 6], np.int32)), note="shape kwarg as Tensor")
    case("reshape", X, shape=[5, 5], note="incompatible size")
    case("reshape", X, shape=[-1, -1], note="two -1")
    case("reshape", X, shape=[5, -1], note="-1 not divisible")
    case("reshape", X, shape=[4, 6], rel_shape=[1, 1], note="shape and rel_shape")
    case("reshape", X, shape=[0, 6], note="zero extent")
    case("reshape", XF, shape=[2, 12])
    case("reshape", XU, shape=[24], layout="W")
    case("reshape", T(np.array(5, np.int32)), shape=[1, 1], note="scalar input")
    case("reshape", T(np.array([5], np.int32)), shape=[], note="to scalar")
    case("reshape", RAG, shape=[-1], note="batch")
    case("reshape", RAG, rel_shape=[0.5, 2], note="batch rel_shape")
    case("reshape", RAG, shape=B([[6], [12]], dtype=np.int32), note="per-sample shape")
    case("reshape", RAG, B([[3, 2], [6, 2]], dtype=np.int32), note="per-sample shape_input")
    case("reshape", RAG, shape=[3, 2], note="batch: one sample incompatible")
    case("reshape", RAG, src_dims=[1, 0])

    case("reinterpret", T(np.arange(8, dtype=np.uint8).reshape(2, 4)), dtype="int32")
    case("reinterpret", T(np.arange(8, dtype=np.uint8).reshape(2, 4), layout="HW"), dtype="int32")
    case("reinterpret", T(np.arange(6, dtype=np.uint8).reshape(2, 3)), dtype="int32",
         note="last dim not divisible")
    case("reinterpret", T(np.arange(8, dtype=np.uint8)), dtype="int16")
    case("reinterpret", T(np.array([1.0, -2.0], np.float32)), dtype="uint8")
    case("reinterpret", T(np.array([[1.0, -2.0]], np.float32), layout="HW"), dtype="uint8")
    case("reinterpret", X, dtype="float32", note="same size dtype, layout kept")
    case("reinterpret", T(np.arange(8, dtype=np.uint8).reshape(2, 4)), dtype="int32", shape=[2])
    case("reinterpret", T(np.arange(8, dtype=np.uint8).reshape(2, 4)), dtype="int32", shape=[-1])
    case("reinterpret", T(np.arange(16, dtype=np.uint8).reshape(4, 4)), dtype="int32",
         rel_shape=[0.5, 0.5])
    case("reinterpret", T(np.arange(16, dtype=np.uint8).reshape(4, 4)), dtype="int32",
         rel_shape=[1, 0.25])
    case("reinterpret", T(np.arange(8, dtype=np.uint8).reshape(2, 4)), shape=[4, 2], layout="AB")
    case("reinterpret", T(np.arange(8, dtype=np.uint8).reshape(2, 4)), T(np.array([8], np.int32)))
    case("reinterpret", T(np.arange(8, dtype=np.uint8).reshape(2, 4)), dtype="int32",
         shape=[3], note="bad size")
    case("reinterpret", T(np.arange(4, dtype=np.uint8)), dtype="int32", note="1D u8x4 -> i32")
    case("reinterpret", T(np.array(7, np.int32)), dtype="uint8", note="scalar input")
    case("reinterpret", RAG, dtype="uint8", note="batch")

    case("cast_like", X, XF)
    case("cast_like", XF, XU)
    case("cast_like", XF, T(np.array(1, np.int16)), note="0-D like input")
    case("cast_like", RAG, T(np.array(1.0, np.float32)), note="batch + tensor")
    case("cast_like", X, X)
    case("copy", X)
    case("copy", XF)
    case("copy", RAG)
    case("copy", T(np.array(3.5, np.float32)))
    fvals = np.array([-1.5, -0.5, 0.5, 1.5, 2.5, 254.6, 300.7, -3.2, 1e10, -1e10], np.float32)
    case("cast", T(fvals), dtype="uint8", note="rounding/saturation")
    case("cast", T(fvals), dtype="int32")
    case("cast", T(fvals), dtype="int8")
    case("cast", T(np.array([np.nan, np.inf, -np.inf], np.float32)), dtype="int32")
    case("cast", T(np.array([300, -5, 128, 255], np.int32)), dtype="uint8")
    case("cast", T(np.array([300, -5, 128, 255], np.int32)), dtype="int8")
    case("cast", T(np.array([0, 1, 2, -1], np.int32)), dtype="bool")
    case("cast", T(np.array([0.0, 0.3, -2.0], np.float32)), dtype="bool")
    case("cast", T(np.array([True, False])), dtype="float32")
    case("cast", T(np.array([65504.0, 70000.0, 1e-8], np.float32)), dtype="float16")
    case("cast", T(np.array([2**32 - 1, 2**31], np.uint32)), dtype="int32")
    case("cast", X, dtype="float32", note="layout kept")
    case("cast", X, dtype="types.INT16", note="DALIDataType enum")
    case("cast", X, dtype={"raw": "int16"}, note="string dtype")
    case("cast", X, dtype={"raw": np.float32}, note="numpy type")
    case("cast", X, note="missing dtype")
    case("cast", RAG, dtype="float64")


def probes_layout_ops():
    case("transpose", X, perm=[2, 0, 1])
    case("transpose", X, perm=[1, 0, 2], transpose_layout=False)
    case("transpose", X, perm=[2, 0, 1], output_layout="XYZ")
    case("transpose", X, perm=[2, 0, 1], output_layout="XYZ", transpose_layout=False)
    case("transpose", X, perm=[2, 0, 1], output_layout="")
    case("transpose", X, note="no perm")
    case("transpose", XN, perm=[2, 0, 1], note="no layout")
    case("transpose", T(np.arange(6, dtype=np.float32).reshape(2, 3), layout="HW"), perm=[1, 0])
    case("transpose", X, perm=[0, 1], note="wrong length")
    case("transpose", X, perm=[0, 0, 1], note="not a permutation")
    case("transpose", X, perm=[2, 0, 3], note="out of range")
    case("transpose", X, perm=[-1, 0, 1], note="negative")
    case("transpose", X, perm=[2, 0, 1], output_layout="XY", note="bad output_layout length")
    case("transpose", RAG, perm=[1, 0], note="batch")
    case("transpose", X, perm=[2, 0, 1], batch_size=2, note="tensor input + batch_size")
    case("transpose", X, perm=[2, 0, 1], foo=1, note="unknown kwarg")

    S = T(np.arange(6, dtype=np.int32).reshape(2, 1, 3, 1), layout="HXWY")
    case("squeeze", S, axes=[1])
    case("squeeze", S, axes=[1, 3])
    case("squeeze", S, axes=[3, 1])
    case("squeeze", S, axes=[-1])
    case("squeeze", S, axis_names="X")
    case("squeeze", S, axis_names="XY")
    case("squeeze", S, axis_names="YX")
    case("squeeze", S, note="no args")
    case("squeeze", S, axes=[0], note="non-unit axis")
    case("squeeze", S, axes=[5], note="out of range")
    case("squeeze", S, axis_names="Q", note="unknown name")
    case("squeeze", S, axes=[1], axis_names="Y", note="both")
    case("squeeze", T(np.arange(6, dtype=np.int32).reshape(2, 1, 3, 1)), axes=[1, 3],
         note="no layout")
    case("squeeze", T(np.array([[7]], np.int32), layout="AB"), axes=[0, 1], note="to scalar")
    case("squeeze", B([np.zeros((1, 2), np.int32), np.zeros((1, 5), np.int32)], layout="AB"),
         axes=[0], note="batch")
    case("squeeze", B([np.zeros((1, 2), np.int32), np.zeros((2, 5), np.int32)], layout="AB"),
         axes=[0], note="batch, one sample non-unit")

    E = T(np.arange(6, dtype=np.int32).reshape(2, 3), layout="HW")
    case("expand_dims", E, axes=[0])
    case("expand_dims", E, axes=[0], new_axis_names="N")
    case("expand_dims", E, axes=[2], new_axis_names="C")
    case("expand_dims", E, axes=[1], new_axis_names="X")
    case("expand_dims", E, axes=[0, 3], new_axis_names="AB")
    case("expand_dims", E, axes=[3, 0], new_axis_names="AB", note="unsorted axes")
    case("expand_dims", E, axes=[0, 1])
    case("expand_dims", E, axes=[2])
    case("expand_dims", E, axes=[-1], note="negative")
    case("expand_dims", T(np.arange(6, dtype=np.int32).reshape(2, 3)), axes=[1], note="no layout")
    case("expand_dims", T(np.arange(6, dtype=np.int32).reshape(2, 3)), axes=[1],
         new_axis_names="X", note="no layout + name")
    case("expand_dims", E, axes=[5], note="out of range")
    case("expand_dims", E, axes=[3], note="axis == ndim+1")
    case("expand_dims", E, note="missing axes")
    case("expand_dims", E, axes=[0, 1], new_axis_names="A", note="names length mismatch")
    case("expand_dims", E, axes=[0, 0], note="duplicate")
    case("expand_dims", T(np.array(4, np.int32)), axes=[0], note="scalar input")
    case("expand_dims", T(np.array(4, np.int32)), axes=[0, 1], new_axis_names="AB")
    case("expand_dims", RAG, axes=[0], new_axis_names="N", note="batch")


def probes_slice():
    case("slice", IMG, [0.25, 0.5], [0.5, 0.5], note="positional float anchor/shape, defaults")
    case("slice", IMG, T(np.array([0.25, 0.5], np.float32)), T(np.array([0.5, 0.5], np.float32)))
    case("slice", IMG, T(np.array([1, 2], np.float32)), T(np.array([3, 2], np.float32)),
         normalized_anchor=False, normalized_shape=False)
    case("slice", IMG, T(np.array([1, 2], np.int32)), T(np.array([3, 2], np.int32)),
         note="int anchor/shape with normalized defaults")
    case("slice", IMG, T(np.array([1, 2], np.int32)), T(np.array([3, 2], np.int32)),
         normalized_anchor=False, normalized_shape=False)
    case("slice", IMG, [1, 2], [3, 2], normalized_anchor=False, normalized_shape=False,
         note="python int lists")
    case("slice", IMG, T(np.array([1, 2], np.float32)), T(np.array([3, 2], np.float32)),
         axes=[0, 1], normalized_anchor=False, normalized_shape=False)
    case("slice", IMG, T(np.array([1, 2], np.float32)), T(np.array([3, 2], np.float32)),
         axis_names="HW", normalized_anchor=False, normalized_shape=False)
    case("slice", IMG, T(np.array([0.5], np.float32)), T(np.array([0.5], np.float32)),
         note="1 anchor value for 2 default axes")
    case("slice", IMG, T(np.array([0.1, 0.1], np.float32)), T(np.array([0.5, 0.5], np.float32)),
         note="fractional rounding")
    case("slice", IMG, T(np.array([0.3, 0.3], np.float32)), T(np.array([0.4, 0.4], np.float32)),
         note="fractional rounding 2")
    case("slice", IMG, T(np.array([0.25, 0.5], np.float32)), note="anchor without shape")
    case("slice", IMG, start=[1, 2], shape=[3, 2], note="start/shape kwargs (default axes)")
    case("slice", IMG, start=[1, 2], end=[4, 4])
    case("slice", IMG, start=[1, 2], shape=[3, 2], axes=[0, 1])
    case("slice", IMG, start=[1, 2], shape=[3, 2], axis_names="HW")
    case("slice", IMG, start=[1], shape=[2], axis_names="C")
    case("slice", IMG, start=[1], shape=[2], axes=[2])
    case("slice", IMG, start=[1], shape=[2], axes=[-1], note="negative axis")
    case("slice", IMG, start=[2], end=[4], note="only 1 value for 2 default axes")
    case("slice", IMG, end=[3, 2], note="end only")
    case("slice", IMG, shape=[3, 2], note="shape only")
    case("slice", IMG, start=[1, 1], note="start only")
    case("slice", IMG, rel_start=[0.5, 0.25], rel_end=[1.0, 0.75])
    case("slice", IMG, rel_start=[0.5, 0.25], rel_shape=[0.5, 0.5])
    case("slice", IMG, rel_start=[0.5, 0.25], shape=[2, 2], note="rel_start + shape")
    case("slice", IMG, start=[1, 1], rel_start=[0.5, 0.5], shape=[2, 2], note="start and rel_start")
    case("slice", IMG, start=[1, 1], shape=[2, 2], end=[3, 3], note="shape and end")
    case("slice", IMG, start=[4, 2], shape=[4, 3], note="out of bounds, default policy")
    case("slice", IMG, start=[4, 2], shape=[4, 3], out_of_bounds_policy="error")
    case("slice", IMG, start=[4, 2], shape=[4, 3], out_of_bounds_policy="pad")
    case("slice", IMG, start=[4, 2], shape=[4, 3], out_of_bounds_policy="trim_to_shape")
    case("slice", IMG, start=[-1, -1], shape=[3, 3], out_of_bounds_policy="pad")
    case("slice", IMG, start=[-1, -1], shape=[3, 3], out_of_bounds_policy="trim_to_shape")
    case("slice", IMG, start=[4, 2], shape=[4, 3], out_of_bounds_policy="pad", fill_values=[255])
    case("slice", IMG, start=[4, 2], shape=[4, 3], out_of_bounds_policy="pad",
         fill_values=[1, 2, 3], note="per channel fill")
    case("slice", IMG, start=[4, 2], shape=[4, 3], out_of_bounds_policy="pad",
         fill_values=[1, 2], note="bad fill length")
    case("slice", IMG, start=[4, 2], shape=[4, 3], out_of_bounds_policy="bogus")
    case("slice", IMG, start=[1, 2], shape=[3, 2], dtype="float32")
    case("slice", IMG, start=[1, 2], shape=[3, 2], dtype="int16")
    case("slice", IMG, start=[1, 2], shape=[0, 2], note="zero extent")
    case("slice", T(np.arange(10, dtype=np.float32)), start=[2], shape=[3],
         note="1D input, default axes [1,0]")
    case("slice", T(np.arange(10, dtype=np.float32)), start=[2], shape=[3], axes=[0])
    case("slice", T(np.arange(10, dtype=np.float32)), T(np.array([0.2], np.float32)),
         T(np.array([0.5], np.float32)), axes=[0])
    case("slice", T(np.arange(12, dtype=np.int32).reshape(3, 4)), start=[1, 1], shape=[2, 2],
         note="2D no layout default axes")
    case("slice", T(np.arange(12, dtype=np.int32).reshape(3, 4), layout="HW"), start=[1, 0],
         shape=[2, 2], note="2D HW layout default axis_names WH")
    case("slice", T(np.arange(12, dtype=np.int32).reshape(3, 4), layout="AB"), start=[1, 0],
         shape=[2, 2], note="layout without W/H")
    case("slice", RAG, start=[1, 0], shape=[1, 1], note="batch")
    case("slice", RAG, start=B([[0, 0], [1, 2]], dtype=np.int32), shape=[2, 1],
         note="per-sample start")
    case("slice", RAG, B([[0.0, 0.0], [0.5, 0.5]], dtype=np.float32),
         B([[1.0, 0.5], [0.5, 0.5]], dtype=np.float32), note="per-sample anchor/shape inputs")
    case("slice", IMG, start=[1, 2], shape=[3, 2], out_of_bounds_policy="pad",
         fill_values=[9], note="in-bounds with pad")
    case("slice", XF, start=[0, 0, 1], shape=[2, 3, 2], axes=[0, 1, 2])


def probes_join_pad():
    a = T(np.arange(24, dtype=np.int32).reshape(2, 3, 4), layout="HWC")
    b = T(np.arange(8, dtype=np.int32).reshape(2, 1, 4) + 100, layout="HWC")
    c = T(np.arange(12, dtype=np.int32).reshape(1, 3, 4) + 200, layout="HWC")
    case("cat", a, b, axis=1)
    case("cat", a, b, axis_name="W")
    case("cat", a, c, note="default axis 0")
    case("cat", a, c, axis=0)
    case("cat", a, c, c, axis=0, note="three inputs")
    case("cat", a, note="single input")
    case("cat", a, b, axis=-2, note="negative axis")
    case("cat", a, b, note="mismatch along non-cat axis")
    case("cat", a, b, axis=3, note="axis out of range")
    case("cat", a, b, axis_name="Q", note="unknown axis_name")
    case("cat", a, T(np.arange(8, dtype=np.int32).reshape(2, 1, 4)), axis=1,
         note="second input without layout")
    case("cat", a, T(np.arange(8, dtype=np.int32).reshape(2, 1, 4), layout="XYZ"), axis=1,
         note="different layouts")
    case("cat", T(np.arange(8, dtype=np.int32).reshape(2, 1, 4)), b, axis=1,
         note="first input without layout")
    case("cat", a, T(np.arange(8, dtype=np.float32).reshape(2, 1, 4), layout="HWC"), axis=1,
         note="dtype mismatch")
    case("cat", a, T(np.arange(8, dtype=np.int32).reshape(2, 4)), axis=1, note="ndim mismatch")
    case("cat", T(np.array([1, 2], np.int32)), T(np.array([3], np.int32)), note="1D")
    case("cat", T(np.array([1, 2], np.int32)), [3, 4], note="python list input")
    case("cat", T(np.array(1, np.int32)), T(np.array(2, np.int32)), note="0-D inputs")
    case("cat", RAG, RAG, axis=1, note="batch")
    case("cat", RAG, T(np.zeros((1, 3), np.int32), layout="HW"), axis=0, note="batch + tensor")

    case("stack", a, a, note="default axis 0")
    case("stack", a, a, axis_name="N")
    case("stack", a, a, axis=1)
    case("stack", a, a, axis=1, axis_name="N")
    case("stack", a, a, axis=3, axis_name="N")
    case("stack", a, a, axis=-1, note="negative axis")
    case("stack", a, a, axis=4, note="out of range")
    case("stack", a, a, axis_name="NN", note="2-char axis_name")
    case("stack", a, b, note="shape mismatch")
    case("stack", a, T(np.arange(24, dtype=np.int32).reshape(2, 3, 4)), note="layout mismatch")
    case("stack", a, note="single input")
    case("stack", T(np.array([1, 2], np.int32)), T(np.array([3, 4], np.int32)), axis=1)
    case("stack", T(np.array(1.5, np.float32)), T(np.array(2.5, np.float32)), note="0-D inputs")
    case("stack", RAG, RAG, axis=2, axis_name="C", note="batch")

    P = T(np.arange(6, dtype=np.int32).reshape(2, 3) + 1, layout="HW")
    case("pad", P, note="sample mode no args")
    case("pad", P, shape=[4, 5])
    case("pad", P, shape=[4, -1])
    case("pad", P, shape=[-1, 5])
    case("pad", P, axes=[1], shape=[5])
    case("pad", P, axes=[0], shape=[4])
    case("pad", P, axes=[-1], shape=[5], note="negative axis")
    case("pad", P, axis_names="W", shape=[5])
    case("pad", P, axis_names="WH", shape=[5, 4], note="axis_names order")
    case("pad", P, axes=[1, 0], shape=[5, 4])
    case("pad", P, shape=[1, 2], note="shape smaller than input")
    case("pad", P, shape=[4], note="shape shorter than ndim, no axes")
    case("pad", P, align=[4], axes=[1])
    case("pad", P, align=4, note="scalar align, all axes")
    case("pad", P, align=[4, 4])
    case("pad", P, align=[4], note="1 align for 2 axes")
    case("pad", P, shape=[5, 5], align=[4, 4], note="shape then align")
    case("pad", P, shape=[4, 5], fill_value=7)
    case("pad", P, shape=[4, 5], fill_value=-1.5, note="float fill on int")
    case("pad", T(np.ones((2, 3), np.uint8), layout="HW"), shape=[3, 3], fill_value=-1,
         note="negative fill on uint8")
    case("pad", T(np.ones((2, 3), np.uint8), layout="HW"), shape=[3, 3], fill_value=300)
    case("pad", T(np.ones((2, 3), np.float32), layout="HW"), shape=[3, 3], fill_value=0.5)
    case("pad", X, axis_names="HW", align=[4, 4])
    case("pad", X, axes=[0, 1], shape=[3, 5], fill_value=9)
    case("pad", P, axes=[2], shape=[5], note="axis out of range")
    case("pad", P, axis_names="C", shape=[5], note="unknown axis name")
    case("pad", P, axes=[1], axis_names="W", shape=[5], note="both axes and axis_names")
    case("pad", RAG, note="batch default: to batch max")
    case("pad", RAG3, note="batch of 3 default")
    case("pad", RAG3, axes=[0], note="batch axes=[0]")
    case("pad", RAG3, axes=[1], note="batch axes=[1] (all equal)")
    case("pad", RAG3, shape=[-1, 5])
    case("pad", RAG3, shape=[6, -1])
    case("pad", RAG3, shape=[3, 3], note="batch shape smaller than some sample")
    case("pad", RAG3, align=[3], axes=[0])
    case("pad", RAG3, align=[4, 4])
    case("pad", RAG3, fill_value=-7)
    case("pad", RAG3, fill_value=B([[1], [2], [3]], dtype=np.float32), note="per-sample fill")
    case("pad", RAG3, shape=B([[3, 4], [5, 4], [2, 4]], dtype=np.int32), note="per-sample shape")


def probes_constructors():
    case("full", T(np.array(3.0, np.float32)), shape=[2, 3])
    case("full", 3, shape=[2], note="python int fill")
    case("full", 3.5, shape=[2], note="python float fill")
    case("full", True, shape=[2], note="python bool fill")
    case("full", T(np.array(3, np.uint8)), shape=[2, 2])
    case("full", T(np.array(3, np.float16)), shape=[2])
    case("full", T(np.array(3, np.int64)), shape=[2])
    case("full", T(np.array([1, 2, 3], np.int32)), shape=[2, 3], note="vector fill broadcast")
    case("full", T(np.array([1, 2, 3], np.int32)), shape=[3, 2], note="vector fill non-broadcastable")
    case("full", T(np.array([[1], [2]], np.int32)), shape=[2, 3], note="column fill")
    case("full", T(np.array([1, 2, 3], np.int32)), note="vector fill no shape")
    case("full", T(np.array(3.0, np.float32)), note="no shape -> scalar")
    case("full", T(np.array(3.0, np.float32)), shape=[2, 3], layout="HW")
    case("full", T(np.array(3.0, np.float32)), shape=[2, 3], layout="HWC", note="bad layout len")
    case("full", T(np.array(3.0, np.float32)), shape=(2, 3), note="tuple shape")
    case("full", T(np.array(3.0, np.float32)), shape=T(np.array([2, 3], np.int32)),
         note="tensor shape")
    case("full", T(np.array(3.0, np.float32)), shape=[], note="empty shape")
    case("full", T(np.array(3.0, np.float32)), shape=[2], batch_size=3)
    case("full", B([np.array(1, np.int32), np.array(2, np.int32)]), shape=[2], note="batch fill")
    case("full", T(np.array(3.0, np.float32)), shape=[-1, 2], note="negative shape")
    case("full", T(np.array(3.0, np.float32)), shape=[0, 2])
    case("full", T(np.array(3.0, np.float32)), shape=2, note="int shape")
    case("full_like", X, T(np.array(5.0, np.float32)))
    case("full_like", X, 5, note="python int fill")
    case("full_like", XF, T(np.array(5, np.uint8)))
    case("full_like", X, T(np.array([1, 2, 3, 4], np.int32)), note="vector fill broadcast")
    case("full_like", RAG, T(np.array(1.5, np.float32)), note="batch like")
    case("full_like", RAG, B([np.array(1, np.int32), np.array(2, np.int32)]))
    for fn in ("zeros", "ones"):
        case(fn, shape=[2, 3])
        case(fn, shape=(2, 3), dtype="float32")
        case(fn, shape=[2, 3], dtype="uint8")
        case(fn, shape=[2], dtype="bool")
        case(fn, shape=[2], dtype="float16")
        case(fn, shape=[2], dtype="types.FLOAT64")
        case(fn, note="no shape -> scalar")
        case(fn, shape=[])
        case(fn, shape=2, note="int shape")
        case(fn, shape=[2, 3], layout="HW")
        case(fn, shape=[2, 3], layout="HWC", note="bad layout len")
        case(fn, shape=T(np.array([2, 3], np.int32)), note="tensor shape")
        case(fn, shape=T(np.array([2, 3], np.int64)), note="int64 tensor shape")
        case(fn, shape=[2], batch_size=3)
        case(fn, shape=B([[1], [3]], dtype=np.int32), note="per-sample shape")
        case(fn, shape=[2, -1], note="negative")
        case(fn, shape=[2], dtype={"raw": "float32"}, note="string dtype")
        case(f"{fn}_like", X)
        case(f"{fn}_like", XF)
        case(f"{fn}_like", X, dtype="float32")
        case(f"{fn}_like", XU, dtype="bool")
        case(f"{fn}_like", RAG)
        case(f"{fn}_like", T(np.array(2.0, np.float64)))


def probes_one_hot_lut():
    case("one_hot", T(np.array(2, np.int32)), num_classes=4, note="scalar label")
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3)
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3, axis=0)
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3, axis=1)
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3, axis=2, note="axis > ndim")
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3, axis=-2)
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3, axis_name="C")
    case("one_hot", T(np.array([1, 0, 2], np.int32), layout="W"), num_classes=3, axis_name="C")
    case("one_hot", T(np.array([1, 0, 2], np.int32), layout="W"), num_classes=3,
         note="layout input no axis_name")
    case("one_hot", T(np.array([1, 0, 2], np.int32), layout="W"), num_classes=3, axis=0,
         axis_name="C")
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3, axis_name="CD",
         note="2-char name")
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3, dtype="int32")
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3, dtype="uint8")
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3, dtype="bool")
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3, on_value=5, off_value=-1)
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3, on_value=2.5, off_value=0.5,
         dtype="int32")
    case("one_hot", T(np.array([1, 0, 2], np.int32)), num_classes=3, on_value=-1, dtype="uint8")
    case("one_hot", T(np.array([1, 0, 2], np.int32)), note="num_classes default")
    case("one_hot", T(np.array([3, -1, 5, 1], np.int32)), num_classes=3, note="out-of-range labels")
    case("one_hot", T(np.array([1.0, 2.0], np.float32)), num_classes=3, note="float labels")
    case("one_hot", T(np.array([1.7, -0.5], np.float32)), num_classes=3, note="fractional float")
    case("one_hot", T(np.array([1, 2], np.uint8)), num_classes=3)
    case("one_hot", T(np.array([1, 2], np.int64)), num_classes=3)
    case("one_hot", T(np.array([True, False])), num_classes=3)
    case("one_hot", T(np.array([[1, 0, 2], [2, 2, 0]], np.int32), layout="HW"), num_classes=3)
    case("one_hot", T(np.array([[1, 0, 2], [2, 2, 0]], np.int32), layout="HW"), num_classes=3,
         axis=1, axis_name="C")
    case("one_hot", T(np.array([[1, 0, 2], [2, 2, 0]], np.int32)), num_classes=3, axis=0)
    case("one_hot", T(np.array([1], np.int32)), num_classes=3, note="1-element vector")
    case("one_hot", B([np.array(1, np.int32), np.array([0, 2], np.int32)]), num_classes=3,
         note="batch mixed ndim")
    case("one_hot", B([np.array([1], np.int32), np.array([0, 2], np.int32)]), num_classes=3,
         note="batch")
    case("one_hot", B([np.array(1, np.int32), np.array(2, np.int32)]), num_classes=3,
         note="batch of scalars")

    keys = [0, 1, 2]
    vals = [10.0, 20.0, 30.0]
    inp = T(np.array([0, 1, 2, 3, 5, -1], np.int32))
    case("lookup_table", inp, keys=keys, values=vals)
    case("lookup_table", inp, keys=keys, values=vals, default_value=-1)
    case("lookup_table", inp, keys=keys, values=vals, dtype="int32")
    case("lookup_table", inp, keys=keys, values=[10.7, -20.2, 30.5], dtype="int32", note="rounding")
    case("lookup_table", inp, keys=keys, values=vals, dtype="uint8", default_value=-1)
    case("lookup_table", inp, keys=keys, values=vals, output_dtype="int16", note="deprecated arg")
    case("lookup_table", T(np.array([0, 1, 2, 255], np.uint8), layout="W"), keys=keys, values=vals)
    case("lookup_table", T(np.array([[0, 1], [2, 3]], np.int16), layout="HW"), keys=[3, 0],
         values=[1.5, 2.5])
    case("lookup_table", inp, keys=[-1, 1], values=[1.0, 2.0], note="negative key")
    case("lookup_table", inp, keys=[1, 1], values=[1.0, 2.0], note="duplicate key")
    case("lookup_table", T(np.array([70000, 3], np.int32)), keys=[70000], values=[1.0],
         note="large key")
    case("lookup_table", T(np.array([70000, 3], np.int32)), keys=[65535, 3], values=[1.0, 2.0],
         note="key 65535")
    case("lookup_table", T(np.array([70000, 3], np.int32)), keys=[65536, 3], values=[1.0, 2.0],
         note="key 65536")
    case("lookup_table", inp, keys=[0, 1], values=[1.0], note="length mismatch")
    case("lookup_table", inp, note="no keys/values")
    case("lookup_table", T(np.array([0.0, 1.0], np.float32)), keys=keys, values=vals,
         note="float input")
    case("lookup_table", T(np.array([0, 1], np.int64)), keys=keys, values=vals)
    case("lookup_table", T(np.array([0, 1], np.uint32)), keys=keys, values=vals)
    case("lookup_table", T(np.array([True, False])), keys=[0, 1], values=vals[:2])
    case("lookup_table", T(np.array(2, np.int32)), keys=keys, values=vals, note="scalar")
    case("lookup_table", RAG, keys=[0, 100, 101], values=vals, default_value=0.5, note="batch")


def probes_misc():
    seq = np.arange(4 * 2 * 3 * 1, dtype=np.uint8).reshape(4, 2, 3, 1)
    S = T(seq, layout="FHWC")
    case("element_extract", S, element_map=[0])
    case("element_extract", S, element_map=[1, 3])
    case("element_extract", S, element_map=[2, 2])
    case("element_extract", S, element_map=[3, 0, 1])
    case("element_extract", S, element_map=[-1], note="negative index")
    case("element_extract", S, element_map=[4], note="out of range")
    case("element_extract", S, element_map=[], note="empty map")
    case("element_extract", S, note="missing element_map")
    case("element_extract", T(seq), element_map=[1], note="no layout")
    case("element_extract", T(seq, layout="HWCD"), element_map=[1], note="non-F layout")
    case("element_extract", T(seq[:, :, :, 0], layout="FHW"), element_map=[1])
    case("element_extract", T(np.arange(5, dtype=np.float32), layout="F"), element_map=[1, 2],
         note="1D sequence")
    case("element_extract", B([seq, seq[:2] + 100], layout="FHWC"), element_map=[1],
         note="batch")
    case("element_extract", B([seq, seq[:2] + 100], layout="FHWC"), element_map=[0, 1],
         note="batch 2 outputs")
    case("element_extract", B([seq, seq[:2] + 100], layout="FHWC"), element_map=[3],
         note="batch, out of range for one sample")

    case("get_property", X, key="layout")
    case("get_property", XN, key="layout", note="no layout")
    case("get_property", T(np.arange(4, dtype=np.float32), layout="W"), key="layout")
    case("get_property", X, key="source_info")
    case("get_property", X, key="foo", note="bad key")
    case("get_property", X, note="missing key")
    case("get_property", RAG, key="layout", note="batch")
    case("get_property", RAG, key="source_info", note="batch")
    case("get_property", T(np.array(1, np.int32)), key="layout", note="scalar")

    b3 = B([np.array([0], np.int32), np.array([1, 1], np.int32), np.array([2, 2, 2], np.int32)],
           layout="W")
    case("permute_batch", b3, indices=[2, 0, 1])
    case("permute_batch", b3, indices=[0, 0, 2], note="repetition")
    case("permute_batch", b3, indices=[1, 1, 1])
    case("permute_batch", b3, indices=B([np.array(2, np.int32), np.array(0, np.int32),
                                         np.array(1, np.int32)]), note="indices as Batch")
    case("permute_batch", b3, indices=[2, 0], note="fewer indices than samples")
    case("permute_batch", b3, indices=[2, 0, 1, 0], note="more indices than samples")
    case("permute_batch", b3, indices=[3, 0, 1], note="index out of range")
    case("permute_batch", b3, indices=[-1, 0, 1], note="negative index")
    case("permute_batch", b3, note="missing indices")
    case("permute_batch", T(np.array([1, 2], np.int32)), indices=[0], note="tensor input")
    case("permute_batch", T(np.array([1, 2], np.int32)), indices=0, note="tensor input, scalar idx")
    case("permute_batch", B([np.zeros((2, 3), np.float32), np.ones((1, 3), np.float32)],
                            layout="HW"), indices=[1, 0])

    def perm_props(cid, **kw):
        out = {}
        for seed in range(20):
            r = ndd.batch_permutation(batch_size=6, rng=ndd.random.RNG(seed=seed), **kw)
            vals = [int(np.asarray(t)) for t in r]
            shapes = [list(t.shape) for t in r]
            out.setdefault("dtype", dtype_name(r.dtype))
            out.setdefault("sample_shape", shapes[0])
            out.setdefault("type", type(r).__name__)
            out.setdefault("batch_size", r.batch_size)
            out.setdefault("layout", r.layout)
            out.setdefault("values", []).append(vals)
        vs = out["values"]
        out["all_permutations"] = all(sorted(v) == list(range(6)) for v in vs)
        out["any_repetition"] = any(len(set(v)) < 6 for v in vs)
        out["any_fixed_point"] = any(any(i == x for i, x in enumerate(v)) for v in vs)
        out["all_in_range"] = all(0 <= x < 6 for v in vs for x in v)
        return out

    custom("batch_permutation", "20 seeds, batch_size=6, defaults", lambda cid: perm_props(cid))
    custom("batch_permutation", "allow_repetitions=True",
           lambda cid: perm_props(cid, allow_repetitions=True))
    custom("batch_permutation", "no_fixed_points=True",
           lambda cid: perm_props(cid, no_fixed_points=True))
    custom("batch_permutation", "both flags",
           lambda cid: perm_props(cid, allow_repetitions=True, no_fixed_points=True))
    case("batch_permutation", note="no batch_size")
    case("batch_permutation", batch_size=1, note="batch_size 1")
    case("batch_permutation", batch_size=1, no_fixed_points=True, note="impossible")
    case("batch_permutation", batch_size=4)


RED = ["sum", "mean", "mean_square", "min", "max", "rms"]


def probes_reductions():
    BOOLX = T((I32 % 3 == 0), layout="HWC")
    F16 = T(F32.astype(np.float16), layout="HWC")
    for fn in RED:
        op = f"reductions.{fn}"
        for inp in (X, XU, XF, F16, BOOLX):
            case(op, inp)
        case(op, X, axes=[0])
        case(op, X, axes=(0, 2))
        case(op, X, axes=[2, 0], note="unsorted axes")
        case(op, X, axes=[-1], note="negative axis")
        case(op, X, axes=2, note="int axes")
        case(op, X, axes=[], note="empty axes")
        case(op, X, axes=[0, 1, 2])
        case(op, X, axes=[3], note="out of range")
        case(op, X, axis_names="HC")
        case(op, X, axis_names="W")
        case(op, X, axis_names="Q", note="unknown name")
        case(op, XN, axis_names="H", note="no layout")
        case(op, X, axes=[0], axis_names="H", note="both")
        case(op, X, keep_dims=True)
        case(op, X, axes=[1], keep_dims=True)
        case(op, XF, axes=[0, 2], keep_dims=True)
        case(op, T(np.array(5, np.int32)), note="0-D input")
        case(op, T(np.array([5, 7], np.int32)), axes=[0])
        case(op, T(np.zeros((0, 3), np.float32)), note="empty input")
        case(op, T(np.zeros((0, 3), np.float32)), axes=[0], note="empty reduced axis")
        case(op, RAG, note="batch")
        case(op, RAG, axes=[0], note="batch axes=[0]")
        case(op, RAG, axes=[1], keep_dims=True)
        if fn not in ("min", "max"):
            case(op, X, dtype="float64")
            case(op, X, dtype="int32")
            case(op, XU, dtype="float32")
            case(op, XF, dtype="int32")
            case(op, XF, dtype="float16")
        else:
            case(op, X, dtype="float64", note="no dtype arg")
    case("reductions.sum", T(np.full((4,), 200, np.uint8)), note="u8 overflow?")
    case("reductions.sum", T(np.full((4,), 200, np.uint8)), dtype="uint8", note="forced u8")
    case("reductions.sum", T(np.full((4,), 2**31 - 1, np.int32)), note="i32 overflow")
    case("reductions.mean", T(np.array([1, 2], np.int32)), note="integer mean fraction")
    case("reductions.mean", T(np.array([1, 2], np.int32)), dtype="int32", note="int mean")
    case("reductions.mean", T(np.array([-1, -2], np.int32)), dtype="int32", note="neg int mean")
    case("reductions.mean", T(np.array([1, 2, 2], np.uint8)), dtype="uint8")

    # std_dev / variance: mean as second input
    for fn in ("std_dev", "variance"):
        op = f"reductions.{fn}"
        m_all = T(np.array(F32.mean(), np.float32))
        case(op, XF, m_all)
        case(op, XF, T(np.array(0.0, np.float32)), note="zero mean, axes=None")
        case(op, XF, T(np.array([0.0], np.float32)), note="mean shape (1,)")
        case(op, XF, T(np.zeros((1, 1, 1), np.float32)), note="mean shape (1,1,1)")
        case(op, XF, m_all, keep_dims=True)
        case(op, XF, m_all, ddof=1)
        case(op, XF, T(F32.mean(axis=0)), axes=[0], note="mean reduced shape (3,4)")
        case(op, XF, T(F32.mean(axis=0, keepdims=True)), axes=[0], note="mean keepdims (1,3,4)")
        case(op, XF, T(F32.mean(axis=0, keepdims=True), layout="HWC"), axes=[0],
             note="mean keepdims with layout")
        case(op, XF, T(F32.mean(axis=(0, 2))), axes=[0, 2], note="mean (3,)")
        case(op, XF, T(F32.mean(axis=(0, 2), keepdims=True)), axes=[0, 2], note="mean (1,3,1)")
        case(op, XF, T(F32.mean(axis=(0, 2))), axis_names="HC")
        case(op, XF, T(F32.mean(axis=(0, 2))), axes=[0, 2], keep_dims=True)
        case(op, XF, T(F32.mean(axis=(0, 2))), axes=[0, 2], ddof=1)
        case(op, XF, T(np.zeros((2,), np.float32)), axes=[0, 2], note="wrong mean shape")
        case(op, XF, T(F32.mean(axis=0).astype(np.float64)), axes=[0], note="f64 mean")
        case(op, X, T(np.array(I32.mean(), np.float32)), note="int data, f32 mean")
        case(op, X, T(np.array(11, np.int32)), note="int data, int mean")
        case(op, XU, T(np.array(11.5, np.float32)), note="u8 data")
        case(op, XF, note="missing mean")
        case(op, XF, m_all, dtype="float64", note="no dtype arg")
        case(op, XF, m_all, ddof=24, note="ddof == n")
        case(op, XF, m_all, ddof=30, note="ddof > n")
        case(op, B([np.array([1, 2, 3], np.float32), np.array([4, 8], np.float32)]),
             B([np.array(2.0, np.float32), np.array(6.0, np.float32)]), note="batch")
        case(op, B([np.array([1, 2, 3], np.float32), np.array([4, 8], np.float32)]),
             T(np.array(2.0, np.float32)), note="batch data, tensor mean")
        case(op, T(np.array([1, 2, 3], np.float32)),
             B([np.array(2.0, np.float32), np.array(6.0, np.float32)]),
             note="tensor data, batch mean")

    # result dtype table
    base = np.array([[1, 0, 3], [2, 1, 0]])
    for dn in NP_NAMES:
        arr = (base % 2 == 1) if dn == "bool" else base.astype(dn)
        for fn in RED:
            case(f"reductions.{fn}", T(arr), note=f"dtype table {dn}")
        for fn in ("std_dev", "variance"):
            case(f"reductions.{fn}", T(arr), T(np.array(1.0, np.float32)),
                 note=f"dtype table {dn}")
        case("reductions.sum", T(arr), axes=[0], note=f"dtype table axes=[0] {dn}")


def probes_errors_misc():
    case("one_hot", T(np.array([1, 0], np.int32)), num_classes=3, bogus=1, note="unknown kwarg")
    case("reshape", X, shape="abc", note="wrong kwarg type")
    case("transpose", X, perm=T(np.array([2, 0, 1], np.int32)), note="non-tensor arg as tensor")
    case("cat", X, T(np.arange(8, dtype=np.int32).reshape(2, 1, 4), layout="HWC"),
         note="mismatched shapes")
    case("reshape", X, X, X, note="too many inputs")
    case("cast", X, dtype="float32", batch_size=3, note="tensor input broadcast with batch_size")
    case("cast", RAG, dtype="float32", batch_size=3, note="batch size conflict")
    case("cast", X, dtype="float32", device="gpu",
         note="gpu device; recorded on a CPU-only machine (machine specific)")
    case("cast", [1, 2, 3], dtype="float32", note="python list input")
    case("cast", 5, dtype="float32", note="python scalar input")
    case("cast", np.arange(3), dtype="float32", note="numpy input (int64)")


def probes_extra():
    # rounding of float anchors / shapes in slice
    for a in (0.5, 1.5, 2.5):
        case("slice", T(np.arange(10, dtype=np.int32)), T(np.array([a], np.float32)),
             T(np.array([3.0], np.float32)), axes=[0], normalized_anchor=False,
             normalized_shape=False, note=f"absolute float anchor {a}")
    case("slice", T(np.arange(10, dtype=np.int32)), T(np.array([0.25], np.float32)),
         T(np.array([0.25], np.float32)), axes=[0], note="normalized 2.5 / 2.5")
    case("slice", T(np.arange(10, dtype=np.int32)), T(np.array([0.15], np.float32)),
         T(np.array([0.25], np.float32)), axes=[0], note="normalized 1.5 / 2.5")
    case("slice", T(np.arange(10, dtype=np.int32)), rel_start=[0.25], rel_shape=[0.25], axes=[0])
    case("slice", T(np.arange(10, dtype=np.int32)), rel_start=[0.15], rel_end=[0.45], axes=[0])
    for dn in ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bool"):
        case("slice", T(np.arange(12, dtype=np.float32).reshape(3, 4) - 4.5), start=[1], shape=[2],
             axes=[1], dtype=dn, note=f"slice output dtype {dn} from float32")
    case("slice", T(np.arange(12, dtype=np.int16).reshape(3, 4)), start=[1], shape=[2], axes=[1],
         note="int16 input")
    case("slice", T(np.arange(12, dtype=np.int16).reshape(3, 4)), start=[1], shape=[2], axes=[1],
         dtype="float32", note="int16 input -> float32")
    case("slice", T(np.arange(12, dtype=np.int32).reshape(3, 4)), start=[1], shape=[2], axes=[1],
         dtype="uint8", note="int32 input -> uint8")
    case("slice", T(np.arange(12, dtype=np.int32).reshape(3, 4) * 100 - 500), start=[0], shape=[4],
         axes=[1], dtype="uint8", note="int32 -> uint8 saturation?")
    case("slice", T(np.array([True, False, True])), start=[1], shape=[2], axes=[0], note="bool input")
    # pad per-sample fill with 0-D samples
    case("pad", RAG3, fill_value=B([np.array(1, np.float32), np.array(2, np.float32),
                                    np.array(3, np.float32)]), note="per-sample 0-D fill")
    case("pad", T(np.ones((2, 3), np.float32), layout="HW"), shape=[3, 3],
         fill_value=T(np.array(4.0, np.float32)), note="tensor fill_value")
    case("pad", T(np.ones((2, 3), np.uint8), layout="HW"), shape=[3, 3], fill_value=2.7,
         note="fractional fill on uint8")
    case("pad", T(np.ones((2, 3), np.int32), layout="HW"), shape=[3, 3], fill_value=2.5)
    case("pad", T(np.ones((2, 3), np.int32), layout="HW"), shape=[3, 3], fill_value=-2.5)
    case("pad", T(np.ones((2,), np.int32)), shape=[4], note="1D no layout")
    case("pad", T(np.array(5, np.int32)), note="0-D")
    # full_like / full conversion of the fill value
    for fv in (2.5, -1.5, 3.5, 300.0, -3.0):
        case("full_like", T(np.zeros((2,), np.uint8)), T(np.array(fv, np.float32)),
             note=f"fill {fv} into uint8")
        case("full_like", T(np.zeros((2,), np.int32)), T(np.array(fv, np.float32)),
             note=f"fill {fv} into int32")
    case("full_like", T(np.zeros((2,), np.float32)), T(np.array(70000, np.int32)))
    case("full_like", T(np.zeros((2,), np.bool_)), T(np.array(0.3, np.float32)))
    case("full_like", T(np.zeros((2, 3), np.int32), layout="HW"), T(np.array([1, 2], np.int32)),
         note="non-broadcastable fill")
    case("full_like", T(np.zeros((2, 3), np.int32), layout="HW"),
         T(np.array([[1], [2]], np.int32)), note="column fill")
    case("full", T(np.array([[1, 2, 3]], np.int32)), shape=[2, 3], layout="HW")
    case("full", T(np.array([1, 2], np.int32), layout="W"), shape=[3, 2], note="fill layout")
    # one_hot conversions
    case("one_hot", T(np.array([0, 2], np.int32)), num_classes=3, on_value=3.5, dtype="int32")
    case("one_hot", T(np.array([0, 2], np.int32)), num_classes=3, on_value=-2.5, dtype="int32")
    case("one_hot", T(np.array([0, 2], np.int32)), num_classes=3, on_value=300, dtype="uint8")
    case("one_hot", T(np.array([0, 2], np.int32)), num_classes=3, on_value=1.5, dtype="float16")
    case("one_hot", T(np.array([0, 2], np.int32)), num_classes=3, dtype="int64")
    case("one_hot", T(np.array([0, 2], np.int32)), num_classes=3, dtype="float64")
    case("one_hot", T(np.array([0, 2], np.int32)), num_classes=3, dtype="int8")
    case("one_hot", T(np.array([0, 2], np.int32)), num_classes=3, axis=0, note="axis=0 non-symmetric")
    case("one_hot", B([np.array([1], np.int32), np.array([2], np.int32)]), num_classes=3,
         note="batch, all samples 1 element")
    case("one_hot", T(np.array([[1]], np.int32), layout="HW"), num_classes=3,
         note="(1,1) input")
    case("one_hot", T(np.array([[1]], np.int32), layout="HW"), num_classes=3, axis_name="C",
         note="(1,1) input with axis_name")
    case("one_hot", T(np.array([1], np.int32), layout="W"), num_classes=3, axis_name="C",
         note="(1,) input with axis_name")
    case("one_hot", T(np.array(1, np.int32)), num_classes=3, axis_name="C", note="scalar + axis_name")
    case("one_hot", T(np.array(1, np.int32)), num_classes=3, axis=0)
    case("one_hot", T(np.array([1, 2], np.int16)), num_classes=3)
    case("one_hot", T(np.array([1, 2], np.float64)), num_classes=3)
    case("one_hot", T(np.array([1, 2], np.float16)), num_classes=3)
    case("one_hot", T(np.array([1, 2], np.uint64)), num_classes=3)
    # lookup_table value conversion
    case("lookup_table", T(np.array([0, 1, 2, 3], np.int32)), keys=[0, 1, 2, 3],
         values=[2.5, -2.5, 300.0, -0.5], dtype="uint8")
    case("lookup_table", T(np.array([0, 1, 2, 3], np.int32)), keys=[0, 1, 2, 3],
         values=[2.5, -2.5, 3.5, -0.5], dtype="int32")
    case("lookup_table", T(np.array([0, 1, 5], np.int32)), keys=[0, 1], values=[1.0, 2.0],
         default_value=2.5, dtype="int32")
    case("lookup_table", T(np.array([0, 1], np.int32)), keys=[0, 1], values=[1.0, 2.0],
         dtype="float64")
    case("lookup_table", T(np.array([0, 1], np.int32)), keys=[0, 1], values=[1.0, 0.0],
         dtype="bool")
    case("lookup_table", T(np.array([0, 1], np.int32)), keys=[0, 1], values=[1.0, 2.0],
         dtype="float16")
    case("lookup_table", T(np.array([0, 1], np.int8)), keys=[0, 1], values=[1.0, 2.0])
    case("lookup_table", T(np.array([0, 1], np.uint16)), keys=[0, 1], values=[1.0, 2.0])
    # cast details
    case("cast", T(np.array([0.3, 0.5, 0.7, -0.3, -0.5, -0.7, 1.0, np.nan], np.float32)),
         dtype="bool", note="float -> bool")
    case("cast", T(np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], np.float32)), dtype="int16")
    case("cast", T(np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5], np.float64)), dtype="int64")
    case("cast", T(np.array([1e40, -1e40, 1.0000001], np.float64)), dtype="float32")
    case("cast", T(np.array([-1, 70000], np.int32)), dtype="uint16")
    case("cast", T(np.array([-1, 2**40], np.int64)), dtype="uint32")
    case("cast", T(np.array([2**63 - 1], np.int64)), dtype="float32")
    case("cast", T(np.array([2**64 - 1], np.uint64)), dtype="int64")
    case("cast", T(np.array([-1], np.int8)), dtype="uint64")
    case("cast", T(np.array([np.nan, np.inf, -np.inf], np.float32)), dtype="uint8")
    case("cast", T(np.array([np.nan, 1e20, -1e20], np.float32)), dtype="int64")
    case("cast", T(np.array([1.5, 2.5], np.float16)), dtype="int32")
    case("cast", T(np.array([65535], np.uint16)), dtype="float16")
    case("cast", X, dtype="types.FLOAT16")
    case("cast", X, dtype="types.BOOL")
    case("copy", T(np.array([True, False])))
    # reductions: which (input dtype, dtype=) pairs are accepted
    base = np.array([[1, 0, 3], [2, 1, 0]])
    for fn in ("sum", "mean", "mean_square", "rms"):
        for dn_in in NP_NAMES:
            arr = (base % 2 == 1) if dn_in == "bool" else base.astype(dn_in)
            for dn_out in NP_NAMES:
                case(f"reductions.{fn}", T(arr), dtype=dn_out,
                     note=f"dtype matrix {dn_in}->{dn_out}")
    # non-literal (variable) per-sample arguments: documents the reference call-site
    # dependence; compare with the literal cases above.
    case("squeeze", T(np.arange(6, dtype=np.int32).reshape(2, 1, 3, 1), layout="HXWY"), axes=[1],
         literal=False, note="axes passed via a variable")
    case("squeeze", T(np.arange(6, dtype=np.int32).reshape(2, 1, 3, 1), layout="HXWY"),
         axes=T(np.array([1], np.int32)), note="axes as Tensor")
    case("reshape", X, src_dims=[2, 0, 1], literal=False, note="src_dims via a variable")
    case("reshape", X, shape=[4, 6], literal=False, note="shape via a variable")
    case("slice", IMG, start=[1, 2], shape=[3, 2], literal=False, note="start/shape via variables")
    case("pad", T(np.arange(6, dtype=np.int32).reshape(2, 3), layout="HW"), shape=[4, 5],
         literal=False, note="shape via a variable")
    case("pad", T(np.arange(6, dtype=np.int32).reshape(2, 3), layout="HW"), axes=[1], shape=[5],
         literal=False, note="axes/shape via variables")
    case("zeros", shape=[2, 3], literal=False, note="shape via a variable")
    case("one_hot", T(np.array([1, 0], np.int32)), num_classes=3, literal=False)
    case("reductions.sum", X, axes=[0], literal=False, note="axes via a variable")
    case("squeeze", T(np.arange(6, dtype=np.int32).reshape(2, 1, 3, 1), layout="HXWY"), axes=[-1],
         literal=False, note="negative axes via a variable")
    case("squeeze", T(np.arange(6, dtype=np.int32).reshape(2, 1, 3, 1), layout="HXWY"), axes=[-3],
         note="negative axis -3 (unit dim)")

    def eager_error(cid):
        x = ndd.tensor(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
        out = {}
        for mode in ("eager", "deferred"):
            with getattr(ndd.EvalMode, mode):
                try:
                    r = ndd.reshape(x, shape=[5, 5])
                    out[mode + "_call"] = "returned " + type(r).__name__
                    r.evaluate()
                    out[mode + "_evaluate"] = "no error"
                except Exception as e:  # noqa: BLE001
                    out[mode + "_evaluate"] = {"type": type(e).__name__, "message": str(e),
                                               "cause_type": type(e.__cause__).__name__,
                                               "cause_message": str(e.__cause__)}
        return out

    custom("reshape", "error surfacing in eager / deferred mode", eager_error)

    def meta_without_run(cid):
        x = ndd.tensor(np.arange(24, dtype=np.int32).reshape(2, 3, 4), layout="HWC")
        out = {}
        with ndd.EvalMode.deferred:
            for name, fn in [("transpose", lambda: ndd.transpose(x, perm=[2, 0, 1])),
                             ("reshape", lambda: ndd.reshape(x, shape=[4, 6])),
                             ("sum", lambda: ndd.reductions.sum(x, axes=[0])),
                             ("one_hot", lambda: ndd.one_hot(x, num_classes=3)),
                             ("cat", lambda: ndd.cat(x, x, axis=1)),
                             ("stack", lambda: ndd.stack(x, x, axis_name="N")),
                             ("slice", lambda: ndd.slice(x, start=[0, 0], shape=[1, 1]))]:
                r = fn()
                out[name] = {"dtype": dtype_name(r.dtype), "ndim": r.ndim, "layout": r.layout}
        return out

    custom("misc", "dtype/ndim/layout of deferred results before evaluation", meta_without_run)


def warm_source_analysis(extra_codes=()):
    """Optimisation only: the reference parses (libcst) the source file of every
    operator call site on first use (~0.5-1 s per file). Parse the files once in the
    parent so forked children inherit the cache. Pure Python, starts no threads."""
    try:
        from nvidia.dali.experimental.dynamic import _source_analysis as sa
        from nvidia.dali.experimental.dynamic import _tensor, _batch
        codes = list(extra_codes) + [_tensor.tensor.__code__, _batch.batch.__code__]
        for mod in (_tensor, _batch):
            for obj in vars(mod).values():
                for f in [obj] + list(vars(obj).values() if isinstance(obj, type) else []):
                    if hasattr(f, "__code__") and getattr(f, "__module__", None) == mod.__name__:
                        codes.append(f.__code__)
        for c in codes:
            sa._get_module_info(c)
    except Exception as e:  # noqa: BLE001
        print("source-analysis warm-up skipped:", e, file=sys.stderr)


def main():
    make_signatures()
    probes_reshape()
    probes_layout_ops()
    probes_slice()
    probes_join_pad()
    probes_constructors()
    probes_one_hot_lut()
    probes_misc()
    probes_reductions()
    probes_errors_misc()
    probes_extra()
    run_all()
    np.savez_compressed(os.path.join(HERE, "ops_values.npz"), **ARRAYS)
    head = {"reference_version": __import__("nvidia.dali").dali.__version__,
            "eval_mode": "sync_cpu", "format": __doc__}
    # one case per line: compact and diff-friendly
    text = json.dumps(head, indent=1, default=repr)[:-2]
    text += ',\n "cases": [\n' + ",\n".join(json.dumps(c, default=repr) for c in CASES)
    text += "\n ]\n}\n"
    with open(os.path.join(HERE, "ops_cases.json"), "w") as fh:
        fh.write(text)
    print(f"{len(CASES)} cases, {len(ARRAYS)} arrays", file=sys.stderr)


if __name__ == "__main__":
    main()
