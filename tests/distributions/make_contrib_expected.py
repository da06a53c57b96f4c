"""Writes tests/data/contrib_distributions_expected.npz: the values TF 1.15's
tf.contrib.distributions gives for contrib_scenario.py, from scipy.stats and closed forms
(TF 2.21 has no tf.contrib and the peer has no tensorflow_probability).

    PYTHONPATH=. ~/.cache/tensorweave-tf-peer/bin/python \
        tests/distributions/make_contrib_expected.py
"""

from pathlib import Path

import numpy as np
from scipy import stats

from tests.distributions import contrib_scenario as sc

OUT = Path(__file__).resolve().parents[1] / "data" / "contrib_distributions_expected.npz"


def _members(loc, scale):
    """(loc, scale) per batch member, broadcast to batch 2."""
    loc = np.broadcast_to(loc, (2, sc.K))
    scale = np.broadcast_to(scale, (2, sc.K, sc.K))
    return list(zip(loc, scale))


def _mvn(out, name, loc, scale) -> None:
    members = _members(loc, scale)
    dists = [stats.multivariate_normal(m, s @ s.T) for m, s in members]
    # the values broadcast against the batch; the moments have the batch shape
    batched = np.broadcast_shapes(np.shape(loc)[:-1], np.shape(scale)[:-2]) != ()
    one = slice(None) if batched else 0
    out[f"{name}/log_prob"] = np.stack([d.logpdf(sc.X[:, i]) for i, d in enumerate(dists)], 1)
    out[f"{name}/entropy"] = np.array([d.entropy() for d in dists])[one]
    out[f"{name}/mean"] = np.stack([m for m, _ in members])[one]
    cov = np.stack([s @ s.T for _, s in members])[one]
    out[f"{name}/covariance"] = cov
    out[f"{name}/stddev"] = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1))


def _kl(a, b) -> np.ndarray:
    """KL(N(mu_a, S_a) || N(mu_b, S_b)) per batch member, the textbook closed form."""
    out = []
    for (ma, la), (mb, lb) in zip(_members(*a), _members(*b)):
        ca, cb = la @ la.T, lb @ lb.T
        inv = np.linalg.inv(cb)
        d = mb - ma
        out.append(0.5 * (np.trace(inv @ ca) + d @ inv @ d - sc.K
                          + np.log(np.linalg.det(cb) / np.linalg.det(ca))))
    return np.array(out)


def _poisson(out) -> None:
    p = stats.poisson(sc.RATE)
    out["poisson/log_prob"] = p.logpmf(sc.COUNTS)
    out["poisson/cdf"] = p.cdf(sc.COUNTS)
    out["poisson/cdf_non_integer"] = p.cdf(sc.NON_INTEGER)
    out["poisson/mean"], out["poisson/stddev"] = sc.RATE, np.sqrt(sc.RATE)
    out["poisson/mode"] = np.floor(sc.RATE)


def _logistic(out) -> None:
    d = stats.logistic(sc.LOGISTIC_LOC, sc.LOGISTIC_SCALE)
    x = sc.LOGISTIC_X
    out["logistic/log_prob"], out["logistic/cdf"] = d.logpdf(x), d.cdf(x)
    out["logistic/log_cdf"], out["logistic/survival"] = d.logcdf(x), d.sf(x)
    out["logistic/log_survival"] = d.logsf(x)
    out["logistic/entropy"], out["logistic/mean"] = d.entropy(), d.mean()
    out["logistic/stddev"] = d.std()


def main() -> None:
    out: dict = {}
    params = sc.mvn_params()
    for name, (loc, scale) in params.items():
        _mvn(out, name, loc, scale)
    for a, b in sc.KL_PAIRS:
        out[f"kl/{a}_{b}"] = _kl(params[a], params[b])
    _poisson(out)
    _logistic(out)
    np.savez(OUT, **{k.replace("/", "__"): v for k, v in out.items()})
    print("wrote", len(out))


if __name__ == "__main__":
    main()
