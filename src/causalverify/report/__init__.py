"""The report of a run: ``summary.json``, ``leaderboard.md``, ``cells.csv``, figures, ``index.html``.

Every number shown in ``leaderboard.md`` and ``index.html`` is read back from ``summary.json``.
"""

from causalverify.report._render import incomplete_banner
from causalverify.report._writer import (
    DEFAULT_TITLE,
    ReportSource,
    build_summary,
    load_run_cells,
    write_report,
)

__all__ = [
    "DEFAULT_TITLE",
    "ReportSource",
    "build_summary",
    "incomplete_banner",
    "load_run_cells",
    "write_report",
]
