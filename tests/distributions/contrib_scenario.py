"""Parameters and values for tf.contrib.distributions' MultivariateNormal*, Poisson and
Logistic, shared by make_contrib_expected.py (scipy.stats and closed forms: TF 2.21 has no
tf.contrib) and test_contrib_distributions.py."""

import numpy as np

RNG = np.random.default_rng(5)
K = 3
LOC = np.float64([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]])           # batch 2, event 3
DIAG = np.float64([[1.0, 0.5, 2.0], [0.3, 1.5, 1.0]])
MULT = np.float64([0.25, 1.0])
TRIL = np.float64([[[1.2, 0, 0], [0.4, 0.8, 0], [-0.3, 0.5, 1.5]],
                   [[0.6, 0, 0], [-0.2, 1.1, 0], [0.9, 0.1, 0.7]]])
COV = np.float64([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 1.5]])
X = RNG.normal(size=(4, 2, K))                                   # 4 samples of the batch
RATE = np.float64([0.7, 3.0, 12.5])
COUNTS = np.float64([[0, 1, 4], [2, 5, 11]])
NON_INTEGER = np.float64([[-0.5, 1.7, 4.2], [0.0, 5.99, 20.3]])  # the CDF floors them
LOGISTIC_LOC, LOGISTIC_SCALE = np.float64([0.5, -1.0, 2.0]), np.float64([[1.0], [0.4]])
LOGISTIC_X = np.float64([[-1.5, 0.2, 0.9], [2.0, -0.3, 30.0]])


def mvn_params():
    """name -> (loc, scale matrix) of each batch member, as the classes build them."""
    return {
        "diag": (LOC, np.stack([np.diag(d + m) for d, m in zip(DIAG, MULT)])),
        "identity": (LOC[0], 1.5 * np.eye(K)),
        "tril": (LOC[1], TRIL),
        "full": (LOC, np.linalg.cholesky(COV)),
    }


def build(D, tf):
    """The distributions under test, built with `D` (tf.contrib.distributions)."""
    return {
        "diag": D.MultivariateNormalDiag(LOC, DIAG, scale_identity_multiplier=MULT),
        "identity": D.MultivariateNormalDiag(LOC[0], scale_identity_multiplier=1.5),
        "tril": D.MultivariateNormalTriL(LOC[1], TRIL),
        "full": D.MultivariateNormalFullCovariance(LOC, COV),
    }


KL_PAIRS = [("diag", "tril"), ("full", "diag"), ("tril", "full"), ("identity", "diag")]
