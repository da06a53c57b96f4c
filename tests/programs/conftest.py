"""tests/programs holds third-party TF1 programs kept unchanged; their own test files (the PTB
reader's `reader_test.py`, run under `tf.test.main` by test_tf1_programs.py with tensorweave
as `tensorflow`) are not collected directly."""

collect_ignore = ["ptb/reader_test.py"]
