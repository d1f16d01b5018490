"""Announcement-window abnormal returns, reported in basis points (pooled market model)."""

import json
import logging
import sys

import pandas as pd
import statsmodels.api as sm

logging.basicConfig(stream=sys.stdout, level=logging.INFO)  # INFO:root:... lines

EVENT_DAY = 0
POST_WINDOW = (0, 10)

df = pd.read_csv("data/scenario.csv")
df["post"] = (df["event_day"] >= EVENT_DAY).astype(float)
logging.info(
    "stocks=%d  days=%d..%d  obs=%d",
    df.stock_id.nunique(),
    df.event_day.min(),
    df.event_day.max(),
    len(df),
)
logging.info("mean market return: %.1f bp/day", 1e4 * df.mkt_ret.mean())

X = sm.add_constant(df[["mkt_ret", "post"]])
res = sm.OLS(df["ret"], X).fit(cov_type="cluster", cov_kwds={"groups": df["stock_id"]})
ar = res.params["post"]
se = res.bse["post"]
logging.info(
    "pooled beta on market: %.3f; alpha: %.1f bp", res.params["mkt_ret"], 1e4 * res.params["const"]
)
logging.info(
    "abnormal return per post-event day: %.1f bp (SE %.1f bp, t=%.1f)", 1e4 * ar, 1e4 * se, ar / se
)

ndays = POST_WINDOW[1] - POST_WINDOW[0] + 1
car_bp = 1e4 * ar * ndays
logging.info(
    "implied cumulative effect over days %d..%+d: %s bp (%.2f%%)",
    *POST_WINDOW,
    f"{car_bp:,.0f}",
    car_bp / 100,
)

# placebo: fake event at day -5 using only pre-event days
pre = df[df.event_day < EVENT_DAY].copy()
pre["fake"] = (pre.event_day >= -5).astype(float)
pres = sm.OLS(pre["ret"], sm.add_constant(pre[["mkt_ret", "fake"]])).fit(
    cov_type="cluster", cov_kwds={"groups": pre["stock_id"]}
)
logging.info(
    "placebo (fake event at day -5): %.1f bp (p=%.2f)",
    1e4 * pres.params["fake"],
    pres.pvalues["fake"],
)

# raw (market-unadjusted) difference in mean returns
raw = df.loc[df.post == 1, "ret"].mean() - df.loc[df.post == 0, "ret"].mean()
logging.info("raw post-pre mean return difference: %.1f bp", 1e4 * raw)

print(f"ESTIMATE: {ar:.6f}")

# ---- golden truth (stderr) ----
bp = {"scale": "basis_points", "window": None}
truth = {
    "style": "logging.basicConfig to stdout: INFO:root: lines with every figure in basis points, a cumulative figure with a thousands separator and in percent, then an ESTIMATE line in decimal",
    "value": f"{ar:.6f}",
    "anchor": "ESTIMATE:",
    "unit": {"scale": "as_printed", "window": None},
    "equivalents": [
        {"printed": f"{1e4 * ar:.1f}", "anchor": "per post-event day", "unit": bp},
        {
            "printed": f"{car_bp:,.0f}",
            "anchor": "implied cumulative effect",
            "unit": {"scale": "basis_points", "window": list(POST_WINDOW)},
        },
        {
            "printed": f"{car_bp / 100:.2f}",
            "anchor": "implied cumulative effect",
            "unit": {"scale": "percent", "window": list(POST_WINDOW)},
        },
    ],
    "decoys": [
        {"kind": "setup_constant", "printed": str(df.stock_id.nunique()), "anchor": "stocks="},
        {
            "kind": "market_beta",
            "printed": f"{res.params['mkt_ret']:.3f}",
            "anchor": "pooled beta on market",
        },
        {
            "kind": "placebo_window",
            "printed": f"{1e4 * pres.params['fake']:.1f}",
            "anchor": "placebo (fake event",
            "unit": bp,
        },
        {
            "kind": "naive_model_after_main",
            "printed": f"{1e4 * raw:.1f}",
            "anchor": "raw post-pre mean",
            "unit": bp,
        },
    ],
}
print(json.dumps(truth), file=sys.stderr)
