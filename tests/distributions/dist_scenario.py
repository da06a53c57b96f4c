"""tf.distributions calls whose values are deterministic, run by TensorFlow
(make_distributions_expected.py, TF 2.21's tf.compat.v1.distributions) and by tensorweave
(test_distributions.py)."""

import numpy as np

X = np.array([[-1.5, 0.2, 0.9], [2.0, -0.3, 0.05]], np.float32)
P = np.array([[0.05, 0.3, 0.95], [0.5, 0.7, 0.2]], np.float32)
POS = np.array([[0.3, 1.2, 4.0], [0.9, 2.5, 0.1]], np.float32)


def build(tf, D):
    """({name: tensor}, [names of methods that raise NotImplementedError])."""
    out, missing = {}, []
    loc, scale = np.float32([0.5, -1.0, 2.0]), np.float32([[1.0, 0.5, 2.0], [0.3, 1.5, 1.0]])
    dists = {
        "normal": (D.Normal(loc, scale), X),
        "laplace": (D.Laplace(loc, scale), X),
        "uniform": (D.Uniform(np.float32([-1.0, 0.0, 0.5]), np.float32([1.0, 0.25, 3.0])), X),
        "gamma": (D.Gamma(POS, np.float32([1.5, 0.5, 2.0])), POS[::-1]),
        "exponential": (D.Exponential(np.float32([1.5, 0.5, 2.0])), POS),
        "beta": (D.Beta(POS, POS[::-1] + 0.5), P),
        "student_t": (D.StudentT(np.float32([3.0, 1.5, 0.8]), loc, scale), X),
        "bernoulli": (D.Bernoulli(probs=P), np.array([[1, 0, 1], [0, 1, 1]], np.int32)),
        "bernoulli_logits": (D.Bernoulli(logits=X), np.array([[1, 0, 1], [0, 1, 1]], np.int32)),
        "categorical": (D.Categorical(logits=X), np.array([2, 0], np.int32)),
        "categorical_probs": (D.Categorical(probs=P / P.sum(-1, keepdims=True)),
                              np.array([1, 2], np.int32)),
        "dirichlet": (D.Dirichlet(POS), P / P.sum(-1, keepdims=True)),
        "multinomial": (D.Multinomial(5.0, logits=X), np.float32([[1, 2, 2], [0, 0, 5]])),
    }
    methods = {
        "log_prob": True, "prob": True, "cdf": True, "entropy": False, "mean": False,
        "stddev": False, "variance": False, "mode": False,
    }
    # NOTE: TF's StudentT passes df unbroadcast to Betainc, which refuses df [3] beside a
    # [2, 3] value: its CDF is checked below with df of the value's shape
    skip = {("student_t", "cdf"), ("dirichlet", "cdf"),
            ("multinomial", "cdf"), ("dirichlet", "stddev"), ("multinomial", "stddev"),
            ("multinomial", "mode"), ("uniform", "mode"), ("student_t", "mode"),
            ("laplace", "mode"), ("dirichlet", "mode"), ("dirichlet", "variance"),
            ("exponential", "mode"), ("gamma", "mode"), ("beta", "mode"),
            ("bernoulli", "cdf"), ("bernoulli_logits", "cdf")}
    for dname, (dist, value) in dists.items():
        out[f"{dname}/batch_shape"] = tf.constant(dist.batch_shape.as_list())
        out[f"{dname}/event_shape"] = tf.constant(dist.event_shape.as_list(), tf.int32)
        for m, takes_value in methods.items():
            if (dname, m) in skip:
                continue
            fn = getattr(dist, m)
            try:
                out[f"{dname}/{m}"] = fn(value) if takes_value else fn()
            except NotImplementedError:
                missing.append(f"{dname}/{m}")
    a, b = D.Normal(loc, scale), D.Normal(np.float32([0.0, 1.0, -1.0]), np.float32(0.7))
    out["kl/normal"] = D.kl_divergence(a, b)
    out["kl/bernoulli"] = D.kl_divergence(D.Bernoulli(probs=P), D.Bernoulli(logits=X))
    out["kl/categorical"] = D.kl_divergence(D.Categorical(logits=X),
                                            D.Categorical(logits=X[::-1]))
    out["cross_entropy/normal"] = a.cross_entropy(b)
    out["normal/survival"] = a.survival_function(X)
    out["normal/log_cdf"] = a.log_cdf(X)
    out["exponential/log_survival"] = dists["exponential"][0].log_survival_function(POS)
    out["gamma/survival"] = dists["gamma"][0].survival_function(POS[::-1])
    out["gamma/log_cdf"] = dists["gamma"][0].log_cdf(POS[::-1])
    out["beta/survival"] = dists["beta"][0].survival_function(P)
    out["beta/log_survival"] = dists["beta"][0].log_survival_function(P)
    t_full = D.StudentT(np.broadcast_to(np.float32([3.0, 1.5, 0.8]), (2, 3)), loc, scale)
    out["student_t/cdf_full_df"] = t_full.cdf(X)
    out["student_t/survival_full_df"] = t_full.survival_function(X)
    out["student_t/log_cdf_full_df"] = t_full.log_cdf(X)
    out["sample_shapes/normal"] = tf.shape(a.sample([4, 5], seed=3))
    out["sample_shapes/categorical"] = tf.shape(dists["categorical"][0].sample(7, seed=1))
    out["sample_shapes/dirichlet"] = tf.shape(dists["dirichlet"][0].sample(2, seed=1))
    out["sample_shapes/multinomial"] = tf.shape(dists["multinomial"][0].sample(3, seed=1))
    out["sample_shapes/beta"] = tf.shape(dists["beta"][0].sample([2, 3], seed=1))
    out["sample_shapes/student_t"] = tf.shape(dists["student_t"][0].sample(2, seed=1))
    return out, missing
