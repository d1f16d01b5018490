import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
sub = df[df["near_cutoff"] == 1].copy()
sub["rc"] = sub["running_var"] - 0.5
res = smf.ols("y ~ treated + rc + treated:rc", data=sub).fit()
print(res.params)
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
