"""CPU image operators one by one: ndd against the reference, in one run.

Every operator runs on the same batch of 16 uint8 HWC images of 500x375 (made from the bundled photographs,
``ndd/_sample_data/photos``, decoded and resized with Pillow; deterministic), or on what it needs instead:
the same images encoded as JPEG quality 90 for the JPEG decoders, as PNG, .npy files and LZ4 blocks for
``decoders.image_png``, ``decoders.numpy`` and ``decoders.inflate``; Bayer mosaics of them for ``debayer``,
label masks of 4 classes (red channel // 64) for the segmentation operators, 20 polygons of 5 vertices (10 kept)
for ``select_masks``; 100 normalized boxes per sample (and labels) for the box operators, 100 points for
``coord_transform``, whose milliseconds are per sample. Both implementations run in ``sync_cpu`` mode
with ``set_num_threads(1)``.

Each implementation runs in its own worker process (ndd from this interpreter, the reference from its side
virtualenv); the driver interleaves them operator by operator, repeats, and prints the CPU milliseconds per
image (``time.process_time`` of calls on the batch until at least ``--min-seconds`` of CPU time, divided by
the images processed): median [min-max] of the repeats, and the speed ratio ndd/ref (reference time over ndd
time: above 1 ndd is faster). CPU time of the process, not wall time: other work sharing the machine hardly
changes it. Operators the reference cannot run on the CPU (GPU-only there) are listed with its error.

``--images`` times the image operators on other data instead: ``float32`` (the same pixels as float32),
``chw`` (planar uint8, layout CHW), ``small`` (uint8 HWC of 64x48, where the cost per call weighs more) or
``sequences`` (FHWC, 8 frames of 160x120; milliseconds per sequence).
Operators that do not take such data in either implementation are listed with the error.

    python bench/ops.py [--reference-python ~/dali-ref/bin/python] [--repeats 5] [--ops resize_linear,flip]
                        [--images uint8|float32|chw|small|sequences]
"""

import argparse
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from worker_process import WorkerProcess

BATCH_SIZE = 16
WIDTH, HEIGHT = 500, 375
NUM_BOXES = 100
NUM_ANCHORS = 1000
MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]
# The image data of each --images choice: (description, element type, layout, width, height).
IMAGE_KINDS = {
    "uint8": ("uint8 500x375 HWC", "uint8", "HWC", WIDTH, HEIGHT),
    "float32": ("float32 500x375 HWC (values 0-255)", "float32", "HWC", WIDTH, HEIGHT),
    "chw": ("uint8 500x375 CHW", "uint8", "CHW", WIDTH, HEIGHT),
    "small": ("uint8 64x48 HWC", "uint8", "HWC", 64, 48),
    "sequences": (
        "uint8 sequences of 8 frames of 160x120, FHWC (ms per sequence)",
        "uint8",
        "FHWC",
        160,
        120,
    ),
}
FRAMES = 8
# Encoded copies of the images for the other formats' decoder cases: name -> (the
# pictures saved: "rgb", "gray" or "gray16", Pillow's save arguments).
FORMATS = {
    "png6": ("rgb", {"format": "PNG"}),  # Pillow's default compression, level 6
    "png_gray16": ("gray16", {"format": "PNG"}),
    "webp": ("rgb", {"format": "WEBP", "quality": 90}),
    "tiff": ("rgb", {"format": "TIFF"}),
    "tiff_lzw": ("rgb", {"format": "TIFF", "compression": "tiff_lzw"}),
    "tiff_deflate": ("rgb", {"format": "TIFF", "compression": "tiff_adobe_deflate"}),
    "bmp": ("rgb", {"format": "BMP"}),
    "jp2": (
        "rgb",
        {"format": "JPEG2000", "irreversible": True, "quality_mode": "rates", "quality_layers": [20]},
    ),
    "jpeg_progressive": ("rgb", {"format": "JPEG", "quality": 90, "progressive": True}),
    "jpeg_gray": ("gray", {"format": "JPEG", "quality": 90}),
}
PHOTOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ndd", "_sample_data", "photos")
# Rotation by 30 degrees about the image centre, as a 2x3 matrix (output -> input by default).
_COS, _SIN = 0.8660254, 0.5
AFFINE = [
    _COS,
    -_SIN,
    WIDTH / 2 - _COS * WIDTH / 2 + _SIN * HEIGHT / 2,
    _SIN,
    _COS,
    HEIGHT / 2 - _SIN * WIDTH / 2 - _COS * HEIGHT / 2,
]
PERSPECTIVE = [1.0, 0.1, -20.0, 0.05, 1.0, -10.0, 0.0002, 0.0001, 1.0]
SHARPEN = [[0.0, -1.0, 0.0], [-1.0, 5.0, -1.0], [0.0, -1.0, 0.0]]
# The operators timed, in the table's order before sorting (the keys of operator_calls).
OPS = [
    "resize_linear",
    "resize_cubic",
    "resize_lanczos3",
    "random_resized_crop",
    "crop",
    "crop_mirror_normalize",
    "flip",
    "rotate",
    "warp_affine",
    "warp_perspective",
    "water",
    "sphere",
    "jitter",
    "brightness_contrast",
    "hsv",
    "hue",
    "saturation",
    "color_twist",
    "csc_rgb_to_gray",
    "csc_rgb_to_ycbcr",
    "equalize",
    "clahe",
    "gaussian_blur",
    "laplacian",
    "filter_3x3",
    "median_blur",
    "erase",
    "paste",
    "grid_mask",
    "normalize",
    "normalize_per_channel",
    "reductions.mean_per_channel",
    "reductions.max_per_channel",
    "noise.gaussian",
    "noise.salt_and_pepper",
    "noise.shot",
    "jpeg_compression_distortion",
    "decoders.image",
    "decoders.image_crop",
    "decoders.image_random_crop",
    "bb_flip",
    "coord_flip",
    "random_bbox_crop",
    "box_encoder",
    "resize_crop_mirror",
    "tensor_resize",
    "flip_vertical",
    "csc_ycbcr_to_rgb",
    "debayer",
    "multi_paste",
    "lookup_table",
    "slice",
    "pad",
    "transpose",
    "cast_float32",
    "cat",
    "stack",
    "reductions.sum",
    "reductions.std_dev",
    "sequence_rearrange",
    "decoders.image_slice",
    "decoders.image_png",
    "decoders.image_png6",
    "decoders.image_png_gray16",
    "decoders.image_webp",
    "decoders.image_tiff",
    "decoders.image_tiff_lzw",
    "decoders.image_tiff_deflate",
    "decoders.image_bmp",
    "decoders.image_jp2",
    "decoders.image_jpeg_progressive",
    "decoders.image_jpeg_gray",
    "decoders.image_to_gray",
    "decoders.image_to_ycbcr",
    "peek_image_shape",
    "decoders.numpy",
    "decoders.inflate",
    "bbox_paste",
    "bbox_rotate",
    "coord_transform",
    "one_hot",
    "random_crop_generator",
    "roi_random_crop",
    "segmentation.random_mask_pixel",
    "segmentation.random_object_bbox",
    "segmentation.select_masks",
]


def make_images(kind="uint8"):
    """16 arrays of the --images ``kind`` (by default uint8 HWC of HEIGHT x WIDTH): the bundled
    photographs, cropped to 4:3 and resized (Pillow)."""
    import numpy as np
    from PIL import Image

    photos = [
        Image.open(os.path.join(PHOTOS, name)).convert("RGB")
        for name in sorted(os.listdir(PHOTOS))
        if name.endswith(".jpg")
    ]
    _, dtype, layout, out_width, out_height = IMAGE_KINDS[kind]
    images = []
    for i in range(BATCH_SIZE):
        photo = photos[i % len(photos)]
        if i >= len(photos):
            photo = photo.transpose(Image.FLIP_LEFT_RIGHT)
        # The largest 4:3 window in the photograph's centre, scaled to WIDTH x HEIGHT.
        width = min(photo.width, photo.height * WIDTH // HEIGHT)
        height = width * HEIGHT // WIDTH
        left, top = (photo.width - width) // 2, (photo.height - height) // 2
        window = photo.crop((left, top, left + width, top + height))
        image = np.asarray(window.resize((out_width, out_height), Image.BILINEAR)).astype(dtype)
        if layout == "FHWC":
            # Frames of a slow pan: the image shifted by a few pixels each frame.
            image = np.stack([np.roll(image, 3 * f, axis=1) for f in range(FRAMES)])
        images.append(np.ascontiguousarray(image.transpose(2, 0, 1)) if layout == "CHW" else image)
    return images


def make_lz4_blocks(path):
    """Save the LZ4 blocks of the uint8 images to ``path`` (.npz), for ``decoders.inflate``. The driver
    compresses them (lz4 is an ndd dependency, absent from the reference's virtualenv) and both workers load
    the same bytes."""
    import lz4.block
    import numpy as np

    blocks = [lz4.block.compress(image.tobytes(), store_size=False) for image in make_images()]
    np.savez(path, *[np.frombuffer(block, dtype=np.uint8) for block in blocks])


def make_inputs(kind="uint8", lz4_blocks=None):
    """The numpy inputs every operator draws on (the same in both workers); ``lz4_blocks`` is the file
    that make_lz4_blocks wrote."""
    import numpy as np
    from PIL import Image

    images = make_images(kind)
    jpegs = []
    for image in make_images():
        encoded = io.BytesIO()
        Image.fromarray(image).save(encoded, format="JPEG", quality=90)
        jpegs.append(np.frombuffer(encoded.getvalue(), dtype=np.uint8))
    rng = np.random.default_rng(0)
    boxes, labels = [], []
    for _ in range(BATCH_SIZE):
        lt = rng.uniform(0.0, 0.7, (NUM_BOXES, 2))
        wh = rng.uniform(0.05, 0.3, (NUM_BOXES, 2))
        boxes.append(np.concatenate([lt, lt + wh], axis=1).astype(np.float32))
        labels.append(rng.integers(1, 80, NUM_BOXES).astype(np.int32))
    # Anchors on a regular grid, ltrb: NUM_ANCHORS of them in 10 sizes.
    side = int(np.sqrt(NUM_ANCHORS // 10))
    centres = (np.stack(np.meshgrid(np.arange(side), np.arange(side)), -1).reshape(-1, 2) + 0.5) / side
    anchors = [
        np.concatenate([centres - size / 2, centres + size / 2], axis=1)
        for size in np.linspace(0.05, 0.5, NUM_ANCHORS // (side * side))
    ]
    anchors = np.clip(np.concatenate(anchors), 0.0, 1.0).astype(np.float32)
    pngs, npys = [], []
    for image in make_images():
        encoded = io.BytesIO()
        Image.fromarray(image).save(encoded, format="PNG", compress_level=1)
        pngs.append(np.frombuffer(encoded.getvalue(), dtype=np.uint8))
        encoded = io.BytesIO()
        np.save(encoded, image)
        npys.append(np.frombuffer(encoded.getvalue(), dtype=np.uint8))
    # The other formats of the image decoder, each in the way a dataset usually holds it.
    formats = {name: [] for name in FORMATS}
    for image in make_images():
        picture = Image.fromarray(image)
        gray = picture.convert("L")
        for name, (source, save) in FORMATS.items():
            encoded = io.BytesIO()
            {"rgb": picture, "gray": gray, "gray16": gray}[source].save(encoded, **save)
            if source == "gray16":  # 16-bit depth maps: the gray levels times 257
                encoded = io.BytesIO()
                Image.fromarray(np.asarray(gray).astype(np.uint16) * 257).save(encoded, **save)
            formats[name].append(np.frombuffer(encoded.getvalue(), dtype=np.uint8))
    uint8_images = make_images()
    # A Bayer mosaic (BGGR) of each photograph, and a label mask of 4 classes made from its red channel.
    bayer = []
    for image in uint8_images:
        mosaic = image[: HEIGHT // 2 * 2, :, 1].copy()  # even sizes, as the reference's debayer needs
        mosaic[0::2, 0::2] = image[0 : HEIGHT // 2 * 2 : 2, 0::2, 2]
        mosaic[1::2, 1::2] = image[1 : HEIGHT // 2 * 2 : 2, 1::2, 0]
        bayer.append(mosaic)
    label_masks = [(image[:, :, 0] // 64).astype(np.int32) for image in uint8_images]
    # 20 polygons of 5 vertices each per sample, half of them selected.
    polygons = [
        np.stack([np.arange(20), np.arange(20) * 5, np.arange(20) * 5 + 5], axis=1).astype(np.int32)
    ] * 16
    vertices = [rng.uniform(0, 100, (100, 2)).astype(np.float32) for _ in range(BATCH_SIZE)]
    mask_ids = [np.arange(0, 20, 2).astype(np.int32)] * BATCH_SIZE
    return {
        "images": images,
        "uint8_images": uint8_images,
        "pngs": pngs,
        "npys": npys,
        "formats": formats,
        "lz4_blocks": list(np.load(lz4_blocks).values()) if lz4_blocks else [],
        "bayer": bayer,
        "label_masks": label_masks,
        "polygons": polygons,
        "vertices": vertices,
        "mask_ids": mask_ids,
        "layout": IMAGE_KINDS[kind][2],
        "jpegs": jpegs,
        "boxes": boxes,
        "labels": labels,
        "anchors": anchors,
    }


def _decode_call(ndd, encoded):
    """A function of no arguments decoding the batch ``encoded`` with ndd.decoders.image."""
    return lambda: ndd.decoders.image(encoded)


def operator_calls(ndd, types, data):
    """Per benchmark name: a function of no arguments calling the operator on the batch."""
    import numpy as np

    images = ndd.batch(data["images"], layout=data["layout"])
    jpegs = ndd.batch(data["jpegs"])
    boxes = ndd.batch(data["boxes"])
    labels = ndd.batch(data["labels"])
    points = ndd.batch([b.reshape(-1, 2) for b in data["boxes"]])
    anchors = data["anchors"].reshape(-1).tolist()
    sharpen = ndd.batch([np.array(SHARPEN, dtype=np.float32)] * BATCH_SIZE)
    # The reference takes the affine matrix as 2x3 rows (a flat list of 6 fails there) and the perspective
    # one as an input (its 'matrix' argument fails on a flat list of 9).
    affine = [AFFINE[:3], AFFINE[3:]]
    perspective = ndd.batch([np.array(PERSPECTIVE, dtype=np.float32).reshape(3, 3)] * BATCH_SIZE)
    rng = ndd.random.RNG(seed=1)
    uint8_images = ndd.batch(data["uint8_images"], layout="HWC")
    pngs = ndd.batch(data["pngs"])
    npys = ndd.batch(data["npys"])
    lz4_blocks = ndd.batch(data["lz4_blocks"])
    bayer = ndd.batch(data["bayer"], layout="HW")
    label_masks = ndd.batch(data["label_masks"], layout="HW")
    polygons = ndd.batch(data["polygons"])
    vertices = ndd.batch(data["vertices"])
    mask_ids = ndd.batch(data["mask_ids"])
    image_shapes = ndd.batch([np.array(image.shape, dtype=np.int64) for image in data["uint8_images"]])
    channel_means = ndd.batch(
        [
            image.reshape(-1, image.shape[-1]).mean(axis=0).reshape(1, 1, -1).astype(np.float32)
            for image in data["images"]
        ]
    )
    # multi_paste: each output is a 2x2 mosaic of quarters of four images of the batch.
    half = [HEIGHT // 2, WIDTH // 2]
    paste_ids = ndd.batch(
        [np.array([(i + k) % BATCH_SIZE for k in range(4)], np.int32) for i in range(BATCH_SIZE)]
    )
    paste_shapes = ndd.batch([np.array([half] * 4, np.int32)] * BATCH_SIZE)
    paste_anchors = ndd.batch(
        [np.array([[0, 0], [0, half[1]], [half[0], 0], [half[0], half[1]]], np.int32)] * BATCH_SIZE
    )
    return {
        "resize_linear": lambda: ndd.resize(images, resize_shorter=256, interp_type=types.INTERP_LINEAR),
        "resize_cubic": lambda: ndd.resize(images, resize_shorter=256, interp_type=types.INTERP_CUBIC),
        "resize_lanczos3": lambda: ndd.resize(images, resize_shorter=256, interp_type=types.INTERP_LANCZOS3),
        "random_resized_crop": lambda: ndd.random_resized_crop(images, size=[224, 224], rng=rng),
        "crop": lambda: ndd.crop(images, crop=[224, 224]),
        "crop_mirror_normalize": lambda: ndd.crop_mirror_normalize(
            images, dtype=ndd.float32, output_layout="CHW", mean=MEAN, std=STD
        ),
        "flip": lambda: ndd.flip(images, horizontal=1),
        "rotate": lambda: ndd.rotate(images, angle=30.0, fill_value=0),
        "warp_affine": lambda: ndd.warp_affine(images, matrix=affine, fill_value=0),
        "warp_perspective": lambda: ndd.experimental.warp_perspective(images, perspective),
        "water": lambda: ndd.water(images),
        "sphere": lambda: ndd.sphere(images),
        "jitter": lambda: ndd.jitter(images, rng=rng),
        "brightness_contrast": lambda: ndd.brightness_contrast(images, brightness=1.2, contrast=0.8),
        "hsv": lambda: ndd.hsv(images, hue=30.0, saturation=1.2, value=0.9),
        "hue": lambda: ndd.hue(images, hue=30.0),
        "saturation": lambda: ndd.saturation(images, saturation=1.5),
        "color_twist": lambda: ndd.color_twist(
            images, hue=30.0, saturation=1.2, brightness=1.1, contrast=0.9
        ),
        "csc_rgb_to_gray": lambda: ndd.color_space_conversion(
            images, image_type=types.RGB, output_type=types.GRAY
        ),
        "csc_rgb_to_ycbcr": lambda: ndd.color_space_conversion(
            images, image_type=types.RGB, output_type=types.YCbCr
        ),
        "equalize": lambda: ndd.equalize(images),
        "clahe": lambda: ndd.clahe(images, tiles_x=8, tiles_y=8, clip_limit=2.0),
        "gaussian_blur": lambda: ndd.gaussian_blur(images, sigma=2.0),
        "laplacian": lambda: ndd.laplacian(images, window_size=3),
        "filter_3x3": lambda: ndd.filter(images, sharpen),
        "median_blur": lambda: ndd.experimental.median_blur(images, window_size=[3, 3]),
        "erase": lambda: ndd.erase(
            images, anchor=[100, 150, 250, 50], shape=[80, 120, 60, 100], axis_names="HW", fill_value=0
        ),
        "paste": lambda: ndd.paste(images, ratio=1.5, paste_x=0.25, paste_y=0.75, fill_value=[0, 0, 0]),
        "grid_mask": lambda: ndd.grid_mask(images, tile=64, ratio=0.4, angle=0.3),
        "normalize": lambda: ndd.normalize(images),
        "normalize_per_channel": lambda: ndd.normalize(images, axes=[0, 1]),
        "reductions.mean_per_channel": lambda: ndd.reductions.mean(images, axes=[0, 1]),
        "reductions.max_per_channel": lambda: ndd.reductions.max(images, axes=[0, 1]),
        "noise.gaussian": lambda: ndd.noise.gaussian(images, stddev=10.0, rng=rng),
        "noise.salt_and_pepper": lambda: ndd.noise.salt_and_pepper(images, prob=0.05, rng=rng),
        "noise.shot": lambda: ndd.noise.shot(images, factor=2.0, rng=rng),
        "jpeg_compression_distortion": lambda: ndd.jpeg_compression_distortion(images, quality=50),
        "decoders.image": lambda: ndd.decoders.image(jpegs),
        "decoders.image_crop": lambda: ndd.decoders.image_crop(jpegs, crop=(224, 224)),
        "decoders.image_random_crop": lambda: ndd.decoders.image_random_crop(jpegs, rng=rng),
        "bb_flip": lambda: ndd.bb_flip(boxes, ltrb=True, horizontal=1),
        "coord_flip": lambda: ndd.coord_flip(points, layout="xy", flip_x=1),
        "random_bbox_crop": lambda: ndd.random_bbox_crop(
            boxes, labels, thresholds=[0.1, 0.3, 0.5], scaling=[0.3, 1.0], aspect_ratio=[0.5, 2.0], rng=rng
        ),
        "box_encoder": lambda: ndd.box_encoder(boxes, labels, anchors=anchors, criteria=0.5),
        "resize_crop_mirror": lambda: ndd.resize_crop_mirror(
            images, resize_shorter=256, crop=[224, 224], mirror=1
        ),
        "tensor_resize": lambda: ndd.tensor_resize(images, sizes=[250, 333], axes=[0, 1]),
        "flip_vertical": lambda: ndd.flip(images, horizontal=0, vertical=1),
        "csc_ycbcr_to_rgb": lambda: ndd.color_space_conversion(
            images, image_type=types.YCbCr, output_type=types.RGB
        ),
        "debayer": lambda: ndd.debayer(bayer, blue_position=[0, 0]),
        "multi_paste": lambda: ndd.multi_paste(
            uint8_images, in_ids=paste_ids, shapes=paste_shapes, out_anchors=paste_anchors
        ),
        "lookup_table": lambda: ndd.lookup_table(
            images, keys=list(range(256)), values=[float(255 - v) for v in range(256)], dtype=ndd.uint8
        ),
        "slice": lambda: ndd.slice(images, rel_start=[0.1, 0.2], rel_shape=[0.6, 0.5]),
        "pad": lambda: ndd.pad(images, shape=[512, 512], axes=[0, 1], fill_value=0),
        "transpose": lambda: ndd.transpose(images, perm=[2, 0, 1]),
        "cast_float32": lambda: ndd.cast(images, dtype=ndd.float32),
        "cat": lambda: ndd.cat(images, images, axis=0),
        "stack": lambda: ndd.stack(images, images, axis=0),
        "reductions.sum": lambda: ndd.reductions.sum(images, axes=[0, 1]),
        "reductions.std_dev": lambda: ndd.reductions.std_dev(
            images, channel_means, axes=[0, 1], keep_dims=True
        ),
        "sequence_rearrange": lambda: ndd.sequence_rearrange(images, new_order=[7, 5, 3, 1, 0, 2, 4, 6]),
        "decoders.image_slice": lambda: ndd.decoders.image_slice(
            jpegs, rel_start=[0.1, 0.2], rel_shape=[0.6, 0.5]
        ),
        "decoders.image_png": lambda: ndd.decoders.image(pngs),
        **{
            f"decoders.image_{name}": _decode_call(ndd, ndd.batch(files))
            for name, files in data["formats"].items()
        },
        "decoders.image_to_gray": lambda: ndd.decoders.image(jpegs, output_type=types.GRAY),
        "decoders.image_to_ycbcr": lambda: ndd.decoders.image(jpegs, output_type=types.YCbCr),
        "peek_image_shape": lambda: ndd.peek_image_shape(jpegs),
        "decoders.numpy": lambda: ndd.decoders.numpy(npys),
        "decoders.inflate": lambda: ndd.decoders.inflate(lz4_blocks, shape=[HEIGHT, WIDTH, 3]),
        "bbox_paste": lambda: ndd.bbox_paste(boxes, ltrb=True, ratio=1.5, paste_x=0.25, paste_y=0.75),
        "bbox_rotate": lambda: ndd.bbox_rotate(boxes, angle=30.0, input_shape=[HEIGHT, WIDTH]),
        "coord_transform": lambda: ndd.coord_transform(points, M=[1.0, 0.5, 0.2, 1.0], T=[1.0, 2.0]),
        "one_hot": lambda: ndd.one_hot(labels, num_classes=80),
        "random_crop_generator": lambda: ndd.random_crop_generator(image_shapes, rng=rng),
        "roi_random_crop": lambda: ndd.roi_random_crop(
            crop_shape=[100, 100],
            roi_start=[50, 50],
            roi_end=[150, 150],
            in_shape=[HEIGHT, WIDTH],
            batch_size=BATCH_SIZE,
            rng=rng,
        ),
        "segmentation.random_mask_pixel": lambda: ndd.segmentation.random_mask_pixel(
            label_masks, value=2, rng=rng
        ),
        "segmentation.random_object_bbox": lambda: ndd.segmentation.random_object_bbox(label_masks, rng=rng),
        "segmentation.select_masks": lambda: ndd.segmentation.select_masks(mask_ids, polygons, vertices),
    }


def _evaluate(result):
    """Evaluate every output; return the shape of the first output's first sample."""
    outputs = result if isinstance(result, (tuple, list)) else [result]
    for output in outputs:
        output.evaluate()
    return list(outputs[0].shape[0])


def _worker(impl, kind, lz4_blocks):
    """Serve timing requests on stdin: one JSON line in, one JSON line out."""
    if impl == "ndd":
        import ndd
        from ndd import types
    else:
        import nvidia.dali.experimental.dynamic as ndd
        from nvidia.dali import types

    ndd.set_num_threads(1)
    calls = operator_calls(ndd, types, make_inputs(kind, lz4_blocks))
    assert list(calls) == OPS, "OPS and operator_calls name different operators"
    errors, shapes = {}, {}
    with ndd.EvalMode.sync_cpu:
        for name, call in list(calls.items()):
            try:
                shapes[name] = _evaluate(call())  # warm-up: operator instances, lazy imports, caches
            except Exception as error:  # reported in the table instead of stopping the other operators
                del calls[name]
                message = " ".join(str(error).split())
                errors[name] = f"{type(error).__name__}: {message[:100]}"
    print(json.dumps({"ready": impl, "ops": sorted(calls), "errors": errors, "shapes": shapes}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        call, calls_done = calls[req["op"]], 0
        with ndd.EvalMode.sync_cpu:
            start = time.process_time()
            while True:
                _evaluate(call())
                calls_done += 1
                elapsed = time.process_time() - start
                if elapsed >= req["min_seconds"]:
                    break
        print(json.dumps({"ms": elapsed * 1e3 / (calls_done * BATCH_SIZE)}), flush=True)


class Worker(WorkerProcess):
    def __init__(self, python, impl, kind, lz4_blocks):
        super().__init__(python, __file__, impl, "--images", kind, "--lz4-blocks", lz4_blocks)
        self.ops, self.errors, self.shapes = (
            set(self.ready["ops"]),
            self.ready["errors"],
            self.ready["shapes"],
        )

    def time(self, op, min_seconds):
        """CPU milliseconds per image of ``op``."""
        return self.ask(op=op, min_seconds=min_seconds)["ms"]


def _cell(times):
    return f"{statistics.median(times):7.3f} [{min(times):.3f}-{max(times):.3f}]"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", choices=["ndd", "ref"], help=argparse.SUPPRESS)
    parser.add_argument("--lz4-blocks", help=argparse.SUPPRESS)
    parser.add_argument(
        "--reference-python",
        default=os.path.expanduser("~/dali-ref/bin/python"),
        help="interpreter of the virtualenv where nvidia-dali is installed",
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--images", choices=sorted(IMAGE_KINDS), default="uint8", help="the image data of the image operators"
    )
    parser.add_argument("--ops", help=f"comma-separated operators to time (default: all of {', '.join(OPS)})")
    parser.add_argument(
        "--min-seconds", type=float, default=0.2, help="CPU seconds of calls per measurement, at least"
    )
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker, args.images, args.lz4_blocks)
        return

    ops = OPS
    if args.ops:
        ops = [name.strip() for name in args.ops.split(",") if name.strip()]
        unknown = [name for name in ops if name not in OPS]
        if unknown:
            sys.exit(f"unknown operator(s) {', '.join(unknown)}; choose from {', '.join(OPS)}")
    if not os.path.exists(args.reference_python):
        sys.exit(
            f"reference interpreter {args.reference_python} not found; install the reference in its own "
            "virtualenv: python3 -m venv ~/dali-ref && ~/dali-ref/bin/pip install nvidia-dali-cuda120==2.4.0 pillow"
        )
    lz4_blocks = os.path.join(tempfile.mkdtemp(prefix="ndd-bench-ops-"), "lz4_blocks.npz")
    make_lz4_blocks(lz4_blocks)
    workers = {
        "ndd": Worker(sys.executable, "ndd", args.images, lz4_blocks),
        "ref": Worker(args.reference_python, "ref", args.images, lz4_blocks),
    }
    times = {op: {impl: [] for impl in workers} for op in ops}
    for _ in range(args.repeats):
        for op in ops:
            for impl, worker in workers.items():
                if op in worker.ops and all(op in w.ops for w in workers.values()):
                    times[op][impl].append(worker.time(op, args.min_seconds))
    for worker in workers.values():
        worker.close()
    shutil.rmtree(os.path.dirname(lz4_blocks))

    print(
        f"CPU ms per sample, batch of {BATCH_SIZE} {IMAGE_KINDS[args.images][0]} images, 1 thread, sync_cpu: "
        f"median [min-max] of {args.repeats} interleaved repeats.\n"
        "ndd/ref is the speed ratio (reference ms / ndd ms): above 1 ndd is faster; '<-- slower' marks ops "
        "where ndd is slower."
    )
    header = f"{'operator':<28} {'ndd ms':>24} {'reference ms':>24} {'ndd/ref':>8}"
    print(header)
    print("-" * len(header))
    rows = []
    for op in ops:
        if times[op]["ndd"] and times[op]["ref"]:
            ratio = statistics.median(times[op]["ref"]) / statistics.median(times[op]["ndd"])
            rows.append((ratio, op))
    for ratio, op in sorted(rows):
        mark = "  <-- slower" if ratio < 1.0 else ""
        print(f"{op:<28} {_cell(times[op]['ndd']):>24} {_cell(times[op]['ref']):>24} {ratio:8.2f}{mark}")
    for op in ops:
        shapes = [worker.shapes.get(op) for worker in workers.values()]
        if None not in shapes and shapes[0] != shapes[1]:
            print(f"note: {op} gives differently shaped outputs: ndd {shapes[0]}, reference {shapes[1]}")
    skipped = [op for op in ops if not (times[op]["ndd"] and times[op]["ref"])]
    if skipped:
        print("\nnot timed:")
        for op in skipped:
            for impl, name in (("ndd", "ndd"), ("ref", "reference")):
                error = workers[impl].errors.get(op)
                if error:
                    print(f"  {op:<28} {name} fails on the CPU: {error}")
    if rows:
        ratios = [ratio for ratio, _ in rows]
        print(
            f"\n{len(rows)} operators: median ratio {statistics.median(ratios):.2f}, "
            f"{sum(ratio < 1.0 for ratio in ratios)} where ndd is slower"
        )


if __name__ == "__main__":
    main()
