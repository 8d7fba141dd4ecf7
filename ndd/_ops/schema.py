"""The declarative operator schema and the generation of public functions."""

from .._errors import as_runtime_error
from .._prepare.args import REQUIRED, Arg
from .._prepare.call import invoke

__all__ = ["Arg", "Input", "Operator", "REQUIRED", "batch_samples_of", "given", "same_as_input"]

# Argument kinds whose converted value is the default's own object only when the
# argument was omitted (unlike ints and bools, which Python shares between callers).
_FRESH_KINDS = frozenset(["float", "float_list", "int_list", "array"])


class OmittedInt(int):
    """An int default that ``given`` tells from the same value passed explicitly.

    Python shares the objects of small ints, so ``axis=-1`` in a call is otherwise the
    default's very object; the reference decides some things by presence
    (``one_hot``'s ``axis``)."""

    __slots__ = ()


_KIND_HINTS = {
    "int": "int",
    "float": "float",
    "bool": "bool",
    "str": "str",
    "layout": "str",
    "dtype": "DTypeLike",
    "int_list": "Sequence[int] | int",
    "float_list": "Sequence[float] | float",
    "array": "ArrayLike",
    "any": "Any",
    "rng": "RNG",
}


class Input:
    """A positional input of an operator."""

    def __init__(self, name, *, optional=False, variadic=False, doc=""):
        self.name = name
        self.optional = optional
        self.variadic = variadic
        self.doc = doc


def same_as_input(ins, args):
    """Type rule: one output with the dtype and layout of the first input."""
    x = ins[0]
    return [(x._dtype, x._layout)]


def batch_samples_of(data, batch_size):
    """The samples of a batch kernel's input: a Batch's (a list), or a Tensor's one array
    for every sample (a Tensor given with ``batch_size`` or beside Batch arguments)."""
    return data if isinstance(data, list) else [data] * batch_size


def given(args, arg):
    """Whether the caller passed ``arg`` (an Arg of kind float, float_list, int_list
    or array), even with the default's value: the reference decides some things by
    presence (``crop_w=0`` counts as a crop width). An omitted or None argument
    arrives as the very object converted from the default."""
    return args[arg.name] is not arg.converted_default


def _present_inputs(op, inputs):
    """``inputs`` without the Nones, for an operator whose None inputs are absent
    ones; the required inputs must still be there."""
    present = tuple(x for x in inputs if x is not None)
    required = [i for i in op.inputs if not i.variadic and not i.optional]
    if len(present) < len(required):
        error = TypeError(
            f"{op.qualname}: input '{required[len(present)].name}' is required; "
            f"got {len(present)} input(s) that are not None"
        )
        raise as_runtime_error(error)
    return present


class Operator:
    """One operator: its schema, metadata rules and kernels.

    Parameters
    ----------
    name : str
        Public name (``"cast"``); ``module`` gives the namespace (``"ndd.math"``).
    inputs : sequence of Input
    args : sequence of Arg
        Keyword arguments, in signature order.
    prepare_args : callable(inputs, args), optional
        Runs first in the prepare phase: derives arguments from input metadata
        (e.g. axis indices from ``axis_names`` and the input layout), storing them
        in ``args`` under names starting with ``_``, and rejects bad input.
        The type and shape rules and the kernel then read them from ``args``.
    infer_types : callable(inputs, args) -> list of (DType, layout)
        Output dtypes and layouts from input metadata; never touches data. Its
        length is the number of outputs (it may depend on the arguments).
    infer_shape : callable(shapes, args) -> list of shapes, optional
        Output shapes of one sample from the input shapes of that sample and
        its arguments; ``None`` (or returning None) when only the run can tell.
    kernel : callable(arrays, args) -> array or tuple of arrays
        The CPU work for one sample.
    dense_kernel : callable(arrays, args) -> array or tuple, optional
        CPU work for a whole batch stored densely (Batch inputs are arrays with
        a leading sample dimension, Tensor inputs plain arrays); used when no
        argument varies per sample. It may return None to decline, and the
        per-sample kernel runs instead. Only used when all inputs are Batches.
    batch_kernel : callable(inputs, sample_args, batch_size, ctx), optional
        CPU work for a whole batch, for operators that mix samples or gain from
        working on all of them at once. It may return None to decline, and the
        per-sample kernel runs instead (on the thread pool for large batches).
    needs_batch : bool
        The operator only makes sense in batch mode (``permute_batch``).
    gpu_kernel : callable(inputs, args, batch_size, ctx) -> list, optional
        GPU work (None: the operator runs on the CPU only, and a GPU call raises
        NotImplementedError). Called in the run phase on the thread that runs the
        invocation, with the device current, the context ``ctx`` on the device
        and every GPU input already ordered before ``ctx.cuda_stream`` (recorded as
        its use). ``inputs`` holds a DeviceArray per GPU Tensor, a DeviceBatch per
        GPU Batch (one allocation, per-sample offsets), numpy data for host inputs
        and None for absent ones; ``batch_size`` is -1 in sample mode. It queues
        its kernels on ``ctx.cuda_stream`` and returns one output per operator
        output: a DeviceArray (sample mode) or a DeviceBatch (batch mode),
        allocated from the pool on that stream. What it cannot do raises
        NotImplementedError naming the operator; it never copies to the host. An
        optional ``gpu_kernel.check(ins, args)`` runs in the prepare phase on the
        input Tensors/Batches (metadata only) to refuse such calls early. See
        ``docs/developer_guide.md`` (GPU operators) and ``gpu_elementwise.py``.
    doc : str
        Summary and description for the generated docstring.
    """

    # A subclass that runs its invocations itself (reading metadata rather than
    # data, say) defines ``execute(inv)`` returning the outputs, on the invocation's
    # device (``inv.device``): numpy data, or DeviceArray/DeviceBatch on a GPU.
    execute = None
    # Arguments that may be given frame by frame (ndd.per_frame), and whether the
    # frames come from them (ndd.transforms) rather than from a sequence input;
    # see frames.py.
    per_frame_args = ()
    frames_from_args = False
    # Whether None among the positional inputs means "no input" (cat, stack,
    # transforms.combine), as in the reference: the others close up.
    skip_absent_inputs = False

    def __init__(
        self,
        name,
        *,
        inputs=(),
        args=(),
        prepare_args=None,
        infer_types=same_as_input,
        infer_shape=None,
        kernel=None,
        dense_kernel=None,
        batch_kernel=None,
        needs_batch=False,
        gpu_kernel=None,
        module="ndd",
        doc="",
    ):
        self.name = name
        self.module = module
        self.qualname = f"{module}.{name}"
        self.inputs = tuple(inputs)
        self.input_names = tuple(i.name for i in self.inputs)
        self.arg_specs = tuple(args)
        for arg in self.arg_specs:
            if arg.default is not REQUIRED:
                arg.converted_default = arg.convert(self, arg.default)
        # Identity with these tells an omitted argument from an equal value passed
        # explicitly (see ``given``).
        self._fresh_args = {
            arg.name: arg
            for arg in self.arg_specs
            if arg.default is not REQUIRED
            and (arg.kind in _FRESH_KINDS or isinstance(arg.default, OmittedInt))
        }
        self.prepare_args = prepare_args
        self.infer_types = infer_types
        self.infer_shape = infer_shape
        self.kernel = kernel
        self.dense_kernel = dense_kernel
        self.dense_broadcasts_tensors = False
        self.batch_kernel = batch_kernel
        self.needs_batch = needs_batch
        self.gpu_kernel = gpu_kernel
        self.doc = doc

    def __repr__(self):
        return f"<Operator {self.qualname}>"

    def given(self, args, name):
        """Whether the caller passed argument ``name`` (see ``given``)."""
        return given(args, self._fresh_args[name])

    def make_function(self):
        """Build the public function: a real Python signature (so unknown or
        missing keywords fail as in any function) that forwards to ``invoke``."""
        params = []
        input_names = []
        variadic = None
        for inp in self.inputs:
            if inp.variadic:
                variadic = inp.name
            elif inp.optional:
                params.append(f"{inp.name}=None")
                input_names.append(inp.name)
            else:
                params.append(inp.name)
                input_names.append(inp.name)
        if input_names:
            params.append("/")
        params.append(f"*{variadic}" if variadic else "*")
        params += ["batch_size=None", "device=None"]
        defaults = {}
        for arg in self.arg_specs:
            if arg.default is REQUIRED:
                params.append(arg.name)
            else:
                defaults[arg.name] = arg.default
                params.append(f"{arg.name}=_defaults[{arg.name!r}]")
        if params and params[-1] == "*":
            params.pop()
        input_tuple = "(" + "".join(f"{n}, " for n in input_names) + ")"
        if variadic:
            input_tuple = f"{input_tuple} + {variadic}"
        kwargs = "{" + ", ".join(f"{a.name!r}: {a.name}" for a in self.arg_specs) + "}"
        body = ""
        if self.skip_absent_inputs:
            body = f"    _ins = _present(_op, {input_tuple})\n"
            input_tuple = "_ins"
        source = (
            f"def {self.name}({', '.join(params)}):\n{body}"
            f"    return _invoke(_op, {input_tuple}, batch_size, device, {kwargs})\n"
        )
        if self.per_frame_args or self.frames_from_args:
            from .frames import invoke_per_frame as invoke_here
        else:
            invoke_here = invoke
        namespace = {"_invoke": invoke_here, "_op": self, "_defaults": defaults, "_present": _present_inputs}
        # Named after this file, so that error messages point at the user's call rather
        # than at the generated function (call sites skip frames of the ndd package).
        code = compile(source, f"{__file__}<{self.qualname}>", "exec")
        exec(code, namespace)  # noqa: S102 - the source is built from the schema above
        fn = namespace[self.name]
        fn.__module__ = self.module
        fn.__qualname__ = self.name
        fn.__doc__ = self.docstring()
        fn.__annotations__ = self.annotations()
        fn.__ndd_operator__ = self
        return fn

    def annotations(self):
        """Type hints of the public function (strings, for readers and Sphinx)."""
        hints = {inp.name: "TensorLike | Batch" + (" | None" if inp.optional else "") for inp in self.inputs}
        hints["batch_size"] = "int | None"
        hints["device"] = "DeviceLike | None"
        for arg in self.arg_specs:
            hint = _KIND_HINTS[arg.kind]
            if arg.per_sample:
                hint += " | TensorLike | Batch"
            if arg.default is None:
                hint += " | None"
            hints[arg.name] = hint
        hints["return"] = "Tensor | Batch"
        return hints

    def docstring(self):
        """A numpy-style docstring from the schema."""
        lines = [self.doc.strip(), "", "Parameters", "----------"]
        for inp in self.inputs:
            kind = "Tensor or Batch" + (", optional" if inp.optional else "")
            name = f"*{inp.name}" if inp.variadic else inp.name
            lines += [f"{name} : {kind}", f"    {inp.doc or 'Input to the operator.'}"]
        lines += [
            "batch_size : int, optional",
            "    Run in batch mode with this many samples; inferred from Batch inputs.",
            "device : str or Device, optional",
            '    ``"cpu"`` or ``"gpu"``; inferred from the inputs when omitted.',
        ]
        for arg in self.arg_specs:
            type_doc = arg.type_doc or arg.kind
            if arg.per_sample:
                type_doc += " or Tensor/Batch (per sample)"
            if arg.default is not REQUIRED:
                type_doc += f", default {arg.default!r}"
            lines += [f"{arg.name} : {type_doc}", f"    {arg.doc}"]
        lines += [
            "",
            "Returns",
            "-------",
            "Tensor or Batch",
            "    A Batch when any input is a Batch or ``batch_size`` is given.",
        ]
        return "\n".join(lines)
