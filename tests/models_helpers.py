"""Shared helpers for the model-provider tests: a small scenario and a sleep recorder."""

from __future__ import annotations

from causalverify.scenarios.model import Canonical, Scenario


def make_scenario(sid: str = "s001", family: str = "did") -> Scenario:
    """A minimal but valid scenario record (no data file is read by the providers)."""
    return Scenario.model_validate(
        {
            "id": sid,
            "index": int(sid.lstrip("s")),
            "family": family,
            "difficulty": "easy",
            "group": "test",
            "suite_seed": 1,
            "attempt": 0,
            "beta": 2.0,
            "params": {"n_units": 10},
            "topic": "minimum wage",
            "title": "A test scenario",
            "research_question": "Does the policy raise y?",
            "data_description": "A balanced panel.",
            "columns": {"y": "outcome"},
            "target": "the average effect",
            "facts": {
                "n_units": 200,
                "n_periods": 8,
                "treat_start": 5,
                "treated_units": "unit_id < 100",
            },
            "data_file": f"data/{sid}.csv",
            "csv_sha256": "0" * 64,
            "canonical": Canonical(estimate=2.1, se=0.1, n=100, method="twfe"),
        }
    )


class SleepRecorder:
    """Injected in place of ``time.sleep``: records the requested waits, sleeps not at all."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)
