"""The run metadata every command reads, typed: :class:`causalverify.records.RunMeta`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from causalverify.errors import StoreError
from causalverify.records import DEFAULT_TOLERANCE, RUN_META_SCHEMA, RunMeta
from causalverify.runner.meta import META_SCHEMA, merge_meta, read_meta
from causalverify.store import RunStore

#: the keys a repair-mode run records (values as a run writes them)
STORED: dict[str, Any] = {
    "schema": RUN_META_SCHEMA,
    "suite": "default",
    "suite_path": "/suites/default",
    "suite_seed": 20260101,
    "suite_fingerprint": "ab" * 32,
    "suite_scenarios": 100,
    "models": ["reference/textbook", "reference/naive"],
    "languages": ["r", "python"],
    "samples": 1,
    "protocol": "default",
    "profile": "default",
    "tolerance": 0.5,
    "extractor": "deterministic",
    "judge_model": None,
    "declare": True,
    "model_options": {"max_tokens": 8192, "reasoning_effort": None, "temperature": None},
    "base_url": None,
    "limits": {"cpu_seconds": 60.0, "max_output_bytes": 1000000, "memory_mb": 2048},
    "scoring_budget": {"memory_mb": 2048, "seconds": 60.0},
    "unsafe": False,
    "mode": {"max_turns": 3, "name": "repair"},
    "sandbox_policy": {"kind": "BwrapSandbox"},
    "environment": None,
    "package_versions": {"numpy": "2.4.6", "rdrobust": None},
    "python": "3.11.7",
    "git_commit": {"commit": "0" * 40, "dirty": False},
    "command_line": ["causalverify", "run"],
    "rescored": None,
    "a_key_of_a_later_version": [1, 2],
}


def test_the_metadata_is_read_typed_and_written_back_as_it_was() -> None:
    meta = RunMeta.of(STORED)
    assert meta.stored() == dict(sorted(STORED.items()))  # no key added, dropped or retyped
    assert meta.is_repair and meta.mode is not None and meta.mode.max_turns == 3
    assert meta.model_options.max_tokens == 8192
    assert meta.tolerance == 0.5 and meta.profile == "default"
    assert META_SCHEMA == RUN_META_SCHEMA  # the runner writes the version the record reads


def test_a_store_that_recorded_little_reads_the_defaults() -> None:
    meta = RunMeta.of({"protocol": "default"})
    assert meta.tolerance == DEFAULT_TOLERANCE and meta.extractor == "deterministic"
    assert not meta.is_repair and meta.mode_or_single.name == "single"
    assert meta.has("protocol") and not meta.has("tolerance")
    assert meta.stored() == {"protocol": "default"}


@pytest.mark.parametrize(
    ("key", "value"),
    [("tolerance", "half"), ("profile", "strict"), ("mode", {"name": "twice"}), ("models", 3)],
)
def test_a_malformed_value_is_refused(key: str, value: object) -> None:
    with pytest.raises(ValueError, match=key):
        RunMeta.of({**STORED, key: value})


def test_the_store_gives_its_metadata_typed(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "run", create=True) as store:
        store.set_meta(STORED)
        assert store.run_meta() == RunMeta.of(store.meta())
        assert store.run_meta().stored() == dict(sorted(STORED.items()))


def test_a_store_may_be_reused_only_with_its_identity_and_growing_keys() -> None:
    stored = RunMeta.of({k: v for k, v in STORED.items() if k != "declare"})
    same = RunMeta.of({**STORED, "declare": False})
    # a store recorded before ``declare`` existed counts as not declaring
    assert merge_meta(stored, same) is same
    with pytest.raises(StoreError, match=r"declare: stored false, now true"):
        merge_meta(stored, RunMeta.of(STORED))
    with pytest.raises(StoreError, match=r"tolerance: stored 0.5, now 0.25"):
        merge_meta(stored, same.with_entries(tolerance=0.25))
    fewer = same.with_entries(models=["reference/textbook"], samples=2)
    with pytest.raises(StoreError, match="models: the store also holds reference/naive"):
        merge_meta(stored, fewer)
    # a stored model without cells may be dropped; samples may grow
    assert merge_meta(stored, fewer, {"models": ["reference/textbook"]}) is fewer
    with pytest.raises(StoreError, match="samples: stored 2, now 1"):
        merge_meta(fewer, same, {"models": []})
    assert merge_meta(RunMeta(), same) is same  # a new store takes any settings


def test_metadata_that_is_not_a_runs_is_refused_naming_the_folder(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"run holds metadata that is not a run's \(.*tolerance"):
        read_meta({**STORED, "tolerance": "half"}, tmp_path / "run")
    assert read_meta(STORED, tmp_path).stored() == dict(sorted(STORED.items()))


def test_the_scoring_settings_are_those_the_stored_scores_were_made_with() -> None:
    own = RunMeta.of({"profile": "default", "tolerance": 0.5, "extractor": "deterministic"})
    assert (own.scoring.profile, own.scoring.tolerance) == ("default", 0.5)
    rescored = RunMeta.of(
        {
            "profile": "default",
            "tolerance": 0.5,
            "extractor": "deterministic",
            "rescored": {"profile": "paper", "tolerance": 0.25, "extractor": "deterministic"},
        }
    )
    assert (rescored.scoring.profile, rescored.scoring.tolerance) == ("paper", 0.25)
