"""The default grid follows the parameter table of BENCHMARK.md §2.1."""

from __future__ import annotations

from collections import Counter

import pytest

from causalverify.scenarios.grid import DEFAULT_GRID, grid_for, scenario_id, suite_entries

# The table of BENCHMARK.md §2.1, transcribed: (family, group, count, params, sigma, betas,
# difficulty split of the group).
TABLE = [
    ("did", "base", {"n_units": 200, "n_periods": 8}, 0.5,
     [-0.30, -0.15, 0.25, 0.20, 0.18, 0.22, -0.12, -0.25, 0.28, 0.35], (3, 4, 3)),
    ("event_study", "base", {"n_stocks": 80}, 0.015,
     [-0.020, -0.025, -0.018, 0.022, 0.030, -0.028, -0.035, -0.015], (2, 3, 3)),
    ("iv", "base", {"n": 500}, 0.3, [0.40, 0.40, -0.15, 0.40, 0.40, -0.30], (2, 2, 2)),
    ("rdd", "base", {"n": 600}, 0.15, [0.25, 0.25, 0.25, -0.25, 0.25, 0.25], (2, 2, 2)),
    ("did", "easy", {"n_units": 200, "n_periods": 8}, 0.4,
     [-0.30, 0.25, -0.20, 0.18, -0.35, 0.22, -0.15], (7, 0, 0)),
    ("did", "medium", {"n_units": 150, "n_periods": 8}, 0.5,
     [-0.20, 0.15, 0.30, -0.10, 0.20, -0.25, 0.12], (0, 7, 0)),
    ("did", "hard", {"n_units": 100, "n_periods": 10}, 0.7,
     [-0.12, 0.08, -0.18, 0.10, -0.15, 0.25], (0, 0, 6)),
    ("event_study", "easy", {"n_stocks": 100}, 0.012,
     [-0.020, 0.025, -0.030, 0.018, -0.028], (5, 0, 0)),
    ("event_study", "medium", {"n_stocks": 80}, 0.015,
     [0.022, -0.015, -0.025, 0.030, -0.020, 0.018], (0, 6, 0)),
    ("event_study", "hard", {"n_stocks": 60}, 0.020,
     [-0.018, 0.015, -0.022, 0.028, -0.012], (0, 0, 5)),
    ("iv", "easy", {"n": 500}, 0.25, [0.40, -0.35, 0.30, -0.25, 0.45, -0.40], (6, 0, 0)),
    ("iv", "medium", {"n": 400}, 0.3, [0.35, -0.30, 0.25, -0.20, 0.50, -0.45], (0, 6, 0)),
    ("iv", "hard", {"n": 300}, 0.4, [0.20, -0.15, 0.30, -0.25, 0.15, -0.35], (0, 0, 6)),
    ("rdd", "easy", {"n": 600}, 0.12, [0.25, -0.20, 0.30, -0.15, 0.22], (5, 0, 0)),
    ("rdd", "medium", {"n": 500}, 0.15, [-0.25, 0.18, -0.30, 0.20, -0.22, 0.28], (0, 6, 0)),
    ("rdd", "hard", {"n": 400}, 0.2, [0.15, -0.18, 0.12, -0.25, 0.22], (0, 0, 5)),
]  # fmt: skip


def test_family_counts() -> None:
    counts = Counter(e.family for e in DEFAULT_GRID)
    assert counts == {"did": 30, "event_study": 24, "iv": 24, "rdd": 22}
    assert len(DEFAULT_GRID) == 100


def test_grid_follows_table_in_order() -> None:
    expected = []
    for family, group, sizes, sigma, betas, split in TABLE:
        levels = ["easy"] * split[0] + ["medium"] * split[1] + ["hard"] * split[2]
        assert len(levels) == len(betas)
        for beta, level in zip(betas, levels, strict=True):
            expected.append((family, group, level, beta, {**sizes, "sigma": sigma}))
    actual = [(e.family, e.group, e.difficulty, e.beta, e.params_dict()) for e in DEFAULT_GRID]
    assert actual == expected


def test_negative_effects_keep_their_sign() -> None:
    rdd_betas = [e.beta for e in DEFAULT_GRID if e.family == "rdd"]
    assert sum(b < 0 for b in rdd_betas) == 8


def test_ids_are_zero_padded() -> None:
    assert scenario_id(1, 100) == "s001"
    assert scenario_id(100, 100) == "s100"
    assert scenario_id(7, 12) == "s007"
    assert scenario_id(7, 1000) == "s0007"
    assert scenario_id(10000, 10000) == "s10000"


def test_larger_suites_cycle_the_grid_with_growing_index() -> None:
    entries = list(suite_entries("default", 250))
    assert [i for i, _ in entries] == list(range(1, 251))
    assert entries[100][1] == DEFAULT_GRID[0] and entries[249][1] == DEFAULT_GRID[49]
    assert [e for _, e in entries[:10]] == list(DEFAULT_GRID[:10])


def test_smoke_suite_has_one_scenario_per_family() -> None:
    assert [e.family for e in grid_for("smoke")] == ["did", "event_study", "iv", "rdd"]
    with pytest.raises(ValueError, match="unknown suite"):
        grid_for("nope")
    with pytest.raises(ValueError, match="at least one"):
        list(suite_entries("default", 0))
