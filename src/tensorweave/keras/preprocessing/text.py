"""`tf.keras.preprocessing.text`: `Tokenizer` (word counts, indices by frequency,
texts_to_sequences with an optional OOV token) and `text_to_word_sequence`."""

from __future__ import annotations

from collections import Counter

_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\\\]^_`{|}~\\t\\n'


def text_to_word_sequence(text, filters=_FILTERS, lower=True, split=" ") -> list:
    if lower:
        text = text.lower()
    text = text.translate(str.maketrans({c: split for c in filters}))
    return [w for w in text.split(split) if w]


class Tokenizer:
    """Words indexed 1, 2, ... by decreasing count (the OOV token, when given, is 1)."""

    def __init__(self, num_words=None, filters=_FILTERS, lower=True, split=" ",
                 char_level=False, oov_token=None, **kwargs):
        self.num_words, self.filters, self.lower, self.split = num_words, filters, lower, split
        self.char_level, self.oov_token = char_level, oov_token
        self.word_counts: Counter = Counter()
        self.word_index: dict = {}
        self.index_word: dict = {}
        self.document_count = 0

    def _words(self, text) -> list:
        return list(text) if self.char_level else text_to_word_sequence(
            text, self.filters, self.lower, self.split)

    def fit_on_texts(self, texts) -> None:
        for text in texts:
            self.document_count += 1
            self.word_counts.update(self._words(text))
        ordered = [w for w, _ in sorted(self.word_counts.items(), key=lambda kv: -kv[1])]
        if self.oov_token is not None:
            ordered = [self.oov_token] + [w for w in ordered if w != self.oov_token]
        self.word_index = {w: i + 1 for i, w in enumerate(ordered)}
        self.index_word = {i: w for w, i in self.word_index.items()}

    def texts_to_sequences(self, texts) -> list:
        oov = self.word_index.get(self.oov_token) if self.oov_token is not None else None
        out = []
        for text in texts:
            seq = []
            for w in self._words(text):
                i = self.word_index.get(w)
                if i is not None and (not self.num_words or i < self.num_words):
                    seq.append(i)
                elif oov is not None:
                    seq.append(oov)
            out.append(seq)
        return out
