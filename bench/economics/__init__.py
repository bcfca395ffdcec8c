"""The context-economics workload family, run side by side with Claude Code on the shared referee.

`generate` (over `sample_repo`) writes single-prompt sessions of several seeds (modules of 3-40 KiB,
partial reads of a large log, large shell outputs, edit-then-reread, greps,
re-reads of files read long before); `family` lists every run (the audit, the
generated sessions at 100K / 120K / 200K, the spotter replays at 120K / 200K,
the longest replay at 60K) and prepares its scenario folder; `runner` runs one
client on one of them against the referee's fakeapi.py and collects its
figures; `probes` judges retention; `table` prints the side-by-side table and
the issue's targets. The command is bench/economics.py.
"""
