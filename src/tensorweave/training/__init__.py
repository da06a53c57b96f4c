"""Training: optimizers, layers, losses, metrics, savers and checkpoints."""
