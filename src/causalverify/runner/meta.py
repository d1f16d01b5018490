"""Run metadata: what is recorded when a run starts, and when a run folder may be reused.

Compatibility rule. A run folder can be resumed or extended by a later run when the later run
uses the same suite (same scenarios and data, by fingerprint), the same prompt protocol, scoring
(profile, tolerance, extractor, judge), whether cells declare their estimate (``run
--no-declare``; a store recorded before declarations existed counts as not declaring), model
options, base URL, resource limits and sandbox mode.
Models and languages may only grow (the later run names every one that has stored cells, and may
add more; a model or language without a single stored cell, e.g. a typo whose first request
failed, may be replaced) and the number of samples may only grow. Anything else is refused with a
:class:`~causalverify.errors.StoreError`, so two different experiments never mix in one store.
A folder in which no cell has an answer yet (a mistyped ``--base-url`` or model failed at once)
holds no result to protect: it takes the corrected settings as a new run would.

Environment rule. The prompt lists what the execution environment has installed (the manifest,
recorded as ``environment``). Once a cell has an answer, a resumed run keeps describing the
recorded environment, whatever has been installed or removed since, so one run never mixes two
prompt versions; :func:`environment_changes` says what changed, and the run reports it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import platform
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

from causalverify.errors import StoreError
from causalverify.records import RUN_META_SCHEMA, Manifest, RunMeta, RunMode
from causalverify.records.run import ModelOptionsMeta

if TYPE_CHECKING:
    from causalverify.runner.config import RunConfig
    from causalverify.runner.stages import Stages
    from causalverify.scenarios.model import Scenario

META_SCHEMA: Final = RUN_META_SCHEMA

#: metadata keys that must be equal for two runs to share a store
IDENTITY_KEYS: Final[tuple[str, ...]] = (
    "schema",
    "suite_fingerprint",
    "suite_seed",
    "protocol",
    "profile",
    "tolerance",
    "extractor",
    "judge_model",
    "model_options",
    "base_url",
    "limits",
    "unsafe",
    "mode",
    "declare",
)
#: the value an identity key has in a store written before the key was recorded
_BEFORE: Final[dict[str, Any]] = {"declare": False}

_PACKAGES: Final = (
    "causalverify",
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "linearmodels",
    "pyfixest",
    "rdrobust",
    "pydantic",
    "openai",
    "anthropic",
)


def suite_fingerprint(scenarios: Sequence[Scenario]) -> str:
    """SHA-256 of every scenario record (text, facts, CSV hash, canonical), in suite order."""
    digest = hashlib.sha256()
    for scenario in scenarios:
        digest.update(scenario.model_dump_json().encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def build_meta(
    config: RunConfig,
    stages: Stages,
    scenarios: Sequence[Scenario],
    suite_root: Path,
    suite_name: str | None = None,
    environment_changes: Sequence[str] | None = None,
) -> RunMeta:
    """The metadata recorded at the start of a run (``suite_name``: the named suite it was built
    as, e.g. ``modern``; ``environment_changes``: what changed since a resumed run's environment
    was recorded, recorded when given)."""
    # keys recorded only when they hold something, so runs without them keep the metadata they
    # always had: the suite's name, repair mode (absent in single mode), environment changes
    optional: dict[str, Any] = {}
    if suite_name:
        optional["suite"] = suite_name
    if config.mode == "repair":
        optional["mode"] = RunMode(name="repair", max_turns=config.max_turns)
    if environment_changes is not None:
        optional["environment_changes"] = list(environment_changes)
    return RunMeta(
        schema=META_SCHEMA,
        suite_path=str(Path(suite_root).resolve()),
        suite_seed=scenarios[0].suite_seed if scenarios else None,
        suite_fingerprint=suite_fingerprint(scenarios),
        suite_scenarios=len(scenarios),
        models=list(config.models),
        languages=list(config.languages),
        samples=config.samples,
        protocol=config.protocol,
        profile=config.profile,
        tolerance=config.tolerance,
        extractor=config.extractor,
        judge_model=config.judge_model,
        # whether cells are asked to declare their estimate (the paper protocol never is)
        declare=config.declare and config.protocol == "default",
        # the options that change an answer (temperature, max_tokens, reasoning_effort; the
        # seed when set)
        model_options=ModelOptionsMeta.model_validate(config.access.options.cache_fields()),
        base_url=config.access.base_url,
        limits=dataclasses.asdict(config.limits),
        scoring_budget=dataclasses.asdict(config.scoring_budget),
        unsafe=config.unsafe,
        sandbox_policy=(dict(stages.sandbox_policy) if stages.sandbox_policy is not None else None),
        environment=(
            stages.manifest.model_dump(mode="json") if stages.manifest is not None else None
        ),
        package_versions=package_versions(),
        python=platform.python_version(),
        git_commit=git_commit(Path(__file__).resolve().parent),
        command_line=list(config.command_line),
        **optional,
    )


def read_meta(stored: Mapping[str, Any], where: Path | str) -> RunMeta:
    """The typed metadata of the store at ``where`` (``RunStore.meta()``).

    Raises
    ------
    StoreError
        If the store holds metadata that is not a run's (a malformed value).
    """
    try:
        return RunMeta.of(stored)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        raise StoreError(
            f"{where} holds metadata that is not a run's ({key}: {first['msg']}); use another "
            "--out folder"
        ) from None


def _identity(meta: RunMeta) -> dict[str, Any]:
    """The values of the identity keys as recorded (JSON); a key a store did not record counts
    as the value stores had before it was recorded (None unless :data:`_BEFORE` names one)."""
    recorded = meta.stored()
    return {key: recorded[key] if key in recorded else _BEFORE.get(key) for key in IDENTITY_KEYS}


def merge_meta(
    stored: RunMeta,
    new: RunMeta,
    held: Mapping[str, Iterable[str]] | None = None,
) -> RunMeta:
    """Check that ``new`` may reuse a store holding ``stored``; return the metadata to write.

    ``held`` maps ``"models"`` and ``"languages"`` to the values that have stored cells; a stored
    value without cells may be dropped. Without ``held`` every stored value counts as held.

    Raises
    ------
    StoreError
        If an identity key differs, or models, languages or samples shrink.
    """
    if not stored.recorded:
        return new
    before, now = _identity(stored), _identity(new)
    problems = [
        f"{key}: stored {_short(before[key])}, now {_short(now[key])}"
        for key in IDENTITY_KEYS
        if before[key] != now[key]
    ]
    for key, was, is_now in (
        ("models", stored.models, new.models),
        ("languages", stored.languages, new.languages),
    ):
        keep = set(held[key]) if held is not None and key in held else None
        missing = [v for v in was if v not in is_now and (keep is None or v in keep)]
        if missing:
            problems.append(f"{key}: the store also holds {', '.join(missing)}")
    if stored.samples > new.samples:
        problems.append(f"samples: stored {stored.samples}, now {new.samples}")
    if problems:
        raise StoreError(
            "the run folder holds a different run configuration ("
            + "; ".join(problems)
            + "); use another --out folder, or repeat the stored settings"
        )
    return new


def recorded_environment(stored: Mapping[str, Any]) -> Manifest | None:
    """The environment manifest a store recorded, or None (none recorded, or unreadable)."""
    try:
        value = RunMeta.of(stored).environment
    except ValueError:  # metadata that is not a run's
        return None
    if value is None:
        return None
    try:
        return Manifest.model_validate(value)
    except ValueError:
        return None


def environment_changes(recorded: Manifest, now: Manifest) -> list[str]:
    """What differs between the recorded environment and the current one, one phrase each
    (``"R package fixest 0.12.1 added"``); empty when they agree."""
    changes: list[str] = []
    if recorded.r_version != now.r_version:
        changes.append(f"R {recorded.r_version or 'absent'} -> {now.r_version or 'absent'}")
    if recorded.python_version != now.python_version:
        changes.append(f"Python {recorded.python_version} -> {now.python_version}")
    for language, old, new in (
        ("R", recorded.r_packages, now.r_packages),
        ("Python", recorded.python_packages, now.python_packages),
    ):
        for name in sorted(set(old) | set(new)):
            if name not in old:
                changes.append(f"{language} package {name} {new[name]} added")
            elif name not in new:
                changes.append(f"{language} package {name} {old[name]} removed")
            elif old[name] != new[name]:
                changes.append(f"{language} package {name} {old[name]} -> {new[name]}")
    return changes


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages that can change a result (None when absent)."""
    versions: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit(path: Path) -> dict[str, Any] | None:
    """The commit (and whether the tree is dirty) of the checkout holding ``path``, else None."""
    try:
        head = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if head.returncode != 0:
            return None
        status = subprocess.run(
            ["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": head.stdout.strip(), "dirty": bool(status.stdout.strip())}
