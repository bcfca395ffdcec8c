"""ccx and Claude Code side by side on the referee, over the whole workload family: one table.

    .venv/bin/python bench/economics.py [--client ccx|cc|both] [--only PATTERN] [--json]
                                        [--cc-from FILE|latest|baseline] [--jobs N] [--list]
                                        [--thinking-tokens N]

Both clients think (the referee's --thinking-tokens, 500 by default: a signed
thought of that length before each agent step, and the API's thinking rules
enforced), so the figures are what a real session costs; --thinking-tokens 0
runs them without. The family (bench/economics/family.py): the audit at 120K; generated sessions
of three seeds at 100K, 120K and 200K; the three spotter replays at 120K and
200K; the longest replay at 60K. Prints, per run, both clients' input_equiv
(thousands), the ratio, summaries and compactions by method, refused requests,
the first prompt kept verbatim and the recently read files kept, then the mean
ratio per family and window and the issue's targets, PASS / FAIL.

Fast tuning of ccx alone (about 2 minutes for the whole family, seconds a run):
    .venv/bin/python bench/economics.py --client ccx --cc-from baseline [--only spotter]
takes Claude Code's rows from bench/economics/cc_baseline.json (the committed
"before" run; `latest` takes this worktree's newest cc rows instead), and the
table says the CC column is not from this run. A full `--client both` run takes
about 6 minutes at two runs at a time.
"""

from __future__ import annotations

import sys
from pathlib import Path

# the package bench/economics/ shadows this file's name; import it from the repository root
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.economics.cli import main

if __name__ == "__main__":
    sys.exit(main())
