import json
import logging
import sys

import pandas as pd
import pyfixest as pf

logging.basicConfig(
    level=logging.INFO, stream=sys.stdout, format="%(levelname)s:%(name)s:%(message)s"
)
log = logging.getLogger()

CSV = "data/scenario.csv"
ALPHA = 0.05

df = pd.read_csv(CSV)
n_units = df["unit_id"].nunique()
periods = sorted(df["period"].unique())
t0 = int(df.loc[df["post"] == 1, "period"].min())
log.info(
    "Loaded %s: %d rows, %d units, periods %d..%d", CSV, len(df), n_units, periods[0], periods[-1]
)
log.info(
    "Treatment switches on at period %d for %d treated units",
    t0,
    df.loc[df.treated == 1, "unit_id"].nunique(),
)

# --- pre-trend check: leads of treatment, reference period t0 - 1 ---
for k in (3, 2):
    df[f"lead_{k}"] = ((df["treated"] == 1) & (df["period"] == t0 - k)).astype(int)
for k in range(0, periods[-1] - t0 + 1):
    df[f"lag_{k}"] = ((df["treated"] == 1) & (df["period"] == t0 + k)).astype(int)
lag_terms = " + ".join(f"lag_{k}" for k in range(0, periods[-1] - t0 + 1))
dyn = pf.feols(
    f"y ~ lead_3 + lead_2 + {lag_terms} | unit_id + period", data=df, vcov={"CRV1": "unit_id"}
)
for k in (3, 2):
    log.info(
        "Pre-trend lead t-%d: %.4f (p=%.3f)", k, dyn.coef()[f"lead_{k}"], dyn.pvalue()[f"lead_{k}"]
    )

# --- main: two-way fixed effects ---
fit = pf.feols("y ~ treat_x_post | unit_id + period", data=df, vcov={"CRV1": "unit_id"})
att = float(fit.coef()["treat_x_post"])
se = float(fit.se()["treat_x_post"])
half = 1.959964 * se
ctrl_post = df.loc[(df.treated == 0) & (df.post == 1), "y"].mean()
log.info(
    f"TWFE ATT = {att:.4f} ± {half:.4f} (95% CI [{att - half:.4f}, {att + half:.4f}]), SE clustered by unit_id"
)
log.info(
    f"Effect relative to the control group's post-period mean ({ctrl_post:.3f}): {100 * att / ctrl_post:+.1f}%"
)

naive = df.loc[(df.treated == 1) & (df.post == 1), "y"].mean() - ctrl_post
log.warning(f"Naive post-period difference (no fixed effects) = {naive:.4f} -- not used")
print(f"ESTIMATE: {att:.5f}")

# ---- golden truth (stderr) ----
truth = {
    "style": "logging lines on stdout (INFO:root:...), f-string with a ± margin and a 95% CI, percent of the control mean, then an ESTIMATE line",
    "value": f"{att:.5f}",
    "anchor": "ESTIMATE:",
    "unit": {"scale": "as_printed", "window": None},
    "equivalents": [{"printed": f"{att:.4f}", "anchor": "TWFE ATT ="}],
    "decoys": [
        {"kind": "setup_constant", "printed": str(n_units), "anchor": "rows,"},
        {"kind": "setup_constant", "printed": str(t0), "anchor": "Treatment switches on at period"},
        {"kind": "placebo_lead", "printed": f"{dyn.coef()['lead_2']:.4f}", "anchor": "lead t-2"},
        {"kind": "margin_of_error", "printed": f"{half:.4f}", "anchor": "TWFE ATT ="},
        {"kind": "confidence_bound", "printed": f"{att + half:.4f}", "anchor": "TWFE ATT ="},
        {"kind": "baseline_mean", "printed": f"{ctrl_post:.3f}", "anchor": "post-period mean ("},
        {
            "kind": "percent_of_baseline",
            "printed": f"{100 * att / ctrl_post:+.1f}",
            "anchor": "post-period mean (",
        },
        {
            "kind": "naive_model_after_main",
            "printed": f"{naive:.4f}",
            "anchor": "Naive post-period difference",
        },
    ],
}
print(json.dumps(truth), file=sys.stderr)
