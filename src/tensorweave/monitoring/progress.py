"""A tqdm progress bar for training loops: step, loss and rate; quiet off a terminal.

    with Progress(total=steps, desc="train") as bar:
        for step in range(steps):
            _, loss = sess.run([train_op, loss_op])
            bar.update(loss=loss)

    for batch in progress(batches, desc="eval"):   # wraps an iterable
        ...

The bar is disabled when stdout is not a terminal (logs, CI, pipes) unless `disable=False`
is passed, so redirected output holds no carriage-return noise.
"""

from __future__ import annotations

import sys

from tqdm import tqdm


def _stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced or closed stdout
        return False


class Progress:
    """A progress bar showing the step count, rate (steps/s) and the latest loss/metrics.

    Args:
      total: expected number of steps (None: count only).
      desc: label before the bar.
      disable: True/False forces the bar off/on; None (default) shows it only when stdout
        is a terminal.
      unit: what a step is called in the rate ("step" → "step/s").
      file: stream to draw on (tqdm's default: stderr).
      iterable: optional iterable to wrap (iterate the Progress itself).
    """

    def __init__(self, total=None, desc: str | None = None, disable: bool | None = None,
                 unit: str = "step", file=None, iterable=None, **tqdm_kwargs):
        if disable is None:
            disable = not _stdout_is_terminal()
        self.disabled = bool(disable)
        self.step = 0
        self.metrics: dict[str, float] = {}
        self._bar = tqdm(iterable=iterable, total=total, desc=desc, disable=self.disabled,
                         unit=unit, file=file, dynamic_ncols=True, **tqdm_kwargs)

    def update(self, n: int = 1, loss=None, **metrics) -> None:
        """Advances `n` steps and shows `loss` and other scalar metrics (floats)."""
        self.step += n
        if loss is not None:
            metrics = {"loss": loss, **metrics}
        if metrics:
            self.set_metrics(**metrics)
        self._bar.update(n)

    def set_metrics(self, **metrics) -> None:
        """Shows scalar metrics next to the bar without advancing it."""
        self.metrics.update({k: float(v) for k, v in metrics.items()})
        self._bar.set_postfix({k: f"{v:.4g}" for k, v in self.metrics.items()}, refresh=False)

    def write(self, message: str) -> None:
        """Prints a line without breaking the bar (plain print when disabled)."""
        if self.disabled:
            print(message)
        else:
            self._bar.write(message)

    @property
    def rate(self) -> float | None:
        """Steps per second so far (None before the first update)."""
        elapsed = self._bar.format_dict.get("elapsed") or 0.0
        return self.step / elapsed if self.step and elapsed > 0 else None

    def close(self) -> None:
        self._bar.close()

    def __iter__(self):
        for item in self._bar:
            self.step += 1
            yield item

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def progress(iterable=None, total=None, desc: str | None = None, disable: bool | None = None,
             **kwargs) -> Progress:
    """A `Progress` over `iterable` (or counting to `total` when iterable is None)."""
    if total is None and iterable is not None and hasattr(iterable, "__len__"):
        total = len(iterable)
    return Progress(total=total, desc=desc, disable=disable, iterable=iterable, **kwargs)


__all__ = ["Progress", "progress"]
