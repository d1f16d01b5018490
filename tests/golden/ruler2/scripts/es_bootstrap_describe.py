"""Average daily abnormal return after the announcement, with a stock-level cluster bootstrap."""

import json
import sys

import numpy as np
import pandas as pd

SEED = 2024
B = 499

data = pd.read_csv("data/scenario.csv")
data["after"] = (data["event_day"] >= 0).astype(float)
stocks = np.sort(data["stock_id"].unique())
print(f"Seed {SEED}, {B} bootstrap resamples of {len(stocks)} stocks (event days -10..+10)")


def pooled_ar(frame: pd.DataFrame) -> np.ndarray:
    """OLS of ret on [1, mkt_ret, after]; returns the coefficient vector."""
    X = np.column_stack([np.ones(len(frame)), frame["mkt_ret"], frame["after"]])
    coef, *_ = np.linalg.lstsq(X, frame["ret"].to_numpy(), rcond=None)
    return coef


point = pooled_ar(data)
by_stock = {s: g for s, g in data.groupby("stock_id")}
rng = np.random.default_rng(SEED)
draws = []
for _ in range(B):
    pick = rng.choice(stocks, size=len(stocks), replace=True)
    draws.append(pooled_ar(pd.concat([by_stock[s] for s in pick]))[2])
draws = pd.Series(draws, name="ar_post")

print("\nBootstrap distribution of the post-event abnormal return:")
print(draws.describe())
lo, hi = np.percentile(draws, [2.5, 97.5])
print(f"\n95% percentile interval: [{lo:.5f}, {hi:.5f}]")
print(f"Market beta (pooled): {point[1]:.3f}")
print(f"\nPoint estimate (full sample): {point[2]:.5f} per day  ({100 * point[2]:.2f}% per day)")
print(f"Bootstrap SE: {draws.std():.5f}")

# ---- golden truth (stderr) ----
described = str(draws.describe()).splitlines()


def described_value(key: str) -> str:
    return next(x.split()[1] for x in described if x.split() and x.split()[0] == key)


truth = {
    "style": "pandas describe() of bootstrap draws (count, mean, quartiles) printed before the point estimate, which is given per day in decimal and in percent",
    "value": f"{point[2]:.5f}",
    "anchor": "Point estimate (full sample):",
    "unit": {"scale": "as_printed", "window": None},
    "equivalents": [
        {
            "printed": f"{100 * point[2]:.2f}",
            "anchor": "Point estimate (full sample):",
            "unit": {"scale": "percent", "window": None},
        },
    ],
    "decoys": [
        {"kind": "setup_constant", "printed": str(SEED), "anchor": "bootstrap resamples of"},
        {"kind": "setup_constant", "printed": str(B), "anchor": "bootstrap resamples of"},
        {"kind": "bootstrap_summary", "printed": described_value("count"), "anchor": "count "},
        {"kind": "bootstrap_summary", "printed": described_value("mean"), "anchor": "mean "},
        {"kind": "bootstrap_summary", "printed": described_value("50%"), "anchor": "50% "},
        {"kind": "bootstrap_summary", "printed": described_value("max"), "anchor": "max "},
        {"kind": "confidence_bound", "printed": f"{lo:.5f}", "anchor": "95% percentile interval"},
        {"kind": "market_beta", "printed": f"{point[1]:.3f}", "anchor": "Market beta"},
    ],
}
print(json.dumps(truth), file=sys.stderr)
