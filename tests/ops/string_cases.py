"""String-op cases shared by make_string_expected.py (run with TensorFlow) and
test_strings.py (run with tensorweave): each builds its outputs from the `tf` module given."""

WORDS = ["hello world", "  a  b ", "", "x,y;;z", "naïve café"]

CASES = {
    "split_v1": lambda tf: tf.string_split(WORDS),
    "split_v1_chars": lambda tf: tf.string_split(["ab", "c"], delimiter=""),
    "split_v1_multi": lambda tf: tf.string_split(WORDS, delimiter=",; "),
    "split_v1_keep_empty": lambda tf: tf.string_split(WORDS, delimiter=" ", skip_empty=False),
    "split_v2_ws": lambda tf: tf.strings.split(WORDS),
    "split_v2_sep": lambda tf: tf.strings.split(WORDS, sep=" "),
    "split_v2_max": lambda tf: tf.strings.split(["a,b,c,d", "e"], sep=",", maxsplit=2),
    "substr": lambda tf: tf.substr(["hello", "world!"], [1, 2], [3, 10]),
    "substr_neg": lambda tf: tf.substr(["hello", "world!"], -3, 2),
    "substr_utf8": lambda tf: tf.strings.substr(["naïve café"], 2, 4, unit="UTF8_CHAR"),
    "substr_bcast": lambda tf: tf.substr([["ab", "cd"], ["ef", "gh"]], [0, 1], [1, 1]),
    "regex_replace": lambda tf: tf.regex_replace(WORDS, r"[aeiou]", "_"),
    "regex_replace_first": lambda tf: tf.regex_replace(WORDS, r"o", "0",
                                                       replace_global=False),
    "regex_replace_groups": lambda tf: tf.regex_replace(["2020-01-31"], r"(\d+)-(\d+)-(\d+)",
                                                        r"\3/\2/\1 (\0)"),
    "regex_replace_dynamic": lambda tf: tf.regex_replace(
        WORDS, tf.constant(r"\s+"), tf.constant(" ")),
    "regex_full_match": lambda tf: tf.strings.regex_full_match(WORDS, r"[a-z ]+"),
    "reduce_join_all": lambda tf: tf.reduce_join([["a", "b"], ["c", "d"]]),
    "reduce_join_0": lambda tf: tf.reduce_join([["a", "b"], ["c", "d"]], 0, separator="+"),
    "reduce_join_1_keep": lambda tf: tf.reduce_join([["a", "b"], ["c", "d"]], 1,
                                                    keep_dims=True, separator=" "),
    "reduce_join_neg": lambda tf: tf.reduce_join([["a", "b"], ["c", "d"]], [-1, 0]),
    "as_string_float": lambda tf: tf.as_string([1.5, -2.25, 1e10, 0.1]),
    "as_string_prec": lambda tf: tf.as_string([1.5, -2.25], precision=3),
    "as_string_sci": lambda tf: tf.as_string([1.5, 12345.678], scientific=True),
    "as_string_short": lambda tf: tf.as_string([1.5, 12345.678, 1e-7], shortest=True),
    "as_string_int_width": lambda tf: tf.as_string([3, -42], width=5),
    "as_string_int_zero": lambda tf: tf.as_string([3, 42], width=4, fill="0"),
    "as_string_bool": lambda tf: tf.as_string([True, False]),
    "as_string_int64": lambda tf: tf.as_string(tf.constant([2**40], tf.int64)),
    "length": lambda tf: tf.strings.length(WORDS),
    "length_utf8": lambda tf: tf.strings.length(WORDS, unit="UTF8_CHAR"),
    "strip": lambda tf: tf.strings.strip(WORDS),
    "upper": lambda tf: tf.strings.upper(["abc Def"]),
    "lower": lambda tf: tf.strings.lower(["abc Def"]),
    "to_number": lambda tf: tf.strings.to_number(["1.5", "-3", "1e3"]),
    "join": lambda tf: tf.strings.join([["a", "b"], "c"], separator="-"),
}


def to_jsonable(value):
    """Fetched values (arrays, bytes, SparseTensorValues) as JSON-friendly lists."""
    import numpy as np

    if hasattr(value, "indices") and hasattr(value, "dense_shape"):
        return {"indices": to_jsonable(value.indices), "values": to_jsonable(value.values),
                "dense_shape": to_jsonable(value.dense_shape)}
    arr = np.asarray(value)
    if arr.dtype.kind in "OS":
        flat = [v.decode("utf-8") if isinstance(v, bytes) else v for v in arr.reshape(-1)]
        return {"shape": list(arr.shape), "strings": flat}
    return {"shape": list(arr.shape), "dtype": str(arr.dtype), "values": arr.reshape(-1).tolist()}
