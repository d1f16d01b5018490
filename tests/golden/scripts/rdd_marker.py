import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
sub = df[df.near_cutoff == 1].assign(rc=lambda d: d.running_var - 0.5)
res = smf.ols("y ~ treated * rc", data=sub).fit(cov_type="HC3")
print(f"Observations in the bandwidth: {int(res.nobs)}")
print(f"Standard error: {res.bse['treated']:.6f}")
print(f"ESTIMATE: {res.params['treated']:.6f}")
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
