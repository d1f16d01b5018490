"""Causal effect of x on y: OLS, first stage, reduced form and 2SLS side by side (linearmodels)."""

import json
import sys

import pandas as pd
from linearmodels.iv import IV2SLS

df = pd.read_csv("data/scenario.csv")
df["const"] = 1.0

ols = IV2SLS(df.y, df[["const", "x", "controls"]], None, None).fit(cov_type="robust")
first = IV2SLS(df.x, df[["const", "z", "controls"]], None, None).fit(cov_type="robust")
reduced = IV2SLS(df.y, df[["const", "z", "controls"]], None, None).fit(cov_type="robust")
tsls = IV2SLS(df.y, df[["const", "controls"]], df[["x"]], df[["z"]]).fit(cov_type="robust")

cols = [
    ("OLS", ols, "y"),
    ("First stage", first, "x"),
    ("Reduced form", reduced, "y"),
    ("2SLS", tsls, "y"),
]
W = 15
print("=" * (20 + 4 * W))
print(f"{'':20}" + "".join(f"{'(' + str(i + 1) + ')':>{W}}" for i in range(4)))
print(f"{'':20}" + "".join(f"{c[0]:>{W}}" for c in cols))
print(f"{'Dep. variable':20}" + "".join(f"{c[2]:>{W}}" for c in cols))
print("-" * (20 + 4 * W))
for term in ["x", "z", "controls", "const"]:
    est = [f"{r.params[term]:.4f}" if term in r.params.index else "" for _, r, _ in cols]
    ses = [f"({r.std_errors[term]:.4f})" if term in r.params.index else "" for _, r, _ in cols]
    print(f"{term:20}" + "".join(f"{e:>{W}}" for e in est))
    print(f"{'':20}" + "".join(f"{s:>{W}}" for s in ses))
print("-" * (20 + 4 * W))
print(f"{'N':20}" + "".join(f"{int(r.nobs):>{W}}" for _, r, _ in cols))
fs_f = first.tstats["z"] ** 2
print(f"{'First-stage F (z)':20}" + f"{'':>{W}}" + f"{fs_f:>{W}.1f}" + f"{'':>{W}}" + f"{'':>{W}}")
print("=" * (20 + 4 * W))
print("Robust (HC) standard errors in parentheses. Column (4) is the preferred estimate;")
print("(2) and (3) are its ingredients and (1) is biased by the unobserved confounder.")
wald = reduced.params["z"] / first.params["z"]
print(
    f"\nIndirect least squares check: {reduced.params['z']:.4f} / {first.params['z']:.4f} = {wald:.4f}"
)
print(f"Wu-Hausman (robust) statistic: {tsls.wu_hausman().stat:.2f}")
print(f"\nESTIMATE: {tsls.params['x']:.4f}")

# ---- golden truth (stderr) ----
b = tsls.params["x"]
truth = {
    "style": "stargazer-like table with OLS, first stage, reduced form and 2SLS columns (preferred column named in the note), an indirect-least-squares ratio and a Hausman statistic, then an ESTIMATE line",
    "value": f"{b:.4f}",
    "anchor": "ESTIMATE:",
    "unit": {"scale": "as_printed", "window": None},
    "equivalents": [
        {"printed": f"{b:.4f}", "anchor": ["Dep. variable", "x   "]},
        {"printed": f"{wald:.4f}", "anchor": "Indirect least squares check"},
    ],
    "decoys": [
        {
            "kind": "naive_model_after_main",
            "printed": f"{ols.params['x']:.4f}",
            "anchor": ["Dep. variable", "x   "],
        },
        {
            "kind": "first_stage",
            "printed": f"{first.params['z']:.4f}",
            "anchor": ["Dep. variable", "z   "],
        },
        {
            "kind": "reduced_form",
            "printed": f"{reduced.params['z']:.4f}",
            "anchor": ["Dep. variable", "z   "],
        },
        {
            "kind": "arithmetic_operand",
            "printed": f"{reduced.params['z']:.4f}",
            "anchor": "Indirect least squares check",
        },
        {"kind": "first_stage_statistic", "printed": f"{fs_f:.1f}", "anchor": "First-stage F"},
        {
            "kind": "diagnostic_statistic",
            "printed": f"{tsls.wu_hausman().stat:.2f}",
            "anchor": "Wu-Hausman",
        },
    ],
}
print(json.dumps(truth), file=sys.stderr)
