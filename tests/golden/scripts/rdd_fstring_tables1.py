import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
sub = df[df["near_cutoff"] == 1].copy()
sub["rc"] = sub["running_var"] - 0.5
res = smf.ols("y ~ treated * rc", data=sub).fit(cov_type="HC1")
print(f"Bandwidth: 0.25, observations: {int(res.nobs)}")
b = res.params["treated"]
lo, hi = res.conf_int().loc["treated"]
print(f"RD estimate: {b:.4f}, 95% CI [{lo:.4f}, {hi:.4f}]")
print(res.summary().tables[1])
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(res.params["treated"]),
            "others": [
                float(res.bse["treated"]),
                float(res.tvalues["treated"]),
                float(res.pvalues["treated"]),
                *map(float, res.conf_int().loc["treated"]),
            ],
        }
    )
    + "\n"
)
