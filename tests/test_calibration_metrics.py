"""Known-answer tests of the calibration metrics, and cross-checks against scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2_contingency, mannwhitneyu

from causalverify.calibration import calibration_frame, summarize_calibration
from causalverify.calibration.metrics import (
    auroc,
    bin_index,
    brier,
    confidence_gap,
    ece,
    ece_bootstrap,
    missingness_test,
    p_confident_when_wrong,
    reliability_bins,
)
from causalverify.store import CalibrationRecord, CellKey

# six cells; by hand (bins are [k/10, (k+1)/10), 1.0 in the last):
#   bin 3: {0.3 wrong}            |0 - 0.3|   * 1/6
#   bin 7: {0.7 right, 0.7 wrong} |0.5 - 0.7| * 2/6
#   bin 8: {0.8 wrong}            |0 - 0.8|   * 1/6
#   bin 9: {0.9 right, 1.0 right} |1 - 0.95|  * 2/6
#   ECE = (0.3 + 0.4 + 0.8 + 0.1) / 6 = 1.6 / 6
CONF = [0.9, 0.8, 0.3, 0.7, 0.7, 1.0]
RIGHT = [1, 0, 0, 1, 0, 1]


def test_ece_by_hand() -> None:
    assert ece(CONF, RIGHT) == pytest.approx(1.6 / 6)


def test_bins_put_decimal_edges_in_the_bin_they_name() -> None:
    values = [0.0, 0.1, 0.3, 0.7, 0.1 * 3, 0.7 + 1e-12, 0.7 - 1e-6, 0.999, 1.0]
    assert list(bin_index(values)) == [0, 1, 3, 7, 3, 7, 6, 9, 9]
    # np.digitize on linspace edges would put 0.3 in bin 2: the bug the rule avoids
    assert int(np.digitize(0.3, np.linspace(0, 1, 11))) - 1 == 2


def test_reliability_bins_by_hand() -> None:
    bins = reliability_bins(CONF, RIGHT)
    assert [b.n for b in bins] == [0, 0, 0, 1, 0, 0, 0, 2, 1, 2]
    assert bins[9].mean_confidence == pytest.approx(0.95) and bins[9].accuracy == 1.0
    assert bins[7].accuracy == 0.5 and bins[0].mean_confidence is None
    assert (bins[3].lo, bins[3].hi) == (0.3, 0.4)


def test_brier_gap_and_confident_wrong_by_hand() -> None:
    # Brier: (0.01 + 0.64 + 0.09 + 0.09 + 0.49 + 0) / 6
    assert brier(CONF, RIGHT) == pytest.approx(1.32 / 6)
    # right: 0.9, 0.7, 1.0 (mean 0.8667); wrong: 0.8, 0.3, 0.7 (mean 0.6)
    assert confidence_gap(CONF, RIGHT) == pytest.approx(2.6 / 3 - 0.6)
    # strictly above 0.8 among the wrong: none (0.8 itself does not count)
    assert p_confident_when_wrong(CONF, RIGHT) == 0.0
    assert p_confident_when_wrong([0.81, 0.5, 0.95], [0, 0, 1]) == 0.5


def test_auroc_by_hand_with_ties() -> None:
    # pairs (right, wrong): 0.9 beats 0.8, 0.3, 0.7 -> 3; 0.7 beats 0.3, ties 0.7 -> 1.5,
    # loses to 0.8; 1.0 beats all -> 3. AUROC = 7.5 / 9
    assert auroc(CONF, RIGHT) == pytest.approx(7.5 / 9)
    assert auroc([0.1, 0.9], [0, 1]) == 1.0 and auroc([0.9, 0.1], [0, 1]) == 0.0
    assert auroc([0.5, 0.5, 0.5], [0, 1, 1]) == 0.5


def test_auroc_matches_mann_whitney_on_random_tied_data() -> None:
    rng = np.random.default_rng(7)
    conf = np.round(rng.uniform(0, 1, 300), 1)  # heavy ties
    right = (rng.uniform(0, 1, 300) < conf).astype(int)
    u = mannwhitneyu(conf[right == 1], conf[right == 0]).statistic
    assert auroc(conf, right) == pytest.approx(u / ((right == 1).sum() * (right == 0).sum()))


def test_undefined_metrics_are_none() -> None:
    assert confidence_gap([0.5, 0.6], [1, 1]) is None
    assert auroc([0.5, 0.6], [0, 0]) is None
    assert p_confident_when_wrong([0.9], [1]) is None
    assert ece([], []) is None and brier([], []) is None
    assert ece_bootstrap([], [], rng=np.random.default_rng(0)) is None


def test_ece_perfectly_calibrated_and_worst_case() -> None:
    assert ece([1.0, 1.0, 0.0, 0.0], [1, 1, 0, 0]) == 0.0
    assert ece([1.0, 0.0], [0, 1]) == 1.0


@pytest.mark.parametrize(
    ("conf", "right"), [([0.5, 1.2], [0, 1]), ([0.5, np.nan], [0, 1]), ([0.5, 0.6], [0, 2])]
)
def test_invalid_inputs_raise(conf: list[float], right: list[int]) -> None:
    with pytest.raises(ValueError):
        ece(conf, right)


def test_ece_bootstrap_is_seeded_and_matches_a_loop() -> None:
    rng = np.random.default_rng(3)
    conf = np.round(rng.uniform(0.4, 1.0, 60), 2)
    right = (rng.uniform(0, 1, 60) < 0.6).astype(int)
    a = ece_bootstrap(conf, right, rng=np.random.default_rng(11), n_resamples=300)
    b = ece_bootstrap(conf, right, rng=np.random.default_rng(11), n_resamples=300)
    assert a == b and a is not None
    # the vectorised resampling equals a plain loop over the same draws
    draws = np.random.default_rng(11).integers(0, 60, size=(300, 60))
    loop = [ece(conf[d], right[d]) for d in draws]
    assert a == pytest.approx(tuple(np.percentile(loop, [2.5, 97.5])))
    assert a[0] < ece(conf, right) < a[1]  # type: ignore[operator]


def test_missingness_chi_square_by_hand_and_against_scipy() -> None:
    # present: 5 wrong, 15 right; missing: 15 wrong, 5 right. Expected 10 everywhere, so the
    # Yates statistic is 4 * (|5 - 10| - 0.5)^2 / 10 = 8.1.
    missing = [0] * 20 + [1] * 20
    right = [0] * 5 + [1] * 15 + [0] * 15 + [1] * 5
    test = missingness_test(missing, right)
    assert test.table == ((5, 15), (15, 5))
    assert test.chi2 == pytest.approx(8.1) and test.dof == 1
    assert test.p == pytest.approx(chi2_contingency([[5, 15], [15, 5]]).pvalue)
    assert test.p is not None and test.p < 0.01 and test.note == "ok"
    assert test.fisher_p is not None and 0 < test.fisher_p < 0.01


def test_missingness_degenerate_tables() -> None:
    assert missingness_test([0, 0, 0], [1, 0, 1]).note == "undefined: no missing confidences"
    assert missingness_test([1, 1], [1, 0]).note == "undefined: every confidence is missing"
    assert missingness_test([0, 1], [1, 1]).note == "undefined: no wrong cells"
    assert missingness_test([], []).p is None
    small = missingness_test([0, 0, 1, 1], [1, 0, 0, 1])
    assert small.p is not None and "Fisher" in small.note


def _record(sid: str, model: str, confidences: dict[str, float | None]) -> CalibrationRecord:
    missing = {k: "null" for k, v in confidences.items() if v is None}
    return CalibrationRecord(
        key=CellKey(scenario_id=sid, model=model, language="r"),
        protocol="default",
        prompt=[],
        prompt_sha256="0",
        confidences=confidences,
        missing=missing,
        status="partial" if missing else "ok",
    )


def test_summary_excludes_unscoreable_cells_and_keeps_missing_ones() -> None:
    cells = pd.DataFrame(
        {
            "scenario_id": ["s1", "s2", "s3", "s4"],
            "model": ["m"] * 4,
            "language": ["r"] * 4,
            "sample": [0] * 4,
            "method": ["DID"] * 4,
            "L2b_plus": [1.0, 0.0, np.nan, 0.0],
        }
    )
    records = [
        _record("s1", "m", {"method": 0.9, "specification": 0.8, "numerical": 0.9}),
        _record("s2", "m", {"method": 0.9, "specification": 0.8, "numerical": 0.7}),
        _record("s3", "m", {"method": 0.9, "specification": 0.8, "numerical": 0.2}),
        _record("s4", "m", {"method": 0.9, "specification": 0.8, "numerical": None}),
    ]
    frame = calibration_frame(cells, records)
    summary = summarize_calibration(frame, n_resamples=50)
    entry = summary["protocols"]["default"]["models"]["m"]
    assert entry["n_elicited"] == 4 and entry["n_scoreable"] == 3
    numerical = entry["types"]["numerical"]
    assert numerical["n"] == 2 and numerical["n_missing"] == 1
    assert numerical["missing_reasons"] == {"null": 1}
    assert numerical["ece"] == pytest.approx((0.1 + 0.7) / 2)
    assert numerical["missingness"]["table"] == ((1, 1), (1, 0))
    again = summarize_calibration(frame, n_resamples=50)
    assert again == summary
