# Treatment effect on y with linearmodels: several panel models, full summaries, then a conclusion.
import json
import sys

import pandas as pd
from linearmodels.panel import PanelOLS

raw = pd.read_csv("data/scenario.csv")
start = int(raw.loc[raw.post == 1, "period"].min())
data = raw.set_index(["unit_id", "period"])

print(
    f"Panel of {raw.unit_id.nunique()} units x {raw.period.nunique()} periods; treatment begins in period {start}.\n"
)

# Model A: two-way fixed effects (the design's estimator)
mod_a = PanelOLS.from_formula("y ~ treat_x_post + EntityEffects + TimeEffects", data=data)
res_a = mod_a.fit(cov_type="clustered", cluster_entity=True)
print("=" * 30 + " Model A: unit + period effects " + "=" * 30)
print(res_a.summary)
print()

# Model B: unit effects only (no common period shocks -> picks up the overall time trend)
mod_b = PanelOLS.from_formula("y ~ treat_x_post + EntityEffects", data=data)
res_b = mod_b.fit(cov_type="clustered", cluster_entity=True)
print("=" * 30 + " Model B: unit effects only " + "=" * 34)
print(res_b.summary)
print()

# Model C: placebo on the pre-period, fake start two periods early
pre = raw[raw.post == 0].copy()
pre["fake_x_post"] = ((pre.treated == 1) & (pre.period >= start - 2)).astype(int)
mod_c = PanelOLS.from_formula(
    "y ~ fake_x_post + EntityEffects + TimeEffects", data=pre.set_index(["unit_id", "period"])
)
res_c = mod_c.fit(cov_type="clustered", cluster_entity=True)
print("=" * 30 + " Model C: pre-period placebo " + "=" * 33)
print(res_c.summary)
print()

b = res_a.params["treat_x_post"]
print(
    f"Conclusion: Model A (unit and period fixed effects) gives an effect of {b:.4f} "
    f"(clustered SE {res_a.std_errors['treat_x_post']:.4f}); Model B omits the period effects "
    f"and Model C's placebo is {res_c.params['fake_x_post']:.4f}."
)
print(f"ESTIMATE: {b:.4f}")

# ---- golden truth (stderr) ----


def summary_cell(res, term):
    for line in str(res.summary).splitlines():
        if line.startswith(term + " "):
            return line.split()[1]
    raise KeyError(term)


truth = {
    "style": "three full linearmodels PanelOLS summaries in a row (each with F statistics, R-squared, CI bounds), a Conclusion sentence, then an ESTIMATE line",
    "value": f"{b:.4f}",
    "anchor": "ESTIMATE:",
    "unit": {"scale": "as_printed", "window": None},
    "equivalents": [
        {"printed": f"{b:.4f}", "anchor": "Conclusion: Model A"},
        {
            "printed": summary_cell(res_a, "treat_x_post"),
            "anchor": ["Model A: unit + period", "treat_x_post "],
        },
    ],
    "decoys": [
        {"kind": "setup_constant", "printed": str(start), "anchor": "treatment begins in period"},
        {
            "kind": "naive_model_after_main",
            "printed": summary_cell(res_b, "treat_x_post"),
            "anchor": ["Model B: unit effects only", "treat_x_post "],
        },
        {
            "kind": "placebo",
            "printed": summary_cell(res_c, "fake_x_post"),
            "anchor": ["Model C: pre-period placebo", "fake_x_post "],
        },
        {
            "kind": "placebo",
            "printed": f"{res_c.params['fake_x_post']:.4f}",
            "anchor": "Conclusion: Model A",
        },
    ],
}
print(json.dumps(truth), file=sys.stderr)
