"""The report's summary (``summary.json``) as a typed record: :class:`Summary`.

The analysis computes the summary as JSON-ready values (:func:`causalverify.analysis.analyze_cells`);
the report adds the run's settings and the sections of its side tables, validates the whole into
:class:`Summary` and writes :meth:`Summary.stored`; every table, figure and terminal line reads
the typed attributes. The record is versioned by ``schema`` (:data:`SUMMARY_SCHEMA`); reading
and writing again gives back exactly the keys it was read from (a key the analysis left out, such
as ``inference`` of a run without layer L2c, stays out).

Sections with their own writer and version (``calibration``, ``experiment_a``) and the deep
per-layer statistics that only their one table reads (``inference``, ``stability``,
``language_invariance``, ``repair``) are kept as JSON objects.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from causalverify.records.run import Extractor, Profile, RunMode, ScoringSettings

#: the version of ``summary.json``
SUMMARY_SCHEMA: Final = "causalverify.summary/1"

#: a JSON number (an integer stays an integer when written back)
Number = int | float


class _Entry(BaseModel):
    """A nested entry: typed where read, other keys kept as they are."""

    model_config = ConfigDict(frozen=True, extra="allow")


class RateDetail(_Entry):
    """A share of cells with its interval (``causalverify.analysis`` ``Rate.as_dict``)."""

    k: int
    n: int
    clusters: int | None = None
    rate: float | None = None
    lo: float | None = None
    hi: float | None = None
    se: float | None = None
    method: str | None = None
    undecided: int = 0
    k_upper: int | None = None
    rate_upper: float | None = None


class Intervals(_Entry):
    """How every rate's interval was computed."""

    method: Literal["cluster", "bootstrap", "wilson"] = "wilson"
    confidence: float = 0.95
    cluster: str | None = None
    seed: int | None = None
    n_resamples: int | None = None


class Incomplete(_Entry):
    """Cells without an answer (``api_error``), in all and per model."""

    cells: int = 0
    by_model: dict[str, int] = Field(default_factory=dict)


class CellCounts(_Entry):
    """Cells of one kind, in all and per unit."""

    cells: int = 0
    by_unit: dict[str, int] = Field(default_factory=dict)


class DeclaredUnit(_Entry):
    asked: int = 0
    accepted: int = 0


class Declared(_Entry):
    """Cells asked to declare their estimate, and those whose declaration stdout prints."""

    asked: int = 0
    accepted: int = 0
    by_unit: dict[str, DeclaredUnit] = Field(default_factory=dict)


class Pair(_Entry):
    """One paired comparison of two units over their shared scenarios."""

    a: str
    b: str
    n: int = 0
    clusters: int = 0
    a_only: int = 0
    b_only: int = 0
    difference: float | None = None
    lo: float | None = None
    hi: float | None = None
    p: float | None = None
    p_holm: float | None = None
    p_holm_leader: float | None = None
    vs_leader: bool = False
    undecided: bool = False


class Pairwise(_Entry):
    """Paired comparisons of the units on L2b+, and who ties with the leader."""

    layer: str | None = None
    leader: str | None = None
    tied_with_leader: list[str] = Field(default_factory=list)
    pairs: list[Pair] = Field(default_factory=list)
    adjustment: str | None = None
    alpha: float | None = None
    test: str | None = None


class Power(_Entry):
    """The minimum detectable L2b+ difference of the design."""

    mde: float | None = None
    mde_by_scenarios: dict[str, float | None] = Field(default_factory=dict)
    scenarios: int | None = None
    basis: str | None = None
    alpha: float | None = None
    power: float | None = None
    pairs_per_scenario: Number | None = None
    variance_per_pair: Number | None = None


class ExecutedWrong(_Entry):
    """Cells that executed and reported a wrong number, pooled and per unit."""

    count: int
    denominator: int
    share: float | None = None
    by_unit: dict[str, RateDetail] = Field(default_factory=dict)


class Ranking(_Entry):
    order: list[str]
    ranks: dict[str, Number]


class RankCorrelation(_Entry):
    """Agreement of a layer's ranking with L2b+'s."""

    kendall_tau: float | None = None
    kendall_p: float | None = None
    spearman_rho: float | None = None
    spearman_p: float | None = None
    pairwise_accuracy: float | None = None
    top1_match: bool | None = None
    top2_match: bool | None = None
    bottom2_match: bool | None = None
    bootstrap_ci: dict[str, Any] = Field(default_factory=dict)


class SweepDetail(_Entry):
    """L2b+ at one tolerance: rates and how the ranking compares with the default's."""

    executed: int | None = None
    executed_wrong: int | None = None
    ranking_identical: bool | None = None
    kendall_tau_vs_default: float | None = None
    rates: dict[str, float | None] = Field(default_factory=dict)


class Taxonomy(_Entry):
    """Failure categories, pooled and per unit."""

    overall: dict[str, int] = Field(default_factory=dict)
    by_unit: dict[str, dict[str, int]] = Field(default_factory=dict)
    #: missing package -> cells
    missing_packages: dict[str, int] = Field(default_factory=dict)


class ExtractionProfile(_Entry):
    """How the estimate was read from the cells of a unit that executed."""

    executed: int = 0
    ambiguous: int = 0
    fit_match: int = 0
    fitted_right_reported_wrong: int = 0


class RunSettings(_Entry):
    """The run's settings the report shows (the run metadata's machine-independent keys)."""

    suite: str | None = None
    suite_seed: int | None = None
    models: list[str] | None = None
    languages: list[str] | None = None
    samples: int | None = None
    protocol: str | None = None
    profile: Profile | None = None
    tolerance: float | None = None
    extractor: Extractor | None = None
    rescored: ScoringSettings | None = None
    mode: RunMode | None = None


class Summary(BaseModel):
    """``summary.json``: every analysis of a run's cells, and what the report adds."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    schema_version: Literal["causalverify.summary/1"] = Field(alias="schema")
    seed: int
    unit: Literal["model", "model_language"]
    units: list[str]
    models: list[str]
    languages: list[str]
    families: list[str]
    n_cells: int
    incomplete: Incomplete
    n_scenarios: int
    n_scoreable: int
    #: unit -> layer -> rate
    rates: dict[str, dict[str, float | None]]
    #: unit -> layer -> rate with its interval
    rates_detail: dict[str, dict[str, RateDetail]]
    intervals: Intervals
    #: unit -> family -> layer -> rate with its interval
    rates_by_family: dict[str, dict[str, dict[str, RateDetail]]]
    conditional_pass: dict[str, float | None]
    conditional_pass_detail: dict[str, RateDetail]
    pairwise: Pairwise
    #: unit -> [best, worst] rank
    rank_intervals: dict[str, list[Number]]
    power: Power
    executed_wrong: ExecutedWrong
    unscoreable: dict[str, int]
    #: cells whose L2b+ is only bounded
    undecided: CellCounts
    #: cells whose answer had more than one code block of its language (the first ran)
    several_blocks: CellCounts = Field(default_factory=CellCounts)
    declared: Declared
    rankings: dict[str, Ranking]
    rank_correlation: dict[str, RankCorrelation]
    stability: dict[str, Any]
    #: tolerance -> unit -> cells passing L2b+
    tolerance_sweep: dict[str, dict[str, int]]
    tolerance_sweep_detail: dict[str, SweepDetail]
    taxonomy: Taxonomy
    extraction: dict[str, ExtractionProfile]
    rel_error: dict[str, dict[str, Number | None]]
    # present only when the cells hold them
    inference: dict[str, Any] | None = None
    rates_by_language: dict[str, dict[str, dict[str, RateDetail]]] | None = None
    language_invariance: dict[str, Any] | None = None
    # added by the report
    title: str | None = None
    run: RunSettings | None = None
    calibration: dict[str, Any] | None = None
    repair: dict[str, Any] | None = None
    experiment_a: dict[str, Any] | None = None

    @classmethod
    def of(cls, data: dict[str, Any]) -> Summary:
        """Validate JSON-ready summary values (``analyze_cells`` and the report's additions)."""
        return cls.model_validate(data)

    def stored(self) -> dict[str, Any]:
        """The JSON values of ``summary.json``: exactly the keys the summary was made from."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def with_entries(self, **entries: Any) -> Summary:
        """A copy with top-level entries added or replaced (validated as the rest)."""
        return Summary.of({**self.stored(), **entries})

    @property
    def order(self) -> list[str]:
        """The units best first by L2b+."""
        return self.rankings["L2b_plus"].order
