"""Arguments given frame by frame (``ndd.per_frame``): sequences unfolded into frames.

An argument marked with ``ndd.per_frame`` (a Tensor whose layout starts with
``F``) holds one value per frame of a sequence. An operator that accepts such
arguments lists them in ``Operator.per_frame_args``; its public function then
calls ``invoke_per_frame``, which, when one of them is marked, runs the operator
on the frames of every sequence as the samples of one batch, each frame with its
own values, and stacks the results back into sequences. The operators' kernels
never see frames, and every argument that may vary per sample may vary per frame.

Rules (those of the reference):

- A per-frame argument has one value per frame, or one value for all frames.
- Sequence operators (``frames_from_args`` false: colour, filters, rotate, ...)
  need a sequence input (layout starting with ``F``); its frames are the units.
  Arguments of one frame for an input that is not a sequence are plain values.
- Operators that build sequences from their arguments (``frames_from_args``:
  ``ndd.transforms.*``, ``coord_transform``) take the frame count from the marked
  arguments and inputs; an input without frames is used for every frame, and the
  output gets a leading ``F``.
- ``Operator.frame_common_args(frame_args, frame_shapes, frame_layout)``, when defined, may
  rewrite the arguments of the frames of one sequence before they run (rotate
  gives all of them one output size, so that they stack).

Unfolding needs the data, so a call with per-frame arguments evaluates its
inputs and arguments and runs at once, whatever the EvalMode.

On the GPU the frames are views of the sequences' memory (one batch sharing the
input's allocation) and the results are stacked back as views too when their
frames follow each other in memory, as a dense result's do; only ragged results
are gathered, a device copy per frame. The arguments stay on the host, as the
GPU kernels take them.
"""

import numpy as np

from .._batch import Batch, _from_device_batch, batch
from .._prepare.args import InvalidArgumentError
from .._prepare.call import invoke
from .._prepare.storage import tensor_data
from .._tensor import Tensor, as_tensor

__all__ = ["invoke_per_frame"]


def _is_framed(value):
    return isinstance(value, (Tensor, Batch)) and (value.layout or "")[:1] == "F"


def _samples(value, batch_size):
    """The arrays of a Tensor (repeated ``batch_size`` times) or a Batch."""
    if isinstance(value, Batch):
        return [np.asarray(s) for s in value.evaluate()]
    array = np.asarray(value.evaluate())
    return [array] * (1 if batch_size is None else batch_size)


def _single_frames(marked, kwargs, batch_size):
    """The marked arguments without their one frame (a Tensor, or a Batch in batch
    mode), or None when one of them has another number of frames in some sample."""
    single = {}
    for name in marked:
        samples = _samples(kwargs[name], batch_size)
        if any(len(s) != 1 for s in samples):
            return None
        value = kwargs[name]
        if isinstance(value, Batch):
            single[name] = batch([s[0] for s in samples])
        else:
            single[name] = Tensor(samples[0][0])
    return single


def _on_gpu(value):
    return isinstance(value, (Tensor, Batch)) and value.device.device_type == "gpu"


def _device_batch(x, batch_size):
    """The DeviceBatch of the GPU Batch ``x``, or of a GPU Tensor given for every one
    of ``batch_size`` samples (views of it; one sample in sample mode)."""
    x.evaluate()
    if isinstance(x, Batch):
        return x._gpu
    from .._cuda.device_array import DeviceBatch

    data = tensor_data(x)
    count = 1 if batch_size is None else batch_size
    whole = data.view(0, (data.nbytes,), np.uint8)
    return DeviceBatch(whole, [0] * count, [tuple(data.shape)] * count, data.dtype, count == 1)


class _GpuFrames:
    """The frames of a GPU input's sequences as one batch of views, ``frames``
    (``unstack``: every sample's slices along its first dimension; else the samples
    themselves, one frame each): ``self[i]`` lists the indices of sample ``i``'s
    frames in it, and ``batch(indices, layout)`` is the GPU Batch of those frames."""

    def __init__(self, samples, x, unstack=True):
        self.frames = samples.unstack() if unstack else samples
        self.dtype, self.device = x.dtype, x.device
        self.starts = []
        start = 0
        for shape in samples.shapes:
            length = shape[0] if unstack else 1
            self.starts.append(range(start, start + length))
            start += length

    def __getitem__(self, i):
        return self.starts[i]

    def shape(self, frame):
        return tuple(self.frames.shapes[frame])

    def batch(self, indices, layout):
        return _from_device_batch(self.frames.pick(list(indices)), self.dtype, layout or "", self.device)


def _batch_size(op, inputs, kwargs, batch_size):
    sizes = {x.batch_size for x in [*inputs, *kwargs.values()] if isinstance(x, Batch)}
    if batch_size is not None:
        sizes.add(batch_size)
    if len(sizes) > 1:
        raise ValueError(f"{op.qualname}: Inconsistent batch size: {' != '.join(map(str, sorted(sizes)))}")
    return sizes.pop() if sizes else None


def _frame_values(op, what, values, frames, sample):
    """The value of each of ``frames`` frames from ``values`` (one per frame, or one for all)."""
    count = len(values)
    if count == frames:
        return list(values)
    if count == 1:
        return [values[0]] * frames
    where = f" of sample {sample}" if sample is not None else ""
    raise InvalidArgumentError(
        f"{op.qualname}: {what} has {count} values (one per frame) for a sequence{where} of {frames} frames"
    )


def invoke_per_frame(op, inputs, batch_size, device, kwargs):
    """``invoke``, unfolding sequences into frames when a per-frame argument is marked."""
    marked = [name for name in op.per_frame_args if _is_framed(kwargs[name])]
    framed_inputs = [k for k, x in enumerate(inputs) if op.frames_from_args and _is_framed(x)]
    if not marked and not framed_inputs:
        return invoke(op, inputs, batch_size, device, kwargs)
    bs = _batch_size(op, inputs, kwargs, batch_size)
    count = 1 if bs is None else bs
    main = inputs[0] if inputs else None
    if not op.frames_from_args:
        layout = (main.layout or "") if isinstance(main, (Tensor, Batch)) else ""
        if layout[:1] != "F":
            # One frame's values for an input that is not a sequence are its values, as the
            # reference takes them; more frames have nothing to go to.
            single = _single_frames(marked, kwargs, bs)
            if single is not None:
                return invoke(op, inputs, batch_size, device, {**kwargs, **single})
            raise InvalidArgumentError(
                f"{op.qualname}: '{marked[0]}' is given per frame (ndd.per_frame), for several frames, so "
                f"the input must be a sequence (layout starting with 'F'), got layout {layout!r}"
            )
        # The sequence, and the other inputs given per frame (filter's filter, say).
        framed_inputs = [0] + [k for k in range(1, len(inputs)) if _is_framed(inputs[k])]
    input_samples = {
        k: _samples(as_tensor(inputs[k]) if not isinstance(inputs[k], (Tensor, Batch)) else inputs[k], bs)
        for k in framed_inputs
        if not _on_gpu(inputs[k])
    }
    input_samples.update(
        {k: _GpuFrames(_device_batch(inputs[k], bs), inputs[k]) for k in framed_inputs if _on_gpu(inputs[k])}
    )
    arg_samples = {name: _samples(kwargs[name], bs) for name in marked}

    # Frames of each sample: those of its sequence input, else as many as the longest argument.
    frame_counts = []
    for i in range(count):
        if not op.frames_from_args:
            frame_counts.append(len(input_samples[0][i]))
            continue
        lengths = [len(s[i]) for s in [*input_samples.values(), *arg_samples.values()]]
        frames = max(lengths)
        for length in lengths:
            if length not in (1, frames):
                raise InvalidArgumentError(
                    f"{op.qualname}: the per-frame arguments and inputs have {length} and {frames} frames"
                )
        frame_counts.append(frames)

    if not any(frame_counts):
        raise InvalidArgumentError(f"{op.qualname}: the sequences have no frames (0 frames in every sample)")
    # One unfolded sample per frame: framed inputs and marked arguments sliced,
    # everything else repeated.
    frame_inputs = []
    for k, x in enumerate(inputs):
        if k in input_samples:
            frame_layout = (x.layout or "")[1:] if isinstance(x, (Tensor, Batch)) else ""
            frames = [
                f
                for i in range(count)
                for f in _frame_values(
                    op, "the input", input_samples[k][i], frame_counts[i], None if bs is None else i
                )
            ]
            if isinstance(input_samples[k], _GpuFrames):
                frame_inputs.append(input_samples[k].batch(frames, frame_layout))
            else:
                frame_inputs.append(batch(frames, layout=frame_layout or None))
        elif isinstance(x, Batch) or (x is not None and op.frames_from_args):
            # Used for every frame (of its sample).
            x = x if isinstance(x, (Tensor, Batch)) else as_tensor(x)
            if _on_gpu(x):
                repeated = [i for i in range(count) for _ in range(frame_counts[i])]
                frame_inputs.append(_GpuFrames(_device_batch(x, bs), x, False).batch(repeated, x.layout))
                continue
            repeated = [s for i, s in enumerate(_samples(x, bs)) for _ in range(frame_counts[i])]
            frame_inputs.append(batch(repeated, layout=x.layout))
        else:
            frame_inputs.append(x)
    frame_kwargs = dict(kwargs)
    per_frame_values = {}
    for name in marked:
        per_frame_values[name] = [
            _frame_values(op, f"'{name}'", arg_samples[name][i], frame_counts[i], None if bs is None else i)
            for i in range(count)
        ]
    for name, value in kwargs.items():
        if name not in marked and isinstance(value, Batch):
            samples = _samples(value, bs)
            per_frame_values[name] = [[samples[i]] * frame_counts[i] for i in range(count)]

    common = getattr(op, "frame_common_args", None)
    if common is not None and not op.frames_from_args:
        for i in range(count):
            frame_args = [
                {**kwargs, **{n: v[i][f] for n, v in per_frame_values.items()}}
                for f in range(frame_counts[i])
            ]
            main_frames = input_samples[0]
            if isinstance(main_frames, _GpuFrames):
                shapes = [main_frames.shape(k) for k in main_frames[i]]
            else:
                shapes = [np.shape(frame) for frame in main_frames[i]]
            for name, values in common(frame_args, shapes, (main.layout or "")[1:]).items():
                per_frame_values.setdefault(name, [[kwargs[name]] * frame_counts[j] for j in range(count)])
                per_frame_values[name][i] = values
    for name, values in per_frame_values.items():
        frame_kwargs[name] = batch([np.asarray(v) for sample in values for v in sample])

    total = sum(frame_counts)
    result = invoke(op, tuple(frame_inputs), total, device, frame_kwargs)
    return _fold(result, frame_counts, bs, bool(framed_inputs))


def _sequence_layout(result, ndim, framed_input):
    """ "F" + the frames' layout; frames without one are "*" per dimension when an
    input was a sequence, and the sequence has no layout when only arguments were
    given per frame (``coord_transform`` of unlabelled points), as in the reference."""
    if result.layout:
        return "F" + result.layout
    return "F" + "*" * ndim if framed_input else ""


def _fold(result, frame_counts, bs, framed_input):
    """Stack the results of the frames back into one sequence per sample."""
    if isinstance(result, tuple):
        return tuple(_fold(r, frame_counts, bs, framed_input) for r in result)
    if _on_gpu(result):
        result.evaluate()
        frames = result._gpu
        layout = _sequence_layout(result, result.ndim, framed_input)
        folded = _from_device_batch(frames.stack_runs(frame_counts), result.dtype, layout, result.device)
        return folded if bs is not None else folded.select(0)
    frames = [np.asarray(s) for s in result.evaluate()]
    layout = _sequence_layout(result, frames[0].ndim if frames else 0, framed_input)
    sequences = []
    start = 0
    for n in frame_counts:
        sequences.append(np.stack(frames[start : start + n]))
        start += n
    if bs is None:
        return as_tensor(sequences[0], layout=layout or None)
    return batch(sequences, layout=layout or None)
