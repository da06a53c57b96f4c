"""The heads of TF 1.15's canned estimators: logits -> predictions, loss, train op and eval
metrics, with TF's names (`class_ids`, `probabilities`, `average_loss`, `auc` ...) and
TF1's loss reduction (SUM over the batch).
"""

from __future__ import annotations

from tensorweave.estimator.deps import tf
from tensorweave.estimator.model_fn import EstimatorSpec, ModeKeys


class _Head:
    """Turns logits into an EstimatorSpec; subclasses give the loss, predictions, metrics."""

    def __init__(self, logits_dimension, weight_column=None, loss_reduction=None,
                 label_vocabulary=None):
        self.logits_dimension = logits_dimension
        self._weight_column = weight_column
        self._reduction = loss_reduction or tf.losses.Reduction.SUM
        self._vocab = list(label_vocabulary) if label_vocabulary else None

    def _weights(self, features):
        if self._weight_column is None:
            return 1.0
        key = getattr(self._weight_column, "key", self._weight_column)
        return tf.cast(tf.reshape(features[key], [-1, 1]), tf.float32)

    def create_estimator_spec(self, features, mode, logits, labels=None, train_op_fn=None):
        with tf.name_scope("head"):
            preds = self._predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=preds)
            if labels is None:
                raise ValueError("You must provide a labels Tensor. Given: None.")
            unreduced, labels = self._unreduced_loss(logits, labels)
            weights = self._weights(features)
            loss = tf.losses.compute_weighted_loss(unreduced, weights=weights,
                                                   reduction=self._reduction)
            if mode == ModeKeys.EVAL:
                return EstimatorSpec(mode, predictions=preds, loss=loss,
                                     eval_metric_ops=self._metrics(
                                         labels, preds, unreduced, weights, logits))
            train_op = train_op_fn(loss)
        tf.summary.scalar("loss", loss)
        return EstimatorSpec(mode, predictions=preds, loss=loss, train_op=train_op)

    def _common_metrics(self, unreduced, weights, labels, prediction_mean=None):
        out = {"average_loss": tf.metrics.mean(unreduced, weights=weights,
                                               name="average_loss")}
        return out


class _MultiClassHead(_Head):
    def __init__(self, n_classes, **kw):
        super().__init__(n_classes, **kw)
        self._n = n_classes

    def _label_ids(self, labels):
        labels = tf.reshape(labels, [-1, 1])
        if self._vocab is not None:
            table = tf.contrib.lookup.index_table_from_tensor(self._vocab, name="class_id_lookup")
            return table.lookup(labels)
        return tf.cast(labels, tf.int64)

    def _classes(self, class_ids):
        if self._vocab is not None:
            table = tf.contrib.lookup.index_to_string_table_from_tensor(
                self._vocab, name="class_string_lookup")
            return table.lookup(class_ids)
        return tf.as_string(class_ids, name="str_classes")

    def _predictions(self, logits):
        with tf.name_scope(None, "predictions", [logits]):
            ids = tf.expand_dims(tf.argmax(logits, axis=1, name="class_ids"), -1)
            return {"logits": logits, "probabilities": tf.nn.softmax(logits, name="probabilities"),
                    "class_ids": ids, "classes": self._classes(ids)}

    def _unreduced_loss(self, logits, labels):
        ids = self._label_ids(labels)
        loss = tf.losses.sparse_softmax_cross_entropy(labels=ids, logits=logits,
                                                      reduction=tf.losses.Reduction.NONE)
        return tf.reshape(loss, [-1, 1]), ids

    def _metrics(self, labels, preds, unreduced, weights, logits):
        m = self._common_metrics(unreduced, weights, labels)
        m["accuracy"] = tf.metrics.accuracy(labels, preds["class_ids"], weights=weights,
                                            name="accuracy")
        return m


class _BinaryHead(_MultiClassHead):
    def __init__(self, **kw):
        _Head.__init__(self, 1, **kw)
        self._n = 2

    def _predictions(self, logits):
        with tf.name_scope(None, "predictions", [logits]):
            logistic = tf.sigmoid(logits, name="logistic")
            two = tf.concat([tf.zeros_like(logits), logits], axis=1, name="two_class_logits")
            ids = tf.expand_dims(tf.argmax(two, axis=1, name="class_ids"), -1)
            return {"logits": logits, "logistic": logistic,
                    "probabilities": tf.nn.softmax(two, name="probabilities"),
                    "class_ids": ids, "classes": self._classes(ids)}

    def _unreduced_loss(self, logits, labels):
        ids = self._label_ids(labels)
        loss = tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.cast(ids, tf.float32),
                                                       logits=logits)
        return loss, ids

    def _metrics(self, labels, preds, unreduced, weights, logits):
        m = super()._metrics(labels, preds, unreduced, weights, logits)
        fl = tf.cast(labels, tf.float32)
        m["label/mean"] = tf.metrics.mean(fl, weights=weights, name="label/mean")
        m["prediction/mean"] = tf.metrics.mean(preds["logistic"], weights=weights,
                                               name="prediction/mean")
        m["precision"] = tf.metrics.precision(labels, preds["class_ids"], weights=weights,
                                              name="precision")
        m["recall"] = tf.metrics.recall(labels, preds["class_ids"], weights=weights,
                                        name="recall")
        m["auc"] = tf.metrics.auc(labels, preds["logistic"], weights=weights, name="auc")
        m["auc_precision_recall"] = tf.metrics.auc(labels, preds["logistic"], weights=weights,
                                                   curve="PR", name="auc_precision_recall")
        label_mean = m["label/mean"][0]
        m["accuracy_baseline"] = (tf.maximum(label_mean, 1.0 - label_mean),
                                  tf.maximum(m["label/mean"][1], 1.0 - m["label/mean"][1]))
        return m


class _RegressionHead(_Head):
    def _predictions(self, logits):
        return {"predictions": logits}

    def _unreduced_loss(self, logits, labels):
        labels = tf.cast(tf.reshape(labels, [-1, self.logits_dimension]), tf.float32)
        return tf.losses.mean_squared_error(labels, logits,
                                            reduction=tf.losses.Reduction.NONE), labels

    def _metrics(self, labels, preds, unreduced, weights, logits):
        m = self._common_metrics(unreduced, weights, labels)
        m["label/mean"] = tf.metrics.mean(labels, weights=weights, name="label/mean")
        m["prediction/mean"] = tf.metrics.mean(logits, weights=weights, name="prediction/mean")
        return m


def classification_head(n_classes, weight_column=None, label_vocabulary=None,
                        loss_reduction=None):
    if n_classes < 2:
        raise ValueError(f"n_classes must be > 1 for classification: {n_classes}")
    kw = dict(weight_column=weight_column, label_vocabulary=label_vocabulary,
              loss_reduction=loss_reduction)
    return _BinaryHead(**kw) if n_classes == 2 else _MultiClassHead(n_classes, **kw)


def regression_head(label_dimension=1, weight_column=None, loss_reduction=None):
    return _RegressionHead(label_dimension, weight_column=weight_column,
                           loss_reduction=loss_reduction)
