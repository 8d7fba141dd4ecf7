"""Calls with per-frame arguments (ndd.per_frame), written once for both libraries:
``make_per_frame_goldens.py`` runs them on the reference, ``tests/ops/test_per_frame.py``
on ndd. Each case maps the module (ndd or the reference) to the call's result."""

import numpy as np

_RNG = np.random.default_rng(7)
VIDEO = _RNG.integers(0, 256, (3, 12, 14, 3), np.uint8)
GRAY_VIDEO = _RNG.integers(0, 256, (3, 12, 14), np.uint8)
SHORT_VIDEO = _RNG.integers(0, 256, (2, 10, 9, 3), np.uint8)
POINTS = _RNG.random((3, 5, 2)).astype(np.float32)
AFFINE = np.array([[1.0, 0.2, 1.5], [-0.1, 0.9, 2.0]], np.float32)


def _pf(m, values, dtype=np.float32):
    return m.per_frame(m.as_tensor(np.asarray(values, dtype)))


def _video(m, data=VIDEO, layout="FHWC"):
    return m.as_tensor(data, layout=layout)


CASES = {
    "brightness": lambda m: m.brightness(_video(m), brightness=_pf(m, [0.5, 1.0, 1.5])),
    "brightness_one_value": lambda m: m.brightness(_video(m), brightness=_pf(m, [0.5])),
    "brightness_contrast": lambda m: m.brightness_contrast(
        _video(m), contrast=_pf(m, [0.5, 1.0, 2.0]), brightness_shift=_pf(m, [0.1, 0.0, -0.1])
    ),
    "hsv": lambda m: m.hsv(_video(m), hue=_pf(m, [0, 45, 90]), value=_pf(m, [1.0, 0.8, 1.2])),
    "color_twist": lambda m: m.color_twist(_video(m), saturation=_pf(m, [0.0, 1.0, 2.0]), hue=30.0),
    "gaussian_blur_sigma": lambda m: m.gaussian_blur(_video(m), sigma=_pf(m, [0.8, 1.5, 2.5])),
    "gaussian_blur_sigma_xy": lambda m: m.gaussian_blur(
        _video(m), sigma=_pf(m, [[1.0, 2.0], [2.0, 1.0], [0.5, 0.5]])
    ),
    "gaussian_blur_window": lambda m: m.gaussian_blur(_video(m), window_size=_pf(m, [3, 5, 7], np.int32)),
    "laplacian_scale": lambda m: m.laplacian(_video(m), scale=_pf(m, [1.0, 0.5, 2.0]), dtype=m.float32),
    "laplacian_window": lambda m: m.laplacian(
        _video(m), window_size=_pf(m, [3, 5, 7], np.int32), dtype=m.float32
    ),
    "rotate": lambda m: m.rotate(_video(m), angle=_pf(m, [10, 20, 30])),
    "rotate_quarter_turns": lambda m: m.rotate(_video(m), angle=_pf(m, [0, 90, 180])),
    "rotate_keep_size": lambda m: m.rotate(_video(m), angle=_pf(m, [-15, 0, 15]), keep_size=True),
    "rotate_batch": lambda m: m.rotate(
        m.batch([VIDEO, SHORT_VIDEO], layout="FHWC"),
        angle=m.batch([np.array([5, 10, 15], np.float32), np.array([30], np.float32)], layout="F"),
    ),
    "warp_affine": lambda m: m.warp_affine(
        _video(m), matrix=_pf(m, [AFFINE, AFFINE * np.float32(0.9), np.eye(2, 3, dtype=np.float32)])
    ),
    "warp_perspective": lambda m: m.experimental.warp_perspective(
        _video(m),
        matrix=_pf(
            m, [np.eye(3), [[1, 0.1, 0], [0, 1, 1], [0, 0, 1]], [[0.9, 0, 1], [0, 1.1, 0], [0, 0, 1]]]
        ),
    ),
    "debayer": lambda m: m.debayer(
        _video(m, GRAY_VIDEO, "FHW"), blue_position=_pf(m, [[0, 0], [1, 1], [0, 1]], np.int32)
    ),
    "translation": lambda m: m.transforms.translation(offset=_pf(m, [[1, 2], [3, 4], [5, 6]])),
    "rotation": lambda m: m.transforms.rotation(angle=_pf(m, [0, 90, 33]), center=[1.0, 2.0]),
    "rotation_of_an_input": lambda m: m.transforms.rotation(m.as_tensor(AFFINE), angle=_pf(m, [10, 20])),
    "scale": lambda m: m.transforms.scale(scale=_pf(m, [[1, 2], [3, 4]]), center=_pf(m, [[0, 0], [1, 1]])),
    "shear": lambda m: m.transforms.shear(angles=_pf(m, [[10, 0], [0, 20], [5, 5]])),
    "crop": lambda m: m.transforms.crop(to_start=_pf(m, [[0, 0], [1, 1], [2, 2]]), to_end=[4.0, 4.0]),
    "combine": lambda m: m.transforms.combine(
        m.per_frame(m.as_tensor(np.stack([AFFINE, AFFINE * np.float32(2)]))), m.as_tensor(AFFINE)
    ),
    "coord_transform_mt": lambda m: m.coord_transform(
        m.as_tensor(POINTS, layout="F**"), MT=_pf(m, [AFFINE, AFFINE * np.float32(0.5), AFFINE])
    ),
    "coord_transform_m_t": lambda m: m.coord_transform(
        m.as_tensor(POINTS[0]), M=_pf(m, [np.eye(2), 2 * np.eye(2), [[0, 1], [1, 0]]]), T=[1.0, -1.0]
    ),
}

# Calls the reference refuses, with a word of its message.
ERRORS = {
    "too_few_values": (
        lambda m: m.brightness(_video(m), brightness=_pf(m, [0.5, 1.0])),
        "frames",
    ),
    "no_sequence": (
        lambda m: m.gaussian_blur(m.as_tensor(VIDEO[0], layout="HWC"), sigma=_pf(m, [1.0, 2.0, 3.0])),
        "sigma",
    ),
}
