import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
sub = df[df["near_cutoff"] == 1]
res = smf.ols("y ~ treated * I(running_var - 0.5)", data=sub).fit(cov_type="HC3")
print(res.summary())
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
