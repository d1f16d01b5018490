# Within (two-way demeaned) estimator with a cluster bootstrap, reported as YAML
import numpy as np
import pandas as pd

df = pd.read_csv("data/scenario.csv")
start = int(df.loc[df.treat_x_post == 1, "period"].min())
SEED, REPS, LEVEL = 11, 199, 0.95


wide_y = df.pivot(index="unit_id", columns="period", values="y").to_numpy()
wide_d = df.pivot(index="unit_id", columns="period", values="treat_x_post").to_numpy()


def demean(m):
    return m - m.mean(axis=1, keepdims=True) - m.mean(axis=0, keepdims=True) + m.mean()


def within(y, d):
    dd, yy = demean(d), demean(y)
    return float((dd * yy).sum() / (dd * dd).sum())


b = within(wide_y, wide_d)
rng = np.random.default_rng(SEED)
n_units = wide_y.shape[0]
draws = []
for _ in range(REPS):
    pick = rng.integers(0, n_units, size=n_units)
    draws.append(within(wide_y[pick], wide_d[pick]))
se = float(np.std(draws, ddof=1))
pooled = float(df.loc[df.treat_x_post == 1, "y"].mean() - df.loc[df.treat_x_post == 0, "y"].mean())

main_txt = f"{b:.5f}"
naive_txt = f"{pooled:.5f}"
print("analysis: policy adoption")
print("setup:")
print(f"  units: {df.unit_id.nunique()}")
print(f"  periods: {df.period.nunique()}")
print(f"  first_treated_period: {start}")
print(f"  confidence_level: {LEVEL}")
print(f"  bootstrap_reps: {REPS}")
print(f"  seed: {SEED}")
print("within_estimator:")
print("  label: two-way within estimator (unit and period demeaned)")
print(f"  coefficient: {main_txt}")
print(f"  bootstrap_se: {se:.5f}")
print(f"  ci_95: [{b - 1.96 * se:.5f}, {b + 1.96 * se:.5f}]")
print("naive_pooled_ols:")
print(f"  coefficient: {naive_txt}")
est_txt = f"{b:.6f}"
print(f"ESTIMATE: {est_txt}")
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "value": est_txt,
            "anchor": "ESTIMATE:",
            "unit": {"scale": "as_printed", "window": None},
            "style": ["YAML-ish nested keys", "within estimator label", "ESTIMATE line"],
            "decoys": [
                {
                    "kind": "naive_model_after_main",
                    "printed": naive_txt,
                    "anchor": ["naive_pooled_ols:", "coefficient:"],
                },
                {"kind": "setup_constant", "printed": str(LEVEL), "anchor": "confidence_level:"},
                {"kind": "setup_constant", "printed": str(SEED), "anchor": "seed:"},
                {
                    "kind": "setup_constant",
                    "printed": str(start),
                    "anchor": "first_treated_period:",
                },
            ],
            "equivalents": [
                {
                    "printed": main_txt,
                    "anchor": ["within_estimator:", "coefficient:"],
                    "unit": {"scale": "as_printed", "window": None},
                }
            ],
        }
    )
    + "\n"
)
