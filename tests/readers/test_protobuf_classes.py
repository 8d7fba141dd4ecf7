"""The message classes the Caffe, Caffe2 and TFRecord readers make at run time."""

import gc

import pytest

pytest.importorskip("google.protobuf")

from ndd.readers import caffe, tfrecord  # noqa: E402


@pytest.mark.parametrize(
    ("module", "outer", "path"),
    [
        (tfrecord, "ndd.tf.Example", ("features",)),
        (caffe, "caffe2.TensorProtos", ()),
    ],
)
def test_submessages_are_made_after_a_garbage_collection(module, outer, path):
    # protobuf before 4.25 keeps neither the pool nor the submessages' classes alive:
    # a collection between making the classes and making a submessage crashed the
    # interpreter there (tests/ci: make test-oldest-libraries runs protobuf 4.22).
    cached = tfrecord._message_classes if module is tfrecord else caffe._all_message_classes
    cached.cache_clear()
    try:
        cls = cached()[outer]
        gc.collect()
        message = cls()
        for name in path:
            message = getattr(message, name)
        if module is tfrecord:
            message.feature["label"].int64_list.value.append(7)
            assert list(message.feature.get("label").int64_list.value) == [7]
        else:
            message.protos.add(dims=[2, 3])
            assert list(message.protos[0].dims) == [2, 3]
    finally:
        cached.cache_clear()
