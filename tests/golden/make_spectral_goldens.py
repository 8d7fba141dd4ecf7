"""Regenerate the goldens of the signal-processing operators (ndd/_ops/spectral.py) from
the reference.

Run with the reference's interpreter (DALI 2.4.0 dynamic mode, CPU):

    $HOME/dali-ref/bin/python tests/golden/make_spectral_goldens.py

Writes ``spectral_cases.json`` (one record per call: operator, input names and layout,
keyword arguments, the names of the expected outputs and their layout, or the error
raised) and ``spectral_values.npz`` (inputs and expected outputs by name). Inputs are short
noisy chirps and spectra from a fixed seed. Calls where the reference crashes, hangs or
gives nonsense are left out (tests/ops/test_spectral.py specifies ours).
"""

import json
import pathlib

import numpy as np
import nvidia.dali.experimental.dynamic as ndd

HERE = pathlib.Path(__file__).parent
rng = np.random.default_rng(0)
arrays = {}
cases = []


def add_array(name, value):
    arrays[name] = np.array(value, order="C")  # 0-D stays 0-D
    return name


def chirp(n, rate=16000.0, noise=0.05):
    """A rising tone with some noise: power spread over many bins and windows."""
    t = np.arange(n) / rate
    tone = np.sin(2 * np.pi * (200.0 + 1500.0 * t / max(t[-1], 1e-9)) * t)
    return (tone + rng.normal(0, noise, n)).astype(np.float32)


add_array("sig", chirp(480))
add_array("sig_b", chirp(360))
add_array("sig_short", chirp(37))
add_array("sig_odd", chirp(401))
add_array("sig_col", chirp(256)[:, None])
add_array("sig_row", chirp(256)[None, :])
add_array("sig_1", np.array([0.75], np.float32))
add_array("sig_2", np.array([0.5, -1.0], np.float32))
add_array("stereo", np.stack([chirp(300), chirp(300)], axis=1))
add_array("sig_i16", np.round(chirp(300) * 3000).astype(np.int16))
add_array("sig_u8", np.clip(np.round(chirp(300) * 60 + 128), 0, 255).astype(np.uint8))
add_array("sig_f64", chirp(300).astype(np.float64))
add_array("sig_i32", np.round(chirp(300) * 3000).astype(np.int32))
add_array("mat", rng.normal(size=(6, 40)).astype(np.float32))
add_array("mat3", rng.normal(size=(2, 5, 24)).astype(np.float32))
add_array("spec", rng.uniform(0, 2, (129, 6)).astype(np.float32))
add_array("spec_b", rng.uniform(0, 2, (129, 5)).astype(np.float32))
add_array("spec_tf", rng.uniform(0, 2, (5, 129)).astype(np.float32))
add_array("spec3", rng.uniform(0, 2, (2, 65, 6)).astype(np.float32))
add_array("spec_1d", rng.uniform(0, 2, 201).astype(np.float32))
add_array("mel", rng.normal(size=(32, 11)).astype(np.float32))
add_array("mel_b", rng.normal(size=(32, 4)).astype(np.float32))
add_array("mel3", rng.normal(size=(3, 16, 5)).astype(np.float32))
add_array("power", np.abs(rng.normal(size=(12, 9))).astype(np.float32))
add_array("power_b", (np.abs(rng.normal(size=(12, 9))) * 50).astype(np.float32))
add_array("zeros", np.zeros((4, 5), np.float32))
add_array("with_nan", np.array([np.nan, 1.0, 2.0, 0.5], np.float32))
add_array("scalar", np.array(3.0, np.float32))
add_array("mat_f64", rng.normal(size=(6, 40)))
add_array("mat_i32", rng.integers(-5, 5, (6, 40)).astype(np.int32))


def quiet_loud(n, start, stop, loud=1.0, hum=0.0):
    """Silence with a loud passage in [start, stop) and an optional faint hum elsewhere."""
    values = rng.normal(0, hum, n) if hum else np.zeros(n)
    values[start:stop] = rng.normal(0, loud, stop - start)
    return values.astype(np.float32)


add_array("speech", quiet_loud(1400, 400, 900, hum=1e-4))
add_array("speech_b", quiet_loud(700, 100, 400, hum=1e-4))
add_array("speech_i16", np.round(quiet_loud(1400, 400, 900, hum=3e-4) * 3000).astype(np.int16))
add_array("speech_u8", np.clip(np.round(quiet_loud(1000, 300, 700) * 30 + 128), 0, 255).astype(np.uint8))
add_array("speech_i32", np.round(quiet_loud(1000, 300, 700) * 3000).astype(np.int32))
add_array("speech_short", quiet_loud(40, 10, 20))
add_array("hum", quiet_loud(1000, 400, 700, loud=0.5, hum=0.01))


def burst(n, start, stop, seed, scale):
    """Zeros with a burst of large whole numbers in [start, stop): the float32 running sum
    of squares keeps a residue after the burst, until it is summed afresh."""
    values = np.zeros(n, np.float32)
    values[start:stop] = np.round(np.random.default_rng(seed).standard_normal(stop - start) * scale)
    return values


add_array("burst", burst(1000, 649, 792, 0, 16000))
add_array("burst_i32", burst(1000, 649, 792, 0, 16000).astype(np.int32))
add_array("burst_b", burst(1000, 100, 120, 0, 30000))
add_array("burst_c", burst(400, 55, 75, 0, 30000))
add_array("empty", np.zeros(0, np.float32))
add_array("tiny_power", np.array([0, 1e-45, 1e-40, 1e-30, 1e-3, 1], np.float32))


def build(spec, layout):
    if isinstance(spec, list):
        return ndd.batch([arrays[n] for n in spec], layout=layout or None)
    return ndd.tensor(arrays[spec], layout=layout or None)


def build_kwarg(value):
    if isinstance(value, dict) and "batch" in value:
        return ndd.batch([np.asarray(v, dtype=value["dtype"]) for v in value["batch"]])
    if isinstance(value, str) and value.startswith("dtype:"):
        return getattr(ndd, value[len("dtype:") :])
    return value


def store(result, prefix):
    if isinstance(result, ndd.Batch):
        return [add_array(f"{prefix}_{i}", np.asarray(s)) for i, s in enumerate(result)]
    return add_array(prefix, np.asarray(result))


def record(op, inputs, in_layout="", **kwargs):
    case = {"op": op, "inputs": inputs, "layout": in_layout, "kwargs": kwargs}
    try:
        result = getattr(ndd, op)(
            *[build(s, in_layout) for s in inputs], **{k: build_kwarg(v) for k, v in kwargs.items()}
        )
        outputs = result if isinstance(result, tuple) else (result,)
        case["expected"] = [store(out, f"out{len(cases)}_{k}") for k, out in enumerate(outputs)]
        case["expected_layout"] = [str(out.layout or "") for out in outputs]
    except Exception as exc:  # noqa: BLE001 - the error itself is the golden
        cause = exc.__cause__ or exc.__context__ or exc
        case["error"] = f"{type(exc).__name__}: {str(cause).splitlines()[0][:300]}"
    cases.append(case)


# preemphasis_filter
for border in ["clamp", "zero", "reflect"]:
    record("preemphasis_filter", ["sig"], border=border)
record("preemphasis_filter", ["sig"], preemph_coeff=0.5)
record("preemphasis_filter", ["sig"], preemph_coeff=-1.25, border="zero")
record("preemphasis_filter", [["sig", "sig_b"]], preemph_coeff={"batch": [0.9, 0.3], "dtype": "float32"})
record("preemphasis_filter", [["sig", "sig_b"]], border="reflect")
record("preemphasis_filter", ["sig"], in_layout="t")
record("preemphasis_filter", ["sig_col"])
record("preemphasis_filter", ["sig_1"])
record("preemphasis_filter", ["scalar"])
for dtype in ["float32", "float64", "int16", "int32", "uint8", "int8", "uint16", "int64"]:
    record("preemphasis_filter", ["sig_i16"], dtype=f"dtype:{dtype}")
record("preemphasis_filter", ["sig_u8"])
record("preemphasis_filter", ["sig_f64"])
record("preemphasis_filter", ["sig_f64"], dtype="dtype:float64")
record("preemphasis_filter", ["sig_i32"], preemph_coeff=0.8)
record("preemphasis_filter", ["sig"], border="wrap")
record("preemphasis_filter", ["sig"], dtype="dtype:float16")
record("preemphasis_filter", ["sig"], dtype="dtype:bool")

# power_spectrum
record("power_spectrum", ["mat"])
record("power_spectrum", ["mat"], power=1)
record("power_spectrum", ["mat"], axis=0)
record("power_spectrum", ["mat"], axis=-1, nfft=9)
record("power_spectrum", ["mat"], nfft=64)
record("power_spectrum", ["mat"], nfft=25)
record("power_spectrum", ["mat"], nfft=0)
record("power_spectrum", ["mat"], in_layout="ct")
record("power_spectrum", ["mat3"], axis=1, nfft=5)
record("power_spectrum", ["mat3"])
record("power_spectrum", ["sig"])
record("power_spectrum", [["mat", "mat"]], nfft=16)
record("power_spectrum", ["mat"], power=3)
record("power_spectrum", ["mat"], axis=2)
record("power_spectrum", ["mat_f64"])
record("power_spectrum", ["mat_i32"])

# spectrogram
record("spectrogram", ["sig"], window_length=128, window_step=64)
record("spectrogram", ["sig"], window_length=128, window_step=64, layout="tf")
record("spectrogram", ["sig"], window_length=128, window_step=48, center_windows=False)
record("spectrogram", ["sig"], window_length=128, window_step=64, reflect_padding=False)
record("spectrogram", ["sig"], window_length=100, window_step=60, nfft=256)
record("spectrogram", ["sig"], window_length=101, window_step=50)
record("spectrogram", ["sig_odd"], window_length=64, window_step=32, power=1)
record(
    "spectrogram", ["sig"], window_length=8, window_step=5, window_fn=[0.1, 0.4, 0.8, 1.0, 1.0, 0.8, 0.4, 0.1]
)
record("spectrogram", ["sig"], window_length=64, window_step=100)
record("spectrogram", ["sig"])
record("spectrogram", ["sig_short"], window_length=100, window_step=30)
record("spectrogram", ["sig_short"], window_length=100, window_step=30, reflect_padding=False)
record("spectrogram", ["sig_1"], window_length=16, window_step=4)
record("spectrogram", ["sig_2"], window_length=16, window_step=4)
record("spectrogram", ["sig_col"], window_length=64, window_step=32)
record("spectrogram", ["sig_row"], window_length=64, window_step=32)
record("spectrogram", ["sig"], in_layout="t", window_length=64, window_step=32)
record("spectrogram", [["sig", "sig_b"]], window_length=64, window_step=32)
record("spectrogram", [["sig", "sig"]], window_length=64, window_step=32, layout="tf")
record("spectrogram", ["sig"], window_length=128, nfft=64)
record("spectrogram", ["sig"], window_length=64, power=3)
record("spectrogram", ["sig"], window_length=64, layout="xy")
record("spectrogram", ["sig"], window_length=4, window_fn=[1.0, 1.0, 1.0])
record("spectrogram", ["sig"], window_length=0)
record("spectrogram", ["sig"], window_length=64, window_step=0)
record("spectrogram", ["sig_short"], window_length=64, window_step=16, center_windows=False)
record("spectrogram", ["stereo"], window_length=64)
record("spectrogram", ["sig_i16"], window_length=64)
record("spectrogram", ["sig_f64"], window_length=64)

# mel_filter_bank
record("mel_filter_bank", ["spec"])
record("mel_filter_bank", ["spec"], in_layout="ft", sample_rate=16000.0, nfilter=40)
record("mel_filter_bank", ["spec"], sample_rate=16000.0, nfilter=40, mel_formula="htk")
record("mel_filter_bank", ["spec"], sample_rate=16000.0, nfilter=24, normalize=False)
record("mel_filter_bank", ["spec"], sample_rate=16000.0, nfilter=32, freq_low=300.0, freq_high=6000.0)
record(
    "mel_filter_bank",
    ["spec"],
    sample_rate=16000.0,
    nfilter=20,
    mel_formula="htk",
    normalize=False,
    freq_low=60.0,
)
record("mel_filter_bank", ["spec"], sample_rate=16000.0, nfilter=16, freq_high=9000.0)
record("mel_filter_bank", ["spec"], sample_rate=16000.0, nfilter=16, freq_high=-5.0)
record("mel_filter_bank", ["spec"], sample_rate=8000.0, nfilter=100)
record("mel_filter_bank", ["spec_tf"], in_layout="tf", sample_rate=16000.0, nfilter=64)
record("mel_filter_bank", ["spec3"], sample_rate=16000.0, nfilter=10)
record("mel_filter_bank", ["spec3"], in_layout="cft", sample_rate=16000.0, nfilter=10)
record("mel_filter_bank", ["spec_1d"], sample_rate=22050.0, nfilter=30)
record("mel_filter_bank", [["spec", "spec_b"]], sample_rate=16000.0, nfilter=40)
record("mel_filter_bank", [["spec", "spec"]], sample_rate=16000.0, nfilter=40, mel_formula="htk")
record("mel_filter_bank", ["spec"], in_layout="xt")
record("mel_filter_bank", ["spec"], nfilter=0)
record("mel_filter_bank", ["spec"], sample_rate=0.0)
record("mel_filter_bank", ["spec"], sample_rate=16000.0, freq_low=5000.0, freq_high=4000.0)
record("mel_filter_bank", ["spec"], sample_rate=16000.0, freq_low=-1.0)
record("mel_filter_bank", ["spec"], sample_rate=16000.0, freq_high=17000.0)
record("mel_filter_bank", ["spec"], mel_formula="mfcc")
record("mel_filter_bank", ["mat_f64"])

# mfcc
record("mfcc", ["mel"])
record("mfcc", ["mel"], n_mfcc=13)
record("mfcc", ["mel"], n_mfcc=50)
record("mfcc", ["mel"], axis=1, n_mfcc=5)
record("mfcc", ["mel"], in_layout="ft", n_mfcc=8)
for dct_type in [1, 2, 3, 4]:
    record("mfcc", ["mel"], n_mfcc=10, dct_type=dct_type)
    if dct_type != 1:
        record("mfcc", ["mel"], n_mfcc=10, dct_type=dct_type, normalize=True)
record("mfcc", ["mel"], n_mfcc=12, lifter=22.0)
record("mfcc", ["mel"], n_mfcc=12, lifter=-3.0, normalize=True)
record("mfcc", ["mel3"], axis=1, n_mfcc=6)
record("mfcc", ["mel3"], axis=2, n_mfcc=4, dct_type=3)
record("mfcc", [["mel", "mel_b"]], n_mfcc=10)
record("mfcc", ["mel"], n_mfcc=0)
record("mfcc", ["mel"], dct_type=5)
record("mfcc", ["mel"], dct_type=1, normalize=True)
record("mfcc", ["mel"], axis=-1)
record("mfcc", ["mel"], axis=2)
record("mfcc", ["sig"])
record("mfcc", ["mat_f64"])

# to_decibels
record("to_decibels", ["power"])
record("to_decibels", ["power"], multiplier=20.0, reference=2.0, cutoff_db=-10.0)
record("to_decibels", ["power"], cutoff_db=-3.0)
record("to_decibels", ["power"], reference=1.0)
record("to_decibels", ["power"], cutoff_db=5.0)
record("to_decibels", ["zeros"])
record("to_decibels", ["zeros"], reference=1.0)
record("to_decibels", ["with_nan"])
record("to_decibels", ["scalar"])
record("to_decibels", ["mat3"], in_layout="abc")
record("to_decibels", [["power", "power_b"]])
record("to_decibels", [["power", "zeros"]], multiplier=20.0)
record("to_decibels", ["mat_f64"])
record("to_decibels", ["mat_i32"])
for multiplier, cutoff in [(1.5, -80.0), (10.0, -500.0), (1.0, -44.0), (1.0, -46.0), (20.0, -900.0)]:
    record("to_decibels", ["tiny_power"], multiplier=multiplier, cutoff_db=cutoff)

# nonsilent_region
record("nonsilent_region", ["speech"])
record("nonsilent_region", ["speech"], window_length=128, reset_interval=1024)
record("nonsilent_region", ["speech"], window_length=128, reset_interval=-1)
record("nonsilent_region", ["speech"], window_length=256, cutoff_db=-20.0)
record("nonsilent_region", ["speech"], window_length=64, cutoff_db=-80.0, reset_interval=64)
record("nonsilent_region", ["speech"], window_length=128, reference_power=0.5, reset_interval=256)
record("nonsilent_region", ["speech"], window_length=1, reset_interval=8)
record("nonsilent_region", ["speech"], window_length=128, cutoff_db=10.0, reset_interval=128)
record("nonsilent_region", ["hum"], window_length=100, cutoff_db=-30.0, reset_interval=500)
record("nonsilent_region", ["speech_short"])
record("nonsilent_region", ["speech_i16"], window_length=100)
record("nonsilent_region", ["speech_i16"], window_length=100, reset_interval=7)
record("nonsilent_region", ["speech_u8"], window_length=100)
record("nonsilent_region", ["speech_i32"], window_length=100, cutoff_db=-40.0)
record("nonsilent_region", [["speech", "speech_b"]], window_length=256)
record("nonsilent_region", [["speech", "speech_b"]], window_length=64, cutoff_db=-30.0, reset_interval=-1)
record("nonsilent_region", ["speech"], window_length=100)
record("nonsilent_region", ["speech"], window_length=128, reset_interval=-5)
record("nonsilent_region", ["speech"], reference_power=-1.0)
record("nonsilent_region", ["speech"], reference_power=0.0)
record("nonsilent_region", ["mat"])
record("nonsilent_region", ["sig_col"])
record("nonsilent_region", ["sig_f64"])
# The running float32 sum's residue after a loud burst, and where it is summed afresh.
for window, reset in [(10, -1), (10, 40), (10, 10), (10, 8192)]:
    for name in ["burst", "burst_i32", "burst_b"]:
        record("nonsilent_region", [name], window_length=window, reset_interval=reset, reference_power=1.0, cutoff_db=-90.0)
record("nonsilent_region", ["burst_c"], window_length=3, reset_interval=12, reference_power=1.0, cutoff_db=-90.0)
record("nonsilent_region", ["burst_c"], window_length=5, reset_interval=20, reference_power=1.0, cutoff_db=-90.0)
record("nonsilent_region", ["burst_b"], window_length=64, reset_interval=256, reference_power=1.0, cutoff_db=-90.0)
record("nonsilent_region", ["empty"], reference_power=1.0)
record("nonsilent_region", [["burst_b", "empty"]], window_length=10, reset_interval=40, reference_power=1.0)

with open(HERE / "spectral_cases.json", "w") as f:
    json.dump({"cases": cases}, f, indent=1)
np.savez_compressed(HERE / "spectral_values.npz", **arrays)
print(len(cases), "cases;", sum("error" in c for c in cases), "errors")
for c in cases:
    if "error" in c:
        print(c["op"], c["inputs"], c["kwargs"], "->", c["error"][:160])
