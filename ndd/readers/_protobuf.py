"""Message classes made at run time from file descriptors written in ndd (no generated
code), for the readers that parse protobuf records (Caffe, Caffe2, TFRecord)."""

__all__ = ["message_classes"]


def message_classes(files):
    """The class of every message (nested ones included) of the ``FileDescriptorProto``
    ``files``, by full name, made in a descriptor pool of their own, so that they
    cannot clash with classes of the same names registered by another library.

    The returned dict also holds the pool and keeps every class alive: protobuf before
    4.25 holds neither, and a message whose submessages' class was collected crashes
    the interpreter when it makes one."""
    from google.protobuf import descriptor_pool, message_factory

    pool = descriptor_pool.DescriptorPool()
    for file in files:
        pool.AddSerializedFile(file.SerializeToString())
    classes = {"": pool}
    pending = [d for file in files for d in pool.FindFileByName(file.name).message_types_by_name.values()]
    while pending:
        descriptor = pending.pop()
        classes[descriptor.full_name] = message_factory.GetMessageClass(descriptor)
        pending.extend(descriptor.nested_types)
    return classes
