import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
cl = {"cov_type": "cluster"}
first = df["period"].min()
pre = df[df["post"] == 0].copy()
pre["fake_post"] = (pre["period"] > pre["period"].median()).astype(int)
specs = [
    ("main (clustered by unit)", "y ~ treated * post", df, "treated:post"),
    ("drop first period", "y ~ treated * post", df[df["period"] > first], "treated:post"),
    ("placebo: fake post in pre-period", "y ~ treated * fake_post", pre, "treated:fake_post"),
]
rows = []
fits = {}
for name, formula, data, term in specs:
    fit = smf.ols(formula, data=data).fit(cov_type="cluster", cov_kwds={"groups": data["unit_id"]})
    fits[name] = fit
    lo, hi = fit.conf_int().loc[term]
    rows.append(
        {
            "spec": name,
            "estimate": fit.params[term],
            "std_err": fit.bse[term],
            "ci_low": lo,
            "ci_high": hi,
            "n": int(fit.nobs),
        }
    )
table = pd.DataFrame(rows)
print("Robustness table (main specification first):")
print(table.to_string(index=False))
res = fits[specs[0][0]]
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(res.params["treated:post"]),
            "others": [
                float(res.bse["treated:post"]),
                float(res.tvalues["treated:post"]),
                float(res.pvalues["treated:post"]),
                *map(float, res.conf_int().loc["treated:post"]),
            ],
        }
    )
    + "\n"
)
