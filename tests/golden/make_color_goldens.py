"""Record the reference's colour operators on small deterministic images.

Run with the reference's Python (DALI 2.4.0 in its own virtualenv):

    $HOME/dali-ref/bin/python tests/golden/make_color_goldens.py

Writes ``color_cases.json`` (one record per call: ``op`` (a name under the
reference's dynamic module, such as ``"noise.gaussian"``), ``inputs`` (keys into
the npz, one per sample in batch mode), ``layout``, ``batch`` (bool), ``kwargs``
(plain values; ``{"per_sample": [...]}`` for a Batch argument of numbers,
``{"per_sample_arrays": [keys]}`` for one of float arrays, ``{"per_sample_ints":
[lists]}`` for one of int lists, ``{"per_frame": [...]}`` for a Tensor of one value per frame, ``{"array": key}`` for a Tensor; ``{"dtype": name}``
for a type; ``{"image_type": name}`` for a colour space) and ``outputs`` (npz keys
of the expected samples), ``out_layout``) and ``color_values.npz`` beside this script.
"""

import json
import pathlib

import numpy as np
import nvidia.dali.experimental.dynamic as ndd
from nvidia.dali import types

HERE = pathlib.Path(__file__).parent
ARRAYS = {}
CASES = []


def image(shape, dtype, seed):
    """A smooth gradient with a little noise, scaled to ``dtype``'s usual range."""
    rng = np.random.default_rng(seed)
    h, w, c = shape
    yy, xx = np.meshgrid(np.linspace(0, 1, h), np.linspace(0, 1, w), indexing="ij")
    base = np.stack([(yy + xx * (k + 1) / c) % 1.0 for k in range(c)], axis=-1)
    base = np.clip(base + rng.normal(0, 0.05, base.shape), 0, 1)
    if dtype == np.float32:
        return (base * 1.2 - 0.1).astype(np.float32)
    top = {np.uint8: 255, np.int16: 32767, np.int32: 2**31 - 1}[dtype]
    return np.round(base * top).astype(dtype)


def store(arr):
    key = f"a{len(ARRAYS):04d}"
    ARRAYS[key] = np.ascontiguousarray(arr)
    return key


def convert_kwargs(kwargs, batch_size):
    ref, record = {}, {}
    for name, value in kwargs.items():
        if isinstance(value, dict) and "per_frame" in value:
            ref[name] = ndd.tensor(np.array(value["per_frame"], np.float32), layout="F")
            record[name] = value
        elif isinstance(value, dict) and "per_sample_ints" in value:
            ref[name] = ndd.batch([np.array(v, np.int32) for v in value["per_sample_ints"]])
            record[name] = value
        elif isinstance(value, dict) and "per_sample" in value:
            values = value["per_sample"]
            if isinstance(values[0], np.ndarray):
                ref[name] = ndd.batch([np.asarray(v, np.float32) for v in values])
                record[name] = {"per_sample_arrays": [store(np.asarray(v, np.float32)) for v in values]}
            else:
                kind = np.int32 if all(isinstance(v, int) for v in values) else np.float32
                ref[name] = ndd.batch([kind(v) for v in values])
                record[name] = {"per_sample": values}
        elif isinstance(value, np.ndarray):
            ref[name] = ndd.tensor(value.astype(np.float32))
            record[name] = {"array": store(value.astype(np.float32))}
        elif name == "dtype":
            ref[name] = getattr(ndd, value)
            record[name] = {"dtype": value}
        elif name in ("image_type", "output_type"):
            ref[name] = getattr(types, value)
            record[name] = {"image_type": value}
        else:
            ref[name] = value
            record[name] = value
    return ref, record


def fn_of(op):
    fn = ndd
    for part in op.split("."):
        fn = getattr(fn, part)
    return fn


def case(op, samples, layout="HWC", batch_mode=False, **kwargs):
    ref_kwargs, record = convert_kwargs(kwargs, len(samples))
    if batch_mode:
        data = ndd.batch(samples, layout=layout)
    else:
        data = ndd.tensor(samples[0], layout=layout)
    result = fn_of(op)(data, **ref_kwargs)
    outs = [np.asarray(s) for s in result] if batch_mode else [np.asarray(result)]
    CASES.append(
        {
            "op": op,
            "inputs": [store(s) for s in samples],
            "layout": layout,
            "batch": batch_mode,
            "kwargs": record,
            "outputs": [store(o) for o in outs],
            "out_layout": str(result.layout),
        }
    )


def value_cases():
    u8 = image((12, 16, 3), np.uint8, 0)
    f32 = image((12, 16, 3), np.float32, 1)
    i16 = image((6, 8, 3), np.int16, 2)
    i32 = image((6, 8, 3), np.int32, 3)
    for x in (u8, f32, i16, i32):
        case("brightness", [x], brightness=1.3, brightness_shift=0.1)
        case("brightness", [x], brightness=0.7, brightness_shift=-0.05)
        case("contrast", [x], contrast=1.7)
        case("contrast", [x], contrast=0.4, contrast_center=0.3)
        case(
            "brightness_contrast",
            [x],
            brightness=1.2,
            brightness_shift=0.05,
            contrast=1.5,
            contrast_center=0.3,
        )
        case("brightness_contrast", [x], brightness=0.9, contrast=0.0)
        for out in ("uint8", "int16", "int32", "float32"):
            case("brightness_contrast", [x], brightness=1.1, brightness_shift=0.02, contrast=1.3, dtype=out)
    case("contrast", [u8], contrast=1.5, contrast_center=100.0)
    case("brightness", [u8[None].repeat(2, 0)], layout="FHWC", brightness=2.0)
    case("brightness", [np.ascontiguousarray(u8[:, :, :1])], brightness=1.5, brightness_shift=0.2)
    for x in (u8, f32, i16):
        case("hue", [x], hue=30.0)
        case("hue", [x], hue=-140.0)
        case("saturation", [x], saturation=0.4)
        case("saturation", [x], saturation=2.5)
        case("hsv", [x], hue=30.0, saturation=0.4, value=1.3)
        case("hsv", [x], hue=200.0, saturation=1.5, value=0.8, dtype="float32")
        case("color_twist", [x], hue=30.0, saturation=0.4, contrast=1.3, brightness=0.8)
        case("color_twist", [x], hue=-60.0, saturation=1.6, contrast=0.6, brightness=1.2)
    case("hsv", [f32], hue=10.0, saturation=0.9, value=1.1)
    case("hue", [u8], hue=45.0, dtype="float32")
    case("saturation", [f32], saturation=0.5, dtype="uint8")
    case("color_twist", [u8[None].repeat(2, 0)], layout="FHWC", hue=20.0, brightness=1.1)
    video = np.stack([u8, u8[::-1], u8[:, ::-1]])
    case(
        "brightness_contrast", [video], layout="FHWC", brightness={"per_frame": [0.5, 1.0, 1.5]}, contrast=1.2
    )
    case("hsv", [video], layout="FHWC", hue={"per_frame": [0.0, 60.0, -60.0]}, saturation=0.8)
    case(
        "color_twist",
        [video],
        layout="FHWC",
        saturation={"per_frame": [0.0, 1.0, 2.0]},
        contrast={"per_frame": [1.0, 0.5, 1.5]},
    )
    # Batch mode, per-sample arguments, ragged samples.
    u8b = image((10, 14, 3), np.uint8, 4)
    case(
        "brightness_contrast",
        [u8, u8b],
        batch_mode=True,
        brightness={"per_sample": [0.8, 1.4]},
        contrast={"per_sample": [1.2, 0.5]},
        brightness_shift=0.03,
    )
    case("contrast", [u8, u8b], batch_mode=True, contrast_center={"per_sample": [50.0, 200.0]}, contrast=1.5)
    case(
        "hsv",
        [u8, u8b],
        batch_mode=True,
        hue={"per_sample": [10.0, -100.0]},
        saturation={"per_sample": [0.5, 1.5]},
        value={"per_sample": [1.0, 0.9]},
    )
    case(
        "color_twist",
        [u8, u8b],
        batch_mode=True,
        hue={"per_sample": [15.0, 170.0]},
        brightness={"per_sample": [1.0, 1.3]},
        saturation=1.2,
    )
    case("hue", [u8, u8b], batch_mode=True, hue={"per_sample": [90.0, -30.0]})
    case("saturation", [u8, u8b], batch_mode=True, saturation={"per_sample": [0.0, 3.0]})


def csc_cases():
    rgb = image((12, 16, 3), np.uint8, 5)
    rng = np.random.default_rng(6)
    rgb_noise = rng.integers(0, 256, (20, 24, 3), dtype=np.uint8)
    gray = image((12, 16, 1), np.uint8, 7)
    names = ("RGB", "BGR", "GRAY", "YCbCr")
    for source in names:
        for target in names:
            if source == target:
                continue
            inputs = [gray] if source == "GRAY" else [rgb]
            case("color_space_conversion", inputs, image_type=source, output_type=target)
            if source != "GRAY":
                case("color_space_conversion", [rgb_noise], image_type=source, output_type=target)
    case(
        "color_space_conversion",
        [rgb[None].repeat(2, 0)],
        layout="FHWC",
        image_type="RGB",
        output_type="YCbCr",
    )
    case("color_space_conversion", [rgb, rgb_noise], batch_mode=True, image_type="RGB", output_type="GRAY")


def equalize_cases():
    rng = np.random.default_rng(8)
    x = np.clip(rng.normal(100, 20, (20, 28, 3)), 0, 255).astype(np.uint8)
    case("equalize", [x])
    case("equalize", [np.ascontiguousarray(x.transpose(2, 0, 1))], layout="CHW")
    case("equalize", [np.ascontiguousarray(x[..., 0])], layout="HW")
    case("equalize", [np.stack([x, x[::-1] // 2])], layout="FHWC")
    case("equalize", [np.ascontiguousarray(np.stack([x, x // 3])[..., 1])], layout="FHW")
    case("equalize", [np.full((4, 5, 2), 7, np.uint8)])
    case("equalize", [x, image((10, 14, 3), np.uint8, 9)], batch_mode=True)


def jpeg_cases():
    x = image((20, 28, 3), np.uint8, 11)
    for quality in (1, 10, 50, 95, 100, 0, 101):
        case("jpeg_compression_distortion", [x], quality=quality)
    case("jpeg_compression_distortion", [x])
    case("jpeg_compression_distortion", [np.stack([x, x[::-1]])], layout="FHWC", quality=30)
    case("jpeg_compression_distortion", [np.ascontiguousarray(x[:7, :9])], quality=60)
    y = image((16, 16, 3), np.uint8, 12)
    case("jpeg_compression_distortion", [x, y], batch_mode=True, quality={"per_sample": [20, 80]})


def clahe_cases():
    rgb = image((37, 50, 3), np.uint8, 13)
    gray = np.ascontiguousarray(image((40, 48, 3), np.uint8, 14)[..., :1])
    case("clahe", [gray], tiles_x=8, tiles_y=8, clip_limit=3.0)
    case("clahe", [gray], tiles_x=5, tiles_y=8, clip_limit=2.0)  # only the height divides
    case("clahe", [gray], tiles_x=4, tiles_y=7, clip_limit=2.0)  # only the width divides
    case("clahe", [gray], tiles_x=3, tiles_y=3, clip_limit=0.5)
    case("clahe", [gray], tiles_x=1, tiles_y=1, clip_limit=40.0)
    case("clahe", [np.ascontiguousarray(gray[:6, :5])], tiles_x=4, tiles_y=4, clip_limit=2.0)
    case("clahe", [rgb], tiles_x=4, tiles_y=3, clip_limit=2.0, luma_only=False)
    case("clahe", [rgb], tiles_x=4, tiles_y=3, clip_limit=2.0)
    case("clahe", [image((32, 32, 3), np.uint8, 15)], tiles_x=2, tiles_y=2, clip_limit=4.0)
    case(
        "clahe",
        [gray, np.ascontiguousarray(rgb[..., :1])],
        batch_mode=True,
        tiles_x=3,
        tiles_y=2,
        clip_limit=2.5,
    )
    clahe_lightness_cases()


def clahe_lightness_cases():
    """RGB through 8-bit Lab: noise and saturated colours reach every corner of Lab."""
    rng = np.random.default_rng(60)
    noise = rng.integers(0, 256, (29, 41, 3), dtype=np.uint8)
    primaries = (rng.integers(0, 2, (16, 20, 3)) * 255).astype(np.uint8)
    dark = (image((24, 30, 3), np.uint8, 61) // 6).astype(np.uint8)
    case("clahe", [noise], tiles_x=3, tiles_y=5, clip_limit=1.5)
    case("clahe", [noise], tiles_x=8, tiles_y=8, clip_limit=10.0, luma_only=True)
    case("clahe", [primaries], tiles_x=2, tiles_y=2, clip_limit=3.0)
    case("clahe", [dark], tiles_x=4, tiles_y=4, clip_limit=0.5)
    case("clahe", [image((64, 80, 3), np.uint8, 62)], tiles_x=8, tiles_y=6, clip_limit=2.0)
    case("clahe", [np.ascontiguousarray(noise[:5, :7])], tiles_x=4, tiles_y=4, clip_limit=1.0)
    case("clahe", [noise, dark], batch_mode=True, tiles_x=2, tiles_y=3, clip_limit=2.0)


def debayer_cases():
    rng = np.random.default_rng(16)
    bayer = rng.integers(0, 256, (12, 14), dtype=np.uint8)
    smooth = np.ascontiguousarray(image((16, 18, 3), np.uint8, 17)[..., 1])
    for position in ([0, 0], [0, 1], [1, 0], [1, 1]):
        for algorithm in (None, "edgeaware_ocv", "gray_ocv"):
            kwargs = {"algorithm": algorithm} if algorithm else {}
            case("debayer", [bayer], layout="HW", blue_position=position, **kwargs)
        case("debayer", [smooth], layout="HW", blue_position=position, algorithm="edgeaware_ocv")
    case("debayer", [bayer.astype(np.uint16) * 250], layout="HW", blue_position=[1, 1])
    case("debayer", [bayer.astype(np.uint16) * 250], layout="HW", blue_position=[0, 1], algorithm="gray_ocv")
    case("debayer", [bayer[..., None].copy()], blue_position=[1, 0])
    case("debayer", [np.stack([bayer, smooth[:12, :14]])], layout="FHW", blue_position=[0, 0])
    case(
        "debayer",
        [bayer, smooth],
        layout="HW",
        batch_mode=True,
        blue_position={"per_sample_ints": [[0, 0], [1, 1]]},
    )
    # VNG: the reference takes uint8 images of even height and width only.
    large = rng.integers(0, 256, (30, 40), dtype=np.uint8)
    for position in ([0, 0], [0, 1], [1, 0], [1, 1]):
        for x in (bayer, smooth, large):
            case("debayer", [x], layout="HW", blue_position=position, algorithm="vng_ocv")
    case("debayer", [bayer[:2, :2].copy()], layout="HW", blue_position=[1, 1], algorithm="vng_ocv")
    case("debayer", [bayer[:4, :6].copy()], layout="HW", blue_position=[0, 1], algorithm="vng_ocv")
    case("debayer", [smooth[..., None].copy()], blue_position=[1, 0], algorithm="vng_ocv")
    video = np.stack([bayer, smooth[:12, :14], large[:12, :14]])
    case("debayer", [video], layout="FHW", blue_position=[0, 0], algorithm="vng_ocv")
    case("debayer", [video[..., None].copy()], layout="FHWC", blue_position=[1, 1], algorithm="vng_ocv")
    case(
        "debayer",
        [bayer, smooth, large],
        layout="HW",
        batch_mode=True,
        blue_position={"per_sample_ints": [[0, 1], [1, 0], [1, 1]]},
        algorithm="vng_ocv",
    )


def main():
    value_cases()
    csc_cases()
    equalize_cases()
    jpeg_cases()
    clahe_cases()
    debayer_cases()
    (HERE / "color_cases.json").write_text(json.dumps({"cases": CASES}, indent=0))
    np.savez_compressed(HERE / "color_values.npz", **ARRAYS)
    print(len(CASES), "cases")


if __name__ == "__main__":
    main()
