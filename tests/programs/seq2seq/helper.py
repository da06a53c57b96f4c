# The notebook's data loader (udacity/deep-learning, seq2seq/helper.py): reads a text file.
import os


def load_data(path):
    input_file = os.path.join(path)
    with open(input_file, "r", encoding="utf-8") as f:
        return f.read()
