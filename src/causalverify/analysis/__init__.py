"""Pure analyses over a per-cell table: rates, rank agreement, robustness, failure taxonomy.

Every function takes a per-cell :class:`pandas.DataFrame` (the run store's ``cells_frame`` or a
published table read with :func:`load_published_cells`) and returns plain values. Resampling uses
an explicit :class:`numpy.random.Generator`; nothing touches global random state.
"""

from causalverify.analysis._clustered import (
    CI_METHODS,
    CiMethod,
    Difference,
    IntervalSettings,
    Rate,
    clustered_rate,
    holm,
    minimum_detectable_difference,
    paired_difference,
    sign_flip_p,
)
from causalverify.analysis._diff import Side, SuiteMismatchError, check_same_suite, diff_sides
from causalverify.analysis._frame import (
    CELL_COLUMNS,
    LAYERS,
    CellsFormatError,
    Unit,
    add_unit,
    load_published_cells,
    prepare_cells,
)
from causalverify.analysis._inference import inference_summary
from causalverify.analysis._invariance import language_invariance, mcnemar_exact
from causalverify.analysis._paired import (
    PAIR_KEYS,
    compare_pair,
    design_power,
    paired_outcomes,
    pairwise_comparisons,
    rank_intervals,
)
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
    rates_by_unit_language,
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
    "CI_METHODS",
    "DEFAULT_SEED",
    "LAYERS",
    "PAIR_KEYS",
    "TOLERANCES",
    "CellsFormatError",
    "CiMethod",
    "Difference",
    "IntervalSettings",
    "Proportion",
    "RankComparison",
    "Rate",
    "Side",
    "SuiteMismatchError",
    "Unit",
    "add_unit",
    "analyze_cells",
    "bootstrap_rank_ci",
    "check_same_suite",
    "classify_cell",
    "clustered_rate",
    "compare_pair",
    "compare_rankings",
    "conditional_pass",
    "design_power",
    "diff_sides",
    "drop_one_family",
    "dumps_summary",
    "executed_wrong",
    "holm",
    "inference_summary",
    "json_ready",
    "kendall_spearman",
    "language_invariance",
    "leave_one_unit_out",
    "load_published_cells",
    "mcnemar_exact",
    "minimum_detectable_difference",
    "ordered_units",
    "paired_difference",
    "paired_outcomes",
    "pairwise_accuracy",
    "pairwise_comparisons",
    "pass_at_k",
    "passes_at",
    "prepare_cells",
    "proportion",
    "rank_intervals",
    "rank_units",
    "rates_by_unit",
    "rates_by_unit_family",
    "rates_by_unit_language",
    "rel_error_profile",
    "repair_summary",
    "sign_flip_p",
    "taxonomy",
    "tolerance_sweep",
    "wilson_interval",
    "wrong_kind",
]
