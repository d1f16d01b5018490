"""Every report table, in display order: the core tables and, when the run has them, the
calibration and Experiment A tables."""

from __future__ import annotations

from causalverify.records import Summary
from causalverify.report._inference import inference_tables
from causalverify.report._tables import (
    Table,
    by_family,
    by_language,
    executed_wrong,
    extraction,
    language_table,
    leaderboard,
    pairwise,
    power,
    rank_agreement,
    rel_error,
    stability,
    sweep,
    taxonomy,
)
from causalverify.report.calibration import calibration_tables
from causalverify.report.experiment_a_tables import experiment_a_tables
from causalverify.report.repair import repair_tables

#: rank correlations (Kendall τ, Spearman ρ) are shown from this many models on: with two or
#: three, τ takes only a handful of values (two models: ±1) and says nothing
MIN_RANKED = 4


def all_tables(s: Summary) -> list[Table]:
    """Every report table, in display order."""
    tables = [leaderboard(s), *inference_tables(s)]  # L2c beside the headline, not in it
    if s.repair:  # a repair-mode run: what repair did comes next
        tables += repair_tables(s.repair)
    if s.pairwise.pairs:  # two or more units
        tables.append(pairwise(s))
    if s.power.model_dump(exclude_unset=True):
        tables.append(power(s))
    tables.append(by_family(s))
    if s.rates_by_language:  # only for runs with more than one language
        tables.append(by_language(s))
    ranked = len(s.units) >= MIN_RANKED  # rank statistics need a few models
    builders = (executed_wrong, rank_agreement, stability, sweep, taxonomy, extraction, rel_error)
    tables += [build(s) for build in builders if ranked or build not in (rank_agreement, stability)]
    if s.language_invariance:  # only for runs with both languages
        tables.append(language_table(s.language_invariance))
    if s.calibration:  # only when the run holds calibration rows
        tables += calibration_tables(s.calibration)
    if s.experiment_a:  # only when the run folder holds Experiment A results
        tables += experiment_a_tables(s.experiment_a)
    return tables
