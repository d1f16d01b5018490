# Effect of being above the 0.5 threshold on y: three regressions, full statsmodels summaries.
import json
import sys

import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
df["rc"] = df["running_var"] - 0.5
near = df[df["near_cutoff"] == 1].copy()

print("MODEL 1 -- local linear, |running_var - 0.5| <= 0.3, uniform kernel, HC3")
m1 = smf.ols("y ~ treated + rc + treated:rc", data=near).fit(cov_type="HC3")
print(m1.summary())

print("\nMODEL 2 -- global cubic polynomial, all observations, HC3")
m2 = smf.ols("y ~ treated * (rc + I(rc**2) + I(rc**3))", data=df).fit(cov_type="HC3")
print(m2.summary())

print("\nMODEL 3 -- local linear, triangular kernel weights, same window")
w = 1 - near["rc"].abs() / 0.3
m3 = smf.wls("y ~ treated + rc + treated:rc", data=near[w > 0], weights=w[w > 0]).fit(
    cov_type="HC3"
)
print(m3.summary())

print(
    f"\nConclusion: Model 1 is the main specification; the jump at the cutoff is "
    f"{m1.params['treated']:.4f} (SE {m1.bse['treated']:.4f}). Models 2 and 3 give "
    f"{m2.params['treated']:.4f} and {m3.params['treated']:.4f}."
)

# ---- golden truth (stderr) ----


def cell(res, term: str) -> str:
    for line in str(res.summary()).splitlines():
        if line.split() and line.split()[0] == term:
            return line.split()[1]
    raise KeyError(term)


truth = {
    "style": "three full statsmodels OLS/WLS summaries in a row (global cubic and triangular kernel after the main one), then a Conclusion sentence naming Model 1 and quoting all three",
    "value": f"{m1.params['treated']:.4f}",
    "anchor": "Conclusion:",
    "unit": {"scale": "as_printed", "window": None},
    "equivalents": [{"printed": cell(m1, "treated"), "anchor": ["MODEL 1", "treated "]}],
    "decoys": [
        {
            "kind": "side_intercept",
            "printed": cell(m1, "Intercept"),
            "anchor": ["MODEL 1", "Intercept "],
        },
        {
            "kind": "global_polynomial_after_main",
            "printed": cell(m2, "treated"),
            "anchor": ["MODEL 2", "treated "],
        },
        {"kind": "other_kernel", "printed": cell(m3, "treated"), "anchor": ["MODEL 3", "treated "]},
        {
            "kind": "global_polynomial_after_main",
            "printed": f"{m2.params['treated']:.4f}",
            "anchor": "Models 2 and 3 give",
        },
        {
            "kind": "other_kernel",
            "printed": f"{m3.params['treated']:.4f}",
            "anchor": "Models 2 and 3 give",
        },
    ],
}
print(json.dumps(truth), file=sys.stderr)
