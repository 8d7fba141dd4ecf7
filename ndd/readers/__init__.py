"""Readers: stateful sources that list a dataset and stream its samples.

Each reader class is created once and iterated epoch after epoch with
``next_epoch()`` (or called for one sample/batch at a time); it reads ahead on a
background thread, splits the dataset into shards for distributed jobs and
saves/restores its position through ``get_state``/``set_state`` (see
``ndd.checkpoint``).
"""

from .caffe import Caffe, Caffe2
from .coco import COCO
from .file import File
from .mxnet import MXNet
from .nemo_asr import NemoAsr
from .numpy_reader import Numpy
from .tfrecord import TFRecord
from .video import Video, VideoResize
from .webdataset import Webdataset

__all__ = [
    "Caffe",
    "Caffe2",
    "COCO",
    "File",
    "MXNet",
    "NemoAsr",
    "Numpy",
    "TFRecord",
    "Video",
    "VideoResize",
    "Webdataset",
]
