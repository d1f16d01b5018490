# Announcement returns: pooled market model, key=value log lines in basis points
import numpy as np
import pandas as pd

df = pd.read_csv("data/scenario.csv")
SEED, REPS = 2718, 200
df["post"] = (df.event_day >= 0).astype(float)
X = np.column_stack([np.ones(len(df)), df.mkt_ret, df.post])
y = df.ret.to_numpy()
coef = np.linalg.lstsq(X, y, rcond=None)[0]
b, beta_mkt = coef[2], coef[1]

# stock-level bootstrap for the standard error
rng = np.random.default_rng(SEED)
rows = [np.flatnonzero(df.stock_id.to_numpy() == s) for s in df.stock_id.unique()]
draws = []
for _ in range(REPS):
    idx = np.concatenate([rows[i] for i in rng.integers(0, len(rows), len(rows))])
    draws.append(np.linalg.lstsq(X[idx], y[idx], rcond=None)[0][2])
se = float(np.std(draws, ddof=1))

day0 = (df.ret - df.beta * df.mkt_ret)[df.event_day == 0].mean()
n_post = df.loc[df.event_day >= 0, "event_day"].nunique()
lo, hi = int(df.event_day.min()), int(df.event_day.max())
beta_txt = f"{beta_mkt:.4f}"
day0_txt = f"{1e4 * day0:.1f}"
bp_txt = f"{1e4 * b:.1f}"
car_txt = f"{1e4 * n_post * b:.1f}"
print(
    f"run: seed={SEED} reps={REPS} window=[{lo},{hi}] effect_window=[0,{hi}] "
    f"n_stocks={df.stock_id.nunique()} n_obs={len(df):,}"
)
print("model: ret ~ 1 + mkt_ret + post  se=bootstrap(stock_id)")
print(
    f"beta_mkt={beta_txt} ar_day0_bp={day0_txt} ar_per_day_bp={bp_txt} "
    f"se_bp={1e4 * se:.1f} car_0_{hi}_bp={car_txt}"
)
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
            "style": ["key=value log lines", "basis points in the key name", "ESTIMATE line"],
            "decoys": [
                {
                    "kind": "day0_abnormal_return",
                    "printed": day0_txt,
                    "anchor": "ar_day0_bp=",
                    "unit": {"scale": "basis_points", "window": None},
                },
                {"kind": "market_beta", "printed": beta_txt, "anchor": "beta_mkt="},
                {"kind": "setup_constant", "printed": str(SEED), "anchor": "seed="},
            ],
            "equivalents": [
                {
                    "printed": bp_txt,
                    "anchor": "ar_per_day_bp=",
                    "unit": {"scale": "basis_points", "window": None},
                },
                {
                    "printed": car_txt,
                    "anchor": "ar_per_day_bp=",
                    "unit": {"scale": "basis_points", "window": [0, hi]},
                },
            ],
        }
    )
    + "\n"
)
