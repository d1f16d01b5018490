# 2SLS main line, then a robustness DataFrame whose last column is OLS
import pandas as pd
from linearmodels.iv import IV2SLS

df = pd.read_csv("data/scenario.csv")
main = IV2SLS.from_formula("y ~ 1 + controls + [x ~ z]", data=df).fit(cov_type="robust")
b = float(main.params["x"])
main_txt = f"{b:.3f}"
print(f"2SLS estimate of the effect of x on y: {main_txt} (robust SE {main.std_errors['x']:.3f})")

specs = {
    "2SLS + controls": ("y ~ 1 + controls + [x ~ z]", df),
    "2SLS, no controls": ("y ~ 1 + [x ~ z]", df),
    "2SLS, |controls| < 2": ("y ~ 1 + controls + [x ~ z]", df[df.controls.abs() < 2]),
    "OLS": ("y ~ 1 + x + controls", df),
}
table = {}
for name, (formula, data) in specs.items():
    r = IV2SLS.from_formula(formula, data=data).fit(cov_type="robust")
    table[name] = [r.params["x"], r.std_errors["x"], r.pvalues["x"], float(r.nobs)]
frame = pd.DataFrame(table, index=["coef", "std err", "p-value", "obs"])
print()
print("Robustness checks:")
print(frame.to_string(float_format=lambda v: f"{v:.4f}"))
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "value": main_txt,
            "anchor": "2SLS estimate of the effect of x on y",
            "unit": {"scale": "as_printed", "window": None},
            "style": [
                "to_string with float_format, specifications as columns",
                "main line at 3 decimals, table at 4",
                "paper protocol",
            ],
            "decoys": [
                {
                    "kind": "robustness_last_column_naive",
                    "printed": f"{table['OLS'][0]:.4f}",
                    "anchor": ["Robustness", "coef"],
                },
                {
                    "kind": "robustness_later_fit",
                    "printed": f"{table['2SLS, |controls| < 2'][0]:.4f}",
                    "anchor": ["Robustness", "coef"],
                },
            ],
            "equivalents": [
                {
                    "printed": f"{table['2SLS + controls'][0]:.4f}",
                    "anchor": ["Robustness", "coef"],
                    "unit": {"scale": "as_printed", "window": None},
                }
            ],
        }
    )
    + "\n"
)
