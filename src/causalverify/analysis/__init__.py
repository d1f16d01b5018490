"""Pure analyses over a per-cell table: rates, rank agreement, robustness, failure taxonomy.

Every function takes a per-cell :class:`pandas.DataFrame` (the run store's ``cells_frame`` or a
published table read with :func:`load_published_cells`) and returns plain values. Resampling uses
an explicit :class:`numpy.random.Generator`; nothing touches global random state.
"""

from causalverify.analysis._frame import (
    CELL_COLUMNS,
    LAYERS,
    CellsFormatError,
    Unit,
    add_unit,
    load_published_cells,
    prepare_cells,
)
from causalverify.analysis._invariance import language_invariance, mcnemar_exact
from causalverify.analysis._ranking import (
    RankComparison,
    bootstrap_rank_ci,
    compare_rankings,
    kendall_spearman,
    ordered_units,
    pairwise_accuracy,
    rank_units,
)
from causalverify.analysis._rates import (
    Proportion,
    conditional_pass,
    executed_wrong,
    proportion,
    rates_by_unit,
    rates_by_unit_family,
    wilson_interval,
)
from causalverify.analysis._repair import pass_at_k, repair_summary
from causalverify.analysis._robustness import (
    TOLERANCES,
    drop_one_family,
    leave_one_unit_out,
    passes_at,
    tolerance_sweep,
)
from causalverify.analysis._summary import DEFAULT_SEED, analyze_cells, dumps_summary, json_ready
from causalverify.analysis._taxonomy import classify_cell, rel_error_profile, taxonomy, wrong_kind

__all__ = [
    "CELL_COLUMNS",
    "DEFAULT_SEED",
    "LAYERS",
    "TOLERANCES",
    "CellsFormatError",
    "Proportion",
    "RankComparison",
    "Unit",
    "add_unit",
    "analyze_cells",
    "bootstrap_rank_ci",
    "classify_cell",
    "compare_rankings",
    "conditional_pass",
    "drop_one_family",
    "dumps_summary",
    "executed_wrong",
    "json_ready",
    "kendall_spearman",
    "language_invariance",
    "leave_one_unit_out",
    "load_published_cells",
    "mcnemar_exact",
    "ordered_units",
    "pairwise_accuracy",
    "pass_at_k",
    "passes_at",
    "prepare_cells",
    "proportion",
    "rank_units",
    "rates_by_unit",
    "rates_by_unit_family",
    "rel_error_profile",
    "repair_summary",
    "taxonomy",
    "tolerance_sweep",
    "wilson_interval",
    "wrong_kind",
]
