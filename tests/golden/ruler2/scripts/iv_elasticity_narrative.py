"""How much does x move y? An instrumented estimate written up as a short report."""

import json
import sys

import numpy as np
import pandas as pd
from linearmodels.iv import IV2SLS
from scipy import stats

df = pd.read_csv("data/scenario.csv")
n = len(df)
share_z = df["z"].mean()

iv = IV2SLS.from_formula("y ~ 1 + controls + [x ~ z]", data=df).fit(cov_type="robust")
ols = IV2SLS.from_formula("y ~ 1 + x + controls", data=df).fit(cov_type="robust")
b, se = iv.params["x"], iv.std_errors["x"]
ci = iv.conf_int().loc["x"]
x_bar, y_bar = df["x"].mean(), df["y"].mean()
sd_x, sd_y = df["x"].std(), df["y"].std()
elasticity = b * x_bar / y_bar
std_effect = b * sd_x / sd_y
diff_x = df.loc[df.z == 1, "x"].mean() - df.loc[df.z == 0, "x"].mean()
fstat = iv.first_stage.diagnostics.loc["x", "f.stat"]
t_ols = (ols.params["x"] - b) / np.sqrt(max(se**2 - ols.std_errors["x"] ** 2, 1e-12))
p_h = 2 * stats.norm.sf(abs(t_ols))


print("SUMMARY OF FINDINGS")
print("-------------------")
print(
    f"We use {n} observations. The binary instrument z equals one for {100 * share_z:.1f}% of them,\n"
    f"and units with z = 1 have x higher by {diff_x:.3f} on average (first-stage F = {fstat:.1f},\n"
    f"far above the weak-instrument threshold of 10).\n"
)
print(
    "Instrumenting x with z and controlling for `controls`, a one-unit increase in x\n"
    f"changes y by {b:.4f} (robust SE {se:.4f}; 95% CI [{ci.iloc[0]:.4f}, {ci.iloc[1]:.4f}]).\n"
    f"At the sample means (x = {x_bar:.3f}, y = {y_bar:.3f}) this corresponds to an elasticity\n"
    f"of {elasticity:.2f}; in standard-deviation units the effect is {std_effect:.2f}.\n"
)
print(
    f"Ordinary least squares gives a slope of {ols.params['x']:.4f}, which is contaminated by the\n"
    f"unobserved confounder; a Hausman-type contrast of the two slopes has p = {p_h:.3g}.\n"
)
print(f"Bottom line: the causal effect of x on y is about {b:.2f} per unit of x.")

# ---- golden truth (stderr) ----
truth = {
    "style": "prose report in paragraphs: the effect inside a paragraph with means, elasticity, standard-deviation units, first-stage difference and F, OLS after, and a rounded bottom line",
    "value": f"{b:.4f}",
    "anchor": "changes y by",
    "unit": {"scale": "as_printed", "window": None},
    "equivalents": [{"printed": f"{b:.2f}", "anchor": "Bottom line"}],
    "decoys": [
        {"kind": "setup_constant", "printed": str(n), "anchor": "We use"},
        {"kind": "first_stage", "printed": f"{diff_x:.3f}", "anchor": "have x higher by"},
        {"kind": "first_stage_statistic", "printed": f"{fstat:.1f}", "anchor": "F = "},
        {"kind": "confidence_bound", "printed": f"{ci.iloc[0]:.4f}", "anchor": "95% CI"},
        {
            "kind": "elasticity",
            "printed": f"{elasticity:.2f}",
            "anchor": "standard-deviation units",
        },
        {
            "kind": "standardized_effect",
            "printed": f"{std_effect:.2f}",
            "anchor": "standard-deviation units",
        },
        {
            "kind": "naive_model_after_main",
            "printed": f"{ols.params['x']:.4f}",
            "anchor": "gives a slope of",
        },
    ],
}
print(json.dumps(truth), file=sys.stderr)
