"""`tensorweave.timeline`: Chrome-trace timelines from step stats (TF's client/timeline.py)."""

from tensorweave.monitoring.timeline import (  # noqa: F401
    AllocationMaximum, StepStatsAnalysis, Timeline, run_traced,
)
