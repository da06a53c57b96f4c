"""Step-time listeners: sessions report each `run`'s duration to every registered listener
(a running `ResourceWatcher` registers itself). With none registered a run pays one check."""

LISTENERS: list = []   # objects with record_step(seconds, session)
