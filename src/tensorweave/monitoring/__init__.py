"""Monitoring: step stats, timelines, summaries and the resource watcher.

    from tensorweave.monitoring import ResourceWatcher, variable_memory_holders
"""

_RESOURCES = ("ResourceWatcher", "ResourceAlert", "ResourceSample", "variable_memory_holders")


def __getattr__(name: str):
    # NOTE: lazily, so that importing the package (sessions do, for step_hooks) does not
    # import psutil.
    if name in _RESOURCES:
        from tensorweave.monitoring import resources

        return getattr(resources, name)
    raise AttributeError(f"module 'tensorweave.monitoring' has no attribute {name!r}")


__all__ = list(_RESOURCES)
