"""The run metadata every command reads: :class:`RunMeta`, and the scoring defaults it records.

A run store keeps its metadata as one JSON value per key (``causalverify.runner.meta`` writes
it when a run starts; ``score`` adds ``rescored``, ``calibrate`` adds ``calibration``, an Inspect
import adds ``source``). Every reader goes through :meth:`RunMeta.of`, so each key it reads is a
typed attribute. The model is versioned by ``schema`` (:data:`RUN_META_SCHEMA`); keys it does not
name are kept as they are, and :meth:`RunMeta.stored` gives back exactly the keys it was read
from, so reading and writing again changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

#: the version of the run metadata a run writes (``schema``)
RUN_META_SCHEMA: Final = "causalverify-run/1"
#: the relative tolerance of layer L2b+ when none is given (run, score, rescore, audit, release)
DEFAULT_TOLERANCE: Final[float] = 0.5

Profile = Literal["paper", "default"]
Extractor = Literal["deterministic", "judge", "both"]


class _Entry(BaseModel):
    """A nested entry of the metadata: typed where read, other keys kept as they are."""

    model_config = ConfigDict(frozen=True, extra="allow")


class ModelOptionsMeta(_Entry):
    """The generation options the run asked every model with."""

    temperature: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    seed: int | None = None


class ImportSource(_Entry):
    """Where an imported run came from (``import-inspect``): the task and its logs."""

    task: str | None = None
    #: the logs whose cells the run holds, in the order they were imported
    inspect_logs: list[str] | None = None
    #: the one log of an import made before several logs could join a run
    inspect_log: str | None = None

    @property
    def is_inspect(self) -> bool:
        """Whether the run was imported from Inspect logs."""
        return self.inspect_logs is not None or self.inspect_log is not None


class RunMode(_Entry):
    """How cells were asked: one turn (``single``) or with feedback (``repair``)."""

    name: Literal["single", "repair"]
    max_turns: int | None = None


class ScoringSettings(_Entry):
    """The scoring settings of a rescoring that differ from the run's own (``rescored``)."""

    profile: Profile
    tolerance: float
    extractor: Extractor


class RunMeta(BaseModel):
    """The metadata of a run store (every key optional: stores of older versions, imports and
    scratch stores hold fewer; a reader gets the documented default)."""

    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)

    #: the metadata's version (:data:`RUN_META_SCHEMA`); None in a store that never ran
    schema_version: str | None = Field(default=None, alias="schema")
    #: where an imported run came from (``import-inspect``: the log and task)
    source: ImportSource | None = None
    #: the named suite the run used (``modern``, ...), when it was built by name
    suite: str | None = None
    suite_path: str | None = None
    suite_seed: int | None = None
    suite_fingerprint: str | None = None
    suite_scenarios: int | None = None
    models: list[str] = Field(default_factory=list)
    languages: list[str] = Field(default_factory=list)
    samples: int = 1
    protocol: str = "default"
    profile: Profile = "default"
    tolerance: float = DEFAULT_TOLERANCE
    extractor: Extractor = "deterministic"
    judge_model: str | None = None
    #: whether cells were asked to declare their estimate (absent: a store from before)
    declare: bool = False
    model_options: ModelOptionsMeta = Field(default_factory=ModelOptionsMeta)
    base_url: str | None = None
    limits: dict[str, Any] | None = None
    scoring_budget: dict[str, float | int] | None = None
    unsafe: bool = False
    #: absent in single mode
    mode: RunMode | None = None
    sandbox_policy: dict[str, Any] | None = None
    environment: dict[str, Any] | None = None
    environment_changes: list[str] | None = None
    package_versions: dict[str, str | None] | None = None
    python: str | None = None
    git_commit: dict[str, Any] | None = None
    command_line: list[str] | None = None
    #: set by ``causalverify score`` when it rescored with settings other than the run's
    rescored: ScoringSettings | None = None
    #: what ``causalverify calibrate`` asked, by protocol
    calibration: dict[str, Any] | None = None

    @classmethod
    def of(cls, stored: Mapping[str, Any] | None) -> RunMeta:
        """The metadata of a store (``RunStore.meta()``) or of a release (``release.json["run"]``)."""
        return cls.model_validate(dict(stored or {}))

    def stored(self) -> dict[str, Any]:
        """The keys this metadata was read from (or given), as JSON values, sorted."""
        data = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return dict(sorted(data.items()))

    def with_entries(self, **entries: Any) -> RunMeta:
        """A copy with top-level entries added or replaced (validated as the rest)."""
        return RunMeta.of({**self.stored(), **entries})

    @property
    def recorded(self) -> bool:
        """Whether the store recorded any metadata (a new store has none)."""
        return bool(self.stored())

    def has(self, key: str) -> bool:
        """Whether the store recorded ``key`` (a default is not a recorded value)."""
        return key in self.stored()

    @property
    def scoring(self) -> ScoringSettings:
        """The settings the stored scores were made with: those of the last ``causalverify
        score`` that changed them (``rescored``), else the run's own."""
        own = ScoringSettings(
            profile=self.profile, tolerance=self.tolerance, extractor=self.extractor
        )
        return self.rescored or own

    @property
    def is_repair(self) -> bool:
        """Whether the run asked its cells in repair mode."""
        return self.mode is not None and self.mode.name == "repair"

    @property
    def mode_or_single(self) -> RunMode:
        """The run's mode, ``single`` when none was recorded."""
        return self.mode if self.mode is not None else RunMode(name="single")
