"""tests/programs holds third-party TF1 programs kept unchanged; their own test files (TF's
`*_test.py`, run under `tf.test.main` or pytest by the wrappers here with tensorweave as
`tensorflow`) are not collected directly."""

collect_ignore_glob = ["*_test.py", "*/*_test.py"]
