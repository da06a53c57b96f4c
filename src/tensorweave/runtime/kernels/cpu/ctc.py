"""CPU kernels for the CTC ops (ops/ctc_ops.py), following TF's ctc_loss_calculator and
ctc_beam_search: log-softmax per step, forward-backward in log space (alpha includes the
current step's probability, beta does not), the loss `-log p(z|x)` and its logits gradient
`softmax - exp(log(sum over u of alpha * beta) - log p)`. Errors are TF's InvalidArgument
messages. Arithmetic is float64, results in the input's dtype.
"""

from __future__ import annotations

import numpy as np

from tensorweave.runtime.kernels.cpu.array import invalid
from tensorweave.runtime.kernels.cpu.ctc_beam import beam_search
from tensorweave.runtime.kernels.registry import register_kernel

NEG_INF = -np.inf


def log_softmax(x: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax in float64."""
    x = np.asarray(x, np.float64)
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _check_inputs(inputs, indices, values, seq_len):
    if inputs.ndim != 3:
        raise invalid("inputs is not a 3-Tensor")
    if seq_len.ndim != 1:
        raise invalid("sequence_length is not a vector")
    if indices.ndim != 2:
        raise invalid("labels_indices is not a matrix")
    if indices.shape[1] < 2:
        raise invalid(f"labels_indices second dimension must be >= 1. Received "
                      f"{indices.shape[1]}")
    if values.ndim != 1:
        raise invalid("labels_values is not a vector")
    max_time, batch, _ = inputs.shape
    if max_time == 0:
        raise invalid("Max time or first dimension of input cannot be 0.")
    if seq_len.shape[0] != batch:
        raise invalid(f"len(sequence_length) != batch_size.  len(sequence_length):  "
                      f"{seq_len.shape[0]} batch_size: {batch}")
    if indices.shape[0] != values.shape[0]:
        raise invalid(f"labels_indices and labels_values must contain the same number of "
                      f"rows, but saw shapes: {list(indices.shape)} vs. {list(values.shape)}")
    for b in range(batch):
        if seq_len[b] > max_time:
            raise invalid(f"sequence_length({b}) <= {max_time}")


def _labels_by_batch(indices, values, batch) -> list[list[int]]:
    rows: list[list[int]] = [[] for _ in range(batch)]
    last = -1
    for (b, _), v in zip(indices[:, :2].tolist(), values.tolist()):
        if not 0 <= b < batch or b < last:
            raise invalid(f"labels_indices are not ordered by batch or out of range: batch "
                          f"{b} of {batch}")
        last = b
        rows[b].append(int(v))
    for b, row in enumerate(rows):
        if not row:
            raise invalid(f"Labels length is zero in batch {b}")
    return rows


def _target(label, b, num_classes, collapse) -> list[int]:
    """The label sequence TF's PopulateLPrimes keeps: repeats collapsed when asked; a label
    >= num_classes - 1 ends the sequence; nothing may follow it."""
    kept: list[int] = []
    finished = False
    for i, v in enumerate(label):
        if i > 0 and collapse and v == label[i - 1]:
            continue
        if v >= num_classes - 1:
            finished = True
        elif finished:
            raise invalid(f"Saw a non-null label (index >= num_classes - 1) following a null "
                          f"label, batch: {b} num_classes: {num_classes} labels: "
                          f"{','.join(map(str, label))} labels seen so far: "
                          f"{','.join(map(str, kept))}")
        else:
            kept.append(v)
    if any(v < 0 for v in kept):
        raise invalid(f"All labels must be nonnegative integers, batch: {b} labels: "
                      f"{','.join(map(str, kept))}")
    return kept


def _u_range(u_len, t_len, t):
    return range(max(0, u_len - 2 * (t_len - t)), min(u_len, 2 * (t + 1)))


def _alpha(lp, log_y, merge):
    t_len, u_len = log_y.shape[0], len(lp)
    a = np.full((t_len, u_len), NEG_INF)
    a[0, 0] = log_y[0, lp[0]]
    if u_len > 1:
        a[0, 1] = log_y[0, lp[1]]
    blank = lp[0]
    for t in range(1, t_len):
        for u in _u_range(u_len, t_len, t):
            terms = [a[t - 1, u]] if merge or lp[u] == blank else []
            if u > 0:
                terms.append(a[t - 1, u - 1])
            if u > 1 and lp[u] != blank and not (merge and lp[u] == lp[u - 2]):
                terms.append(a[t - 1, u - 2])
            a[t, u] = log_y[t, lp[u]] + np.logaddexp.reduce(terms) if terms else NEG_INF
    return a


def _beta(lp, log_y, merge):
    t_len, u_len = log_y.shape[0], len(lp)
    bt = np.full((t_len, u_len), NEG_INF)
    bt[t_len - 1, max(0, u_len - 2):] = 0.0
    blank = lp[0]
    for t in range(t_len - 2, -1, -1):
        for u in _u_range(u_len, t_len, t):
            terms = [bt[t + 1, u] + log_y[t + 1, lp[u]]] if merge or lp[u] == blank else []
            if u + 1 < u_len:
                terms.append(bt[t + 1, u + 1] + log_y[t + 1, lp[u + 1]])
            if u + 2 < u_len and lp[u] != blank and not (merge and lp[u] == lp[u + 2]):
                terms.append(bt[t + 1, u + 2] + log_y[t + 1, lp[u + 2]])
            if terms:
                bt[t, u] = np.logaddexp.reduce(terms)
    return bt


def sequence_loss(log_y: np.ndarray, target: list[int], merge: bool):
    """(loss, d loss / d logits) of one sequence; `log_y` `[time, classes]`."""
    blank = log_y.shape[1] - 1
    lp = [blank]
    for v in target:
        lp += [v, blank]
    a, bt = _alpha(lp, log_y, merge), _beta(lp, log_y, merge)
    log_p = np.logaddexp.reduce(a[0] + bt[0])
    y = np.exp(log_y)
    if log_p == NEG_INF:
        return np.inf, y
    prob_sum = np.full(log_y.shape, NEG_INF)
    ab = a + bt
    for u, label in enumerate(lp):
        prob_sum[:, label] = np.logaddexp(prob_sum[:, label], ab[:, u])
    return -log_p, y - np.exp(prob_sum - log_p)


@register_kernel("CTCLoss")
def _ctc_loss(node):
    collapse = bool(node.attr("preprocess_collapse_repeated"))
    merge = bool(node.attr("ctc_merge_repeated"))
    ignore_longer = bool(node.attr("ignore_longer_outputs_than_inputs"))

    def run(inputs, indices, values, seq_len):
        inputs, seq_len = np.asarray(inputs), np.asarray(seq_len)
        indices, values = np.asarray(indices), np.asarray(values)
        _check_inputs(inputs, indices, values, seq_len)
        max_time, batch, num_classes = inputs.shape
        labels = _labels_by_batch(indices, values, batch)
        loss = np.zeros(batch, np.float64)
        grad = np.zeros(inputs.shape, np.float64)
        targets = [_target(labels[b], b, num_classes, collapse) for b in range(batch)]
        for b in range(batch):
            if not ignore_longer and len(labels[b]) > seq_len[b]:
                raise invalid(f"Not enough time for target transition sequence (required: "
                              f"{len(labels[b])}, available: {seq_len[b]}){b}You can turn "
                              f"this error into a warning by using the flag "
                              f"ignore_longer_outputs_than_inputs")
        for b in range(batch):
            if seq_len[b] == 0 or len(labels[b]) > seq_len[b]:
                continue
            t = int(seq_len[b])
            loss[b], grad[:t, b] = sequence_loss(log_softmax(inputs[:t, b]), targets[b], merge)
        return loss.astype(inputs.dtype), grad.astype(inputs.dtype)

    return run


def _sparse(paths: list[list[int]]):
    indices = [(b, i) for b, p in enumerate(paths) for i in range(len(p))]
    values = [v for p in paths for v in p]
    return (np.array(indices, np.int64).reshape(-1, 2), np.array(values, np.int64),
            np.array([len(paths), max((len(p) for p in paths), default=0)], np.int64))


def _check_decoder(inputs, seq_len):
    if inputs.ndim != 3:
        raise invalid("inputs is not a 3-Tensor")
    if seq_len.ndim != 1:
        raise invalid("sequence_length is not a vector")
    max_time, batch, _ = inputs.shape
    if seq_len.shape[0] != batch:
        raise invalid(f"len(sequence_length) != batch_size.  len(sequence_length):  "
                      f"{seq_len.shape[0]} batch_size: {batch}")
    for b in range(batch):
        if seq_len[b] > max_time:
            raise invalid(f"sequence_length({b}) <= {max_time}")


@register_kernel("CTCGreedyDecoder")
def _ctc_greedy(node):
    merge = bool(node.attr("merge_repeated"))
    blank_attr = int(node.attr("blank_index"))

    def run(inputs, seq_len):
        inputs, seq_len = np.asarray(inputs), np.asarray(seq_len)
        _check_decoder(inputs, seq_len)
        _, batch, num_classes = inputs.shape
        blank = blank_attr + num_classes if blank_attr < 0 else blank_attr
        if not 0 <= blank < num_classes:
            raise invalid(f"blank_index expected to be between {-num_classes} and "
                          f"{num_classes - 1} but was {blank_attr}")
        paths, log_prob = [], np.zeros((batch, 1), inputs.dtype)
        for b in range(batch):
            steps = inputs[:int(seq_len[b]), b]
            best = steps.argmax(axis=1) if len(steps) else np.zeros(0, int)
            log_prob[b, 0] = -steps.max(axis=1).sum(dtype=inputs.dtype) if len(steps) else 0
            path, prev = [], -1
            for c in best.tolist():
                if c != blank and not (merge and c == prev):
                    path.append(c)
                prev = c
            paths.append(path)
        return (*_sparse(paths), log_prob)

    return run


@register_kernel("CTCBeamSearchDecoder")
def _ctc_beam(node):
    width, top = int(node.attr("beam_width")), int(node.attr("top_paths"))
    merge = bool(node.attr("merge_repeated"))

    def run(inputs, seq_len):
        inputs, seq_len = np.asarray(inputs), np.asarray(seq_len)
        _check_decoder(inputs, seq_len)
        if top > width:
            raise invalid("requested more paths than the beam width.")
        batch = inputs.shape[1]
        per_batch = [beam_search(inputs[:int(seq_len[b]), b], width, top, merge)
                     for b in range(batch)]
        log_prob = np.array([[lp for _, lp in pb] for pb in per_batch], inputs.dtype)
        parts = [_sparse([pb[i][0] for pb in per_batch]) for i in range(top)]
        return (*[p[0] for p in parts], *[p[1] for p in parts], *[p[2] for p in parts],
                log_prob.reshape(batch, top))

    return run
