"""Our protobuf messages (TensorFlow's field numbers, package `tensorweave`); IR mapping."""
