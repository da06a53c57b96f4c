"""CPU kernels on numpy, one module per op family. Importing this package registers them."""

from tensorweave.runtime.kernels.cpu import array, base, math  # noqa: F401
