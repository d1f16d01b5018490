"""Did the programme change the outcome? Four specifications in one stargazer-style table."""

import json
import sys

import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
first_post = int(df.loc[df["post"] == 1, "period"].min())
fake_start = first_post - 2


def fit(formula, data):
    return smf.ols(formula, data=data).fit(
        cov_type="cluster", cov_kwds={"groups": data["unit_id"].to_numpy()}
    )


post_rows = df[df["post"] == 1]
treated_rows = df[df["treated"] == 1]
pre = df[df["post"] == 0].copy()
pre["placebo_x_post"] = ((pre["treated"] == 1) & (pre["period"] >= fake_start)).astype(int)

models = [
    fit("y ~ treated", post_rows),
    fit("y ~ post", treated_rows),
    fit("y ~ treat_x_post + C(unit_id) + C(period)", df),
    fit("y ~ placebo_x_post + C(unit_id) + C(period)", pre),
]
labels = ["(1)", "(2)", "(3)", "(4)"]
rows = ["treated", "post", "treat_x_post", "placebo_x_post", "Intercept"]


def stars(p):
    return "***" if p < 0.01 else "**" if p < 0.05 else "*" if p < 0.1 else ""


W = 16
line = "=" * (22 + W * 4)
print("Dependent variable: y")
print(line)
print(" " * 22 + "".join(f"{lab:>{W}}" for lab in labels))
print("-" * (22 + W * 4))
for r in rows:
    cells, ses = [], []
    for m in models:
        if r in m.params.index:
            cells.append(f"{m.params[r]:.3f}{stars(m.pvalues[r])}")
            ses.append(f"({m.bse[r]:.3f})")
        else:
            cells.append("")
            ses.append("")
    if r == "Intercept" and not any(cells[:2]):
        continue
    print(f"{r:<22}" + "".join(f"{c:>{W}}" for c in cells))
    print(" " * 22 + "".join(f"{s:>{W}}" for s in ses))
print("-" * (22 + W * 4))
fe = ["No", "No", "Yes", "Yes"]
sample = ["post only", "treated only", "all", "pre only"]
print(f"{'Unit & period FE':<22}" + "".join(f"{x:>{W}}" for x in fe))
print(f"{'Sample':<22}" + "".join(f"{x:>{W}}" for x in sample))
print(f"{'Observations':<22}" + "".join(f"{int(m.nobs):>{W},}" for m in models))
print(f"{'R2':<22}" + "".join(f"{m.rsquared:>{W}.3f}" for m in models))
print(line)
print("Note: *p<0.1; **p<0.05; ***p<0.01. Standard errors clustered by unit_id.")
print("Column (3) is our preferred specification; (1) and (2) are naive single")
print(f"differences and (4) is a placebo with a fake start in period {fake_start}.")
att = models[2].params["treat_x_post"]
print()
print(f"ESTIMATE: {att:.6f}")

# ---- golden truth (stderr) ----
cell = lambda m, r: f"{m.params[r]:.3f}"  # noqa: E731
truth = {
    "style": "stargazer-like ASCII table with four model columns, the preferred column named in a note below, then an ESTIMATE line",
    "value": f"{att:.6f}",
    "anchor": "ESTIMATE:",
    "unit": {"scale": "as_printed", "window": None},
    "equivalents": [{"printed": cell(models[2], "treat_x_post"), "anchor": "treat_x_post  "}],
    "decoys": [
        {
            "kind": "naive_model_after_main",
            "printed": cell(models[0], "treated"),
            "anchor": "treated    ",
        },
        {
            "kind": "naive_model_after_main",
            "printed": cell(models[1], "post"),
            "anchor": ["treated    ", "post  "],
        },
        {
            "kind": "robustness_last_column_placebo",
            "printed": cell(models[3], "placebo_x_post"),
            "anchor": "placebo_x_post  ",
        },
        {"kind": "setup_constant", "printed": str(fake_start), "anchor": "fake start in period"},
    ],
}
print(json.dumps(truth), file=sys.stderr)
