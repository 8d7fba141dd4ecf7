"""One short example per operator, run when the docs are built and by tests/test_docs.py.

Each example starts from the names that ``SETUP`` defines (a fresh copy for each), runs in a
scratch working directory, and prints something worth seeing; the printed output is shown
under the example in the API reference. For image operators, ``PICTURES`` gives an expression
evaluated after the example (in its namespace): the page shows its images as a picture.
"""

SETUP = """
import pathlib

import numpy as np

import ndd

samples = pathlib.Path(ndd.__file__).parent / "_sample_data"
png_files = sorted(str(p) for p in (samples / "images").glob("*.png"))
encoded = ndd.io.file.read(ndd.batch([np.frombuffer(f.encode(), np.uint8) for f in png_files]))
images = ndd.decoders.image(encoded)  # a Batch of 4 RGB images (HWC, uint8), 32 to 64 pixels
image = images.select(0)  # one of them: a Tensor of shape (40, 56, 3)
matrix = ndd.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
# normalized ltrb boxes with their class labels, one set per sample
boxes = ndd.batch([np.array([[0.1, 0.1, 0.5, 0.6], [0.4, 0.3, 0.9, 0.8]], np.float32)] * 4)
labels = ndd.batch([np.array([1, 2], np.int32)] * 4)
rng = ndd.random.RNG(seed=42)
"""

EXAMPLES = {
    # --- type and shape ---
    "ndd.cast": "print(ndd.cast(matrix, dtype=ndd.uint8).dtype)",
    "ndd.cast_like": "print(ndd.cast_like(matrix, image).dtype)",
    "ndd.copy": "copied = ndd.copy(image)\nprint(copied.shape, copied.layout)",
    "ndd.reshape": "print(ndd.reshape(matrix, shape=[2, 6]).shape)",
    "ndd.reinterpret": "print(ndd.reinterpret(matrix, dtype=ndd.uint8, shape=[3, 16]).shape)",
    "ndd.transpose": "chw = ndd.transpose(images, perm=[2, 0, 1])\nprint(chw.layout, chw.shape[0])",
    "ndd.squeeze": "print(ndd.squeeze(ndd.tensor(np.zeros((1, 3, 1))), axes=[0, 2]).shape)",
    "ndd.expand_dims": 'print(ndd.expand_dims(image, axes=[0], new_axis_names="F").layout)',
    # --- slicing, padding, joining ---
    "ndd.slice": "print(ndd.slice(image, start=[10, 5], shape=[20, 30], axes=[0, 1]).shape)",
    "ndd.pad": "print(ndd.pad(matrix, shape=[4, 6], fill_value=-1))",
    "ndd.cat": "print(ndd.cat(matrix, matrix, axis=1).shape)",
    "ndd.stack": "print(ndd.stack(matrix, matrix, axis=0).shape)",
    # --- creation ---
    "ndd.full": "print(ndd.full(np.float32(0.5), shape=[2, 3]))",
    "ndd.full_like": "print(ndd.full_like(matrix, np.float32(7)).shape)",
    "ndd.zeros": "print(ndd.zeros(shape=[2, 2], dtype=ndd.uint8))",
    "ndd.ones": "print(ndd.ones(shape=[3], dtype=ndd.float32))",
    "ndd.zeros_like": "print(ndd.zeros_like(image).shape)",
    "ndd.ones_like": "print(ndd.ones_like(matrix, dtype=ndd.int32).dtype)",
    # --- lookups, sequences, properties, batches ---
    "ndd.one_hot": "print(ndd.one_hot(ndd.tensor(np.array([0, 2], np.int32)), num_classes=3))",
    "ndd.lookup_table": (
        "classes = ndd.tensor(np.array([3, 7, 5], np.int32))\n"
        "print(ndd.lookup_table(classes, keys=[3, 5, 7], values=[0, 1, 2], dtype=ndd.int32))"
    ),
    "ndd.element_extract": (
        "frames = ndd.stack(image, image, image)  # a sequence of 3 frames\n"
        "first, last = ndd.element_extract(frames, element_map=[0, 2])\n"
        "print(first.shape, last.shape)"
    ),
    "ndd.get_property": (
        'layout = ndd.get_property(images, key="layout").select(0)\nprint(bytes(np.asarray(layout)).decode())'
    ),
    "ndd.permute_batch": "reordered = ndd.permute_batch(images, indices=[3, 2, 1, 0])\nprint(reordered.shape)",
    "ndd.batch_permutation": "print(np.asarray(ndd.batch_permutation(batch_size=4, rng=rng).torch()).tolist())",
    # --- reductions ---
    "ndd.reductions.max": "print(ndd.reductions.max(matrix, axes=[1]))",
    "ndd.reductions.mean": 'print(ndd.reductions.mean(images, axis_names="HW").select(0))',
    "ndd.reductions.mean_square": "print(ndd.reductions.mean_square(matrix))",
    "ndd.reductions.min": "print(ndd.reductions.min(matrix, axes=[0]))",
    "ndd.reductions.rms": "print(ndd.reductions.rms(matrix))",
    "ndd.reductions.std_dev": (
        "mean = ndd.reductions.mean(matrix, axes=[1])\nprint(ndd.reductions.std_dev(matrix, mean, axes=[1]))"
    ),
    "ndd.reductions.sum": "print(ndd.reductions.sum(matrix, axes=[0]))",
    "ndd.reductions.variance": (
        "mean = ndd.reductions.mean(matrix, axes=[1])\nprint(ndd.reductions.variance(matrix, mean, axes=[1]))"
    ),
    # --- random ---
    "ndd.random.uniform": "print(ndd.random.uniform(range=[0, 1], shape=[3], rng=rng))",
    "ndd.random.normal": "print(ndd.random.normal(mean=10, stddev=2, shape=[3], rng=rng))",
    "ndd.random.coin_flip": "print(ndd.random.coin_flip(batch_size=4, probability=0.5, rng=rng))",
    "ndd.random.beta": "print(ndd.random.beta(alpha=2.0, beta=5.0, shape=[3], rng=rng))",
    "ndd.random.choice": "print(ndd.random.choice(10, shape=[4], rng=rng))",
    "ndd.random_crop_generator": (
        "windows = ndd.random_crop_generator(ndd.tensor(np.array([480, 640], np.int64)), rng=rng)\n"
        "print(windows)"
    ),
    # --- decoding and reading ---
    "ndd.decoders.image": "gray = ndd.decoders.image(encoded, output_type=ndd.types.GRAY)\nprint(gray.shape)",
    "ndd.decoders.image_crop": "print(ndd.decoders.image_crop(encoded, crop=[16, 16]).shape)",
    "ndd.decoders.image_random_crop": "print(ndd.decoders.image_random_crop(encoded, rng=rng).shape)",
    "ndd.decoders.image_slice": (
        "print(ndd.decoders.image_slice(encoded, rel_start=[0.25, 0.25], rel_shape=[0.5, 0.5]).shape)"
    ),
    "ndd.experimental.decoders.image": "print(ndd.experimental.decoders.image(encoded).shape)",
    "ndd.experimental.decoders.image_crop": "print(ndd.experimental.decoders.image_crop(encoded, crop=[8, 8]).shape)",
    "ndd.experimental.decoders.image_random_crop": (
        "print(ndd.experimental.decoders.image_random_crop(encoded, rng=rng).layout)"
    ),
    "ndd.experimental.decoders.image_slice": (
        "print(ndd.experimental.decoders.image_slice(encoded, rel_start=[0, 0], rel_shape=[0.5, 1]).shape)"
    ),
    "ndd.peek_image_shape": "print(ndd.peek_image_shape(encoded))",
    "ndd.experimental.peek_image_shape": "print(ndd.experimental.peek_image_shape(encoded).select(0))",
    "ndd.io.file.read": (
        "name = ndd.tensor(np.frombuffer(png_files[0].encode(), np.uint8))\n"
        "print(ndd.io.file.read(name).shape)"
    ),
    "ndd.decoders.numpy": (
        "import io\n"
        "buffer = io.BytesIO()\n"
        "np.save(buffer, np.eye(3, dtype=np.float32))\n"
        "npy = ndd.tensor(np.frombuffer(buffer.getvalue(), np.uint8))\n"
        "print(ndd.decoders.numpy(npy))"
    ),
    "ndd.decoders.inflate": (
        "import lz4.block\n"
        "values = np.arange(12, dtype=np.int16)\n"
        "# a raw LZ4 block, without the size header\n"
        "packed = lz4.block.compress(values.tobytes(), store_size=False)\n"
        "block = ndd.tensor(np.frombuffer(packed, np.uint8))\n"
        "print(ndd.decoders.inflate(block, shape=[3, 4], dtype=ndd.int16))"
    ),
    "ndd.decoders.audio": (
        "import io\n"
        "import soundfile\n"
        "t = np.arange(8000) / 8000\n"
        "stereo = np.stack([np.sin(2 * np.pi * 440 * t), np.sin(2 * np.pi * 660 * t)], axis=1) * 0.5\n"
        "buffer = io.BytesIO()\n"
        'soundfile.write(buffer, stereo, 8000, format="WAV", subtype="PCM_16")  # one second at 8 kHz\n'
        "wav = ndd.tensor(np.frombuffer(buffer.getvalue(), np.uint8))\n"
        "audio, rate = ndd.decoders.audio(wav, sample_rate=16000, downmix=True)\n"
        "print(audio.shape, audio.dtype, float(rate.cpu()))"
    ),
    "ndd.decoders.video": (
        "import io\n"
        "import av\n"
        "buffer = io.BytesIO()\n"
        'with av.open(buffer, "w", format="webm") as out:  # 10 frames of VP9, 32x24, growing brighter\n'
        '    stream = out.add_stream("libvpx-vp9", rate=25)\n'
        "    stream.width, stream.height = 32, 24\n"
        "    for i in range(10):\n"
        "        rgb = np.full((24, 32, 3), 20 * i, np.uint8)\n"
        '        out.mux(stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")))\n'
        "    out.mux(stream.encode())\n"
        "video = ndd.tensor(np.frombuffer(buffer.getvalue(), np.uint8))\n"
        'clip = ndd.decoders.video(video, start_frame=6, sequence_length=6, stride=2, pad_mode="edge")\n'
        "print(clip.shape, clip.layout, np.asarray(clip)[:, 0, 0, 0])  # frames 6, 8, then 9 repeated"
    ),
    # --- audio ---
    "ndd.audio_resample": (
        "sine = ndd.tensor(np.sin(2 * np.pi * np.arange(441) / 44.1).astype(np.float32))  # 10 ms, 1 kHz\n"
        "resampled = ndd.audio_resample(sine, in_rate=44100, out_rate=16000)\n"
        "print(resampled.shape, np.round(np.asarray(resampled)[:5], 3))"
    ),
    # --- signal processing ---
    "ndd.preemphasis_filter": (
        "signal = ndd.tensor(np.sin(np.arange(8) / 2).astype(np.float32))\n"
        "print(np.round(np.asarray(ndd.preemphasis_filter(signal, preemph_coeff=0.9)), 3))"
    ),
    "ndd.power_spectrum": (
        "tone = ndd.tensor(np.sin(2 * np.pi * 4 * np.arange(32) / 32).astype(np.float32))  # 4 cycles\n"
        "spectrum = np.asarray(ndd.power_spectrum(tone))\n"
        "print(spectrum.shape, int(spectrum.argmax()))  # 17 bins, the peak in bin 4"
    ),
    "ndd.spectrogram": (
        "t = np.arange(16000) / 16000\n"
        "tone = ndd.tensor(np.sin(2 * np.pi * 1000 * t).astype(np.float32))  # 1 s of 1 kHz at 16 kHz\n"
        "spec = ndd.spectrogram(tone, nfft=512, window_length=400, window_step=160)\n"
        "print(spec.shape, spec.layout, np.asarray(spec)[:, 50].argmax())  # bin 1000 / (16000 / 512) = 32"
    ),
    "ndd.mel_filter_bank": (
        "t = np.arange(16000) / 16000\n"
        "tone = ndd.tensor(np.sin(2 * np.pi * 1000 * t).astype(np.float32))\n"
        "spec = ndd.spectrogram(tone, nfft=512, window_length=400, window_step=160)\n"
        "mel = ndd.mel_filter_bank(spec, sample_rate=16000, nfilter=40)\n"
        "print(mel.shape, np.asarray(mel)[:, 50].argmax())  # the filter around 1 kHz"
    ),
    "ndd.mfcc": (
        "t = np.arange(16000) / 16000\n"
        "tone = ndd.tensor(np.sin(2 * np.pi * 1000 * t).astype(np.float32))\n"
        "spec = ndd.spectrogram(tone, nfft=512, window_length=400, window_step=160)\n"
        "mel_db = ndd.to_decibels(ndd.mel_filter_bank(spec, sample_rate=16000, nfilter=40), cutoff_db=-80)\n"
        "coefficients = ndd.mfcc(mel_db, n_mfcc=13, normalize=True)\n"
        "print(coefficients.shape, np.round(np.asarray(coefficients)[:3, 50], 2))"
    ),
    "ndd.to_decibels": (
        "power = ndd.tensor(np.array([1.0, 0.1, 0.01, 0.0], np.float32))\n"
        "print(ndd.to_decibels(power, cutoff_db=-80))  # relative to the maximum"
    ),
    "ndd.nonsilent_region": (
        "signal = np.zeros(16000, np.float32)\n"
        "signal[4000:9000] = np.sin(2 * np.pi * 440 * np.arange(5000) / 16000)  # a tone between silences\n"
        "begin, length = ndd.nonsilent_region(ndd.tensor(signal), window_length=256, reset_interval=-1)\n"
        "print(int(begin.cpu()), int(length.cpu()))"
    ),
    # --- resizing ---
    "ndd.resize": "print(ndd.resize(images, resize_shorter=24).shape)",
    "ndd.experimental.resize": "print(ndd.experimental.resize(image, size=[20, 28]).shape)",
    "ndd.random_resized_crop": "print(ndd.random_resized_crop(images, size=[32, 32], rng=rng).shape)",
    "ndd.resize_crop_mirror": "print(ndd.resize_crop_mirror(images, resize_shorter=32, crop=[28, 28], mirror=1).shape)",
    "ndd.tensor_resize": "print(ndd.tensor_resize(matrix, sizes=[6, 8]).shape)",
    # --- cropping ---
    "ndd.crop": "print(ndd.crop(images, crop=[24, 24], crop_pos_x=0.0, crop_pos_y=1.0).shape)",
    "ndd.crop_mirror_normalize": (
        "normalized = ndd.crop_mirror_normalize(\n"
        '    images, crop=[24, 24], mean=[127.5] * 3, std=[127.5] * 3, mirror=1, output_layout="CHW"\n'
        ")\n"
        "print(normalized.shape, normalized.dtype, normalized.layout)"
    ),
    "ndd.flip": "flipped = ndd.flip(image, horizontal=1)\nprint(np.array_equal(np.asarray(flipped), np.asarray(image)[:, ::-1]))",
    # --- composition ---
    "ndd.erase": (
        "erased = ndd.erase(image, anchor=[10, 10], shape=[8, 8], fill_value=[0])\n"
        "print(np.asarray(erased)[10:18, 10:18].max())"
    ),
    "ndd.paste": "print(ndd.paste(image, ratio=2.0, fill_value=[0, 0, 0]).shape)",
    "ndd.grid_mask": "masked = ndd.grid_mask(image, tile=16, ratio=0.5)\nprint(int((np.asarray(masked) == 0).mean() * 100), '% masked')",
    "ndd.sequence_rearrange": (
        "frames = ndd.stack(image, ndd.flip(image), axis=0)\n"
        "print(ndd.sequence_rearrange(ndd.per_frame(frames), new_order=[1, 0, 1]).shape)"
    ),
    "ndd.per_frame": "angles = ndd.per_frame(ndd.tensor(np.array([0.0, 90.0], np.float32)))\nprint(angles.layout)",
    "ndd.multi_paste": (
        "mosaic = ndd.multi_paste(\n"
        "    images, in_ids=[0, 1], output_size=[64, 64],\n"
        "    out_anchors=[[0, 0], [32, 32]], shapes=[[32, 32], [32, 32]],\n"
        ")\n"
        "print(mosaic.shape)"
    ),
    # --- filters ---
    "ndd.gaussian_blur": "print(ndd.gaussian_blur(images, sigma=1.5).shape)",
    "ndd.laplacian": "edges = ndd.laplacian(image, window_size=3, dtype=ndd.float32)\nprint(edges.dtype, edges.shape)",
    "ndd.filter": (
        "box = ndd.tensor(np.full((3, 3), 1 / 9, np.float32))\n"
        "print(ndd.filter(image, box, dtype=ndd.float32).shape)"
    ),
    "ndd.experimental.median_blur": "print(ndd.experimental.median_blur(image, window_size=[5, 5]).shape)",
    "ndd.experimental.dilate": "print(ndd.experimental.dilate(image, mask_size=[3, 3]).shape)",
    "ndd.experimental.erode": "print(ndd.experimental.erode(image, iterations=2).shape)",
    # --- boxes ---
    "ndd.bb_flip": "print(ndd.bb_flip(boxes, ltrb=True, horizontal=1).select(0))",
    "ndd.bbox_paste": "print(ndd.bbox_paste(boxes, ltrb=True, ratio=2.0).select(0))",
    "ndd.bbox_rotate": (
        "shapes = ndd.peek_image_shape(encoded)\n"
        "rotated = ndd.bbox_rotate(boxes, angle=90.0, input_shape=ndd.slice(shapes, start=[0], shape=[2], axes=[0]))\n"
        "print(rotated.select(0))"
    ),
    "ndd.box_encoder": (
        "anchors = [0.0, 0.0, 0.5, 0.5, 0.5, 0.5, 1.0, 1.0, 0.25, 0.25, 0.75, 0.75]  # 3 ltrb anchors\n"
        "encoded_boxes, anchor_labels = ndd.box_encoder(boxes, labels, anchors=anchors)\n"
        "print(anchor_labels.select(0))"
    ),
    "ndd.coord_flip": (
        "points = ndd.tensor(np.array([[0.2, 0.3], [0.9, 0.5]], np.float32))\n"
        'print(ndd.coord_flip(points, layout="xy", flip_x=1))'
    ),
    # --- segmentation ---
    "ndd.segmentation.random_mask_pixel": (
        "mask = np.zeros((8, 8), np.uint8)\nmask[2:4, 5:7] = 1\n"
        "print(ndd.segmentation.random_mask_pixel(ndd.tensor(mask), foreground=1, rng=rng))"
    ),
    "ndd.segmentation.random_object_bbox": (
        "mask = np.zeros((8, 8), np.int32)\nmask[1:3, 2:6] = 1\n"
        "anchor, shape = ndd.segmentation.random_object_bbox(ndd.tensor(mask), rng=rng)\n"
        "print(np.asarray(anchor), np.asarray(shape))"
    ),
    "ndd.segmentation.select_masks": (
        "polygons = ndd.tensor(np.array([[0, 0, 3], [1, 3, 6]], np.int32))  # mask id, first, end vertex\n"
        "vertices = ndd.tensor(np.arange(12, dtype=np.float32).reshape(6, 2))\n"
        "kept_polygons, kept_vertices = ndd.segmentation.select_masks(\n"
        "    ndd.tensor(np.array([1], np.int32)), polygons, vertices, reindex_masks=True\n"
        ")\n"
        "print(np.asarray(kept_polygons), np.asarray(kept_vertices).shape)"
    ),
    # --- random crops ---
    "ndd.random_bbox_crop": (
        "anchor, shape, crop_boxes, crop_labels = ndd.random_bbox_crop(\n"
        '    boxes, labels, bbox_layout="xyXY", scaling=[0.3, 1.0], thresholds=[0.1, 0.5], rng=rng\n'
        ")\n"
        "print(anchor.select(0), crop_boxes.shape)"
    ),
    "ndd.roi_random_crop": (
        "start = ndd.roi_random_crop(\n"
        "    crop_shape=[16, 16], roi_start=[10, 10], roi_shape=[8, 8], in_shape=[64, 64], rng=rng\n"
        ")\n"
        "print(start)"
    ),
    # --- colour ---
    "ndd.brightness": "print(np.asarray(ndd.brightness(image, brightness=0.5)).mean() < np.asarray(image).mean())",
    "ndd.brightness_contrast": "print(ndd.brightness_contrast(images, brightness=1.2, contrast=0.8).dtype)",
    "ndd.color_space_conversion": (
        "gray = ndd.color_space_conversion(images, image_type=ndd.types.RGB, output_type=ndd.types.GRAY)\n"
        "print(gray.shape)"
    ),
    "ndd.color_twist": "print(ndd.color_twist(images, hue=30.0, saturation=1.5).shape)",
    "ndd.contrast": "print(ndd.contrast(image, contrast=2.0).dtype)",
    "ndd.hsv": "print(ndd.hsv(images, hue=45.0, saturation=0.5, value=1.1).shape)",
    "ndd.hue": "print(ndd.hue(image, hue=90.0).shape)",
    "ndd.saturation": "desaturated = ndd.saturation(image, saturation=0.0)\nprint(np.ptp(np.asarray(desaturated), axis=2).max())",
    "ndd.equalize": "print(ndd.equalize(images).dtype)",
    "ndd.jpeg_compression_distortion": "print(ndd.jpeg_compression_distortion(images, quality=10).shape)",
    "ndd.clahe": "print(ndd.clahe(images, tiles_x=2, tiles_y=2, clip_limit=2.0).shape)",
    "ndd.normalize": (
        "normalized = ndd.normalize(matrix, axes=[1])\nprint(np.round(np.asarray(normalized), 3))"
    ),
    # --- noise ---
    "ndd.noise.gaussian": "print(ndd.noise.gaussian(images, stddev=10.0, rng=rng).dtype)",
    "ndd.noise.salt_and_pepper": "print(ndd.noise.salt_and_pepper(image, prob=0.1, rng=rng).shape)",
    "ndd.noise.shot": "print(ndd.noise.shot(images, factor=4.0, rng=rng).dtype)",
    # --- affine transforms ---
    "ndd.transforms.combine": (
        "moved = ndd.transforms.translation(offset=[10, 0])\n"
        "doubled = ndd.transforms.scale(scale=[2, 2])\n"
        "print(ndd.transforms.combine(moved, doubled))"
    ),
    "ndd.transforms.crop": "print(ndd.transforms.crop(from_start=[0, 0], from_end=[1, 1], to_start=[0, 0], to_end=[640, 480]))",
    "ndd.transforms.rotation": "print(np.round(np.asarray(ndd.transforms.rotation(angle=90.0)), 6) + 0.0)",
    "ndd.transforms.scale": "print(ndd.transforms.scale(scale=[2, 3], center=[1, 1]))",
    "ndd.transforms.shear": "print(ndd.transforms.shear(shear=[0.5, 0.0]))",
    "ndd.transforms.translation": "print(ndd.transforms.translation(offset=[3, -1]))",
    "ndd.coord_transform": (
        "points = ndd.tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))\n"
        "print(ndd.coord_transform(points, M=[2, 0, 0, 2], T=[1, 1]))"
    ),
    # --- warps ---
    "ndd.jitter": "print(ndd.jitter(image, nDegree=3, rng=rng).shape)",
    "ndd.rotate": "print(ndd.rotate(images, angle=30.0, fill_value=0).shape)",
    "ndd.sphere": "print(ndd.sphere(image).shape)",
    "ndd.warp_affine": (
        "shift = ndd.transforms.translation(offset=[5, 5])\n"
        "print(ndd.warp_affine(image, matrix=np.asarray(shift).ravel().tolist(), fill_value=0).shape)"
    ),
    "ndd.experimental.warp_perspective": (
        "homography = [1.0, 0.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.001, 1.0]\n"
        "print(ndd.experimental.warp_perspective(image, matrix=homography).shape)"
    ),
    "ndd.water": "print(ndd.water(image, ampl_x=3.0, ampl_y=3.0).shape)",
    "ndd.experimental.remap": (
        "ys, xs = np.mgrid[0:40, 0:56].astype(np.float32)\n"
        "mirrored = ndd.experimental.remap(image, ndd.tensor(55.5 - xs), ndd.tensor(ys + 0.5))\n"
        "print(mirrored.shape)"
    ),
    # --- debugging and demosaicing ---
    "ndd.dump_image": (
        "import os, tempfile\n"
        "here = os.getcwd()\n"
        "os.chdir(tempfile.mkdtemp())  # dump_image writes into the working directory\n"
        "try:\n"
        '    passed = ndd.dump_image(image, suffix="_debug").evaluate()\n'
        "    print(passed.shape, sorted(os.listdir('.')))\n"
        "finally:\n"
        "    os.chdir(here)"
    ),
    "ndd.debayer": (
        "bayer = ndd.tensor(np.random.default_rng(0).integers(0, 255, (8, 8), dtype=np.uint8))\n"
        "print(ndd.debayer(bayer, blue_position=[0, 0]).shape)"
    ),
    "ndd.optical_flow": (
        "photo = np.asarray(image)\n"
        "# frame 1 shows at each pixel what frame 0 shows 3 to the right and 2 below\n"
        'frames = ndd.tensor(np.stack([photo[:32, :48], photo[2:34, 3:51]]), layout="FHWC")\n'
        "flow = ndd.optical_flow(frames)  # one (x, y) vector per 4x4 block\n"
        "print(flow.shape, np.median(np.asarray(flow), axis=(0, 1, 2)).round(1))"
    ),
}

# Pictures of image results: an expression evaluated after the example, drawn with
# ndd.display.image_grid under it (the images of the setup are 32 to 64 pixels large).
PICTURES = {
    "ndd.decoders.image": "images",
    "ndd.decoders.image_crop": "ndd.decoders.image_crop(encoded, crop=[16, 16])",
    "ndd.decoders.image_slice": "ndd.decoders.image_slice(encoded, rel_start=[0.25, 0.25], rel_shape=[0.5, 0.5])",
    "ndd.resize": "ndd.resize(images, resize_shorter=24)",
    "ndd.random_resized_crop": "ndd.random_resized_crop(images, size=[32, 32], rng=rng)",
    "ndd.resize_crop_mirror": "ndd.resize_crop_mirror(images, resize_shorter=32, crop=[28, 28], mirror=1)",
    "ndd.crop": "ndd.crop(images, crop=[24, 24], crop_pos_x=0.0, crop_pos_y=1.0)",
    "ndd.crop_mirror_normalize": "normalized",
    "ndd.flip": "ndd.flip(images, horizontal=1)",
    "ndd.erase": "erased",
    "ndd.paste": "ndd.paste(images, ratio=2.0, fill_value=[0, 0, 0])",
    "ndd.grid_mask": "ndd.grid_mask(images, tile=16, ratio=0.5)",
    "ndd.multi_paste": "mosaic",
    "ndd.gaussian_blur": "ndd.gaussian_blur(images, sigma=1.5)",
    "ndd.experimental.median_blur": "ndd.experimental.median_blur(images, window_size=[5, 5])",
    "ndd.experimental.dilate": "ndd.experimental.dilate(images, mask_size=[3, 3])",
    "ndd.experimental.erode": "ndd.experimental.erode(images, iterations=2)",
    "ndd.brightness": "ndd.brightness(images, brightness=0.5)",
    "ndd.brightness_contrast": "ndd.brightness_contrast(images, brightness=1.2, contrast=0.8)",
    "ndd.color_space_conversion": "gray",
    "ndd.color_twist": "ndd.color_twist(images, hue=30.0, saturation=1.5)",
    "ndd.contrast": "ndd.contrast(images, contrast=2.0)",
    "ndd.hsv": "ndd.hsv(images, hue=45.0, saturation=0.5, value=1.1)",
    "ndd.hue": "ndd.hue(images, hue=90.0)",
    "ndd.saturation": "ndd.saturation(images, saturation=0.0)",
    "ndd.equalize": "ndd.equalize(images)",
    "ndd.jpeg_compression_distortion": "ndd.jpeg_compression_distortion(images, quality=10)",
    "ndd.clahe": "ndd.clahe(images, tiles_x=2, tiles_y=2, clip_limit=2.0)",
    "ndd.noise.gaussian": "ndd.noise.gaussian(images, stddev=10.0, rng=rng)",
    "ndd.noise.salt_and_pepper": "ndd.noise.salt_and_pepper(images, prob=0.1, rng=rng)",
    "ndd.noise.shot": "ndd.noise.shot(images, factor=4.0, rng=rng)",
    "ndd.jitter": "ndd.jitter(images, nDegree=3, rng=rng)",
    "ndd.rotate": "ndd.rotate(images, angle=30.0, fill_value=0)",
    "ndd.sphere": "ndd.sphere(images)",
    "ndd.water": "ndd.water(images, ampl_x=3.0, ampl_y=3.0)",
    "ndd.warp_affine": "ndd.warp_affine(image, matrix=np.asarray(shift).ravel().tolist(), fill_value=0)",
    "ndd.experimental.warp_perspective": "ndd.experimental.warp_perspective(image, matrix=homography)",
    "ndd.experimental.remap": "mirrored",
    "ndd.laplacian": "ndd.math.abs(edges)",
}
