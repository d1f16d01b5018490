import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
res = smf.ols("y ~ treated + post + treat_x_post", data=df).fit()
print(res.params["treat_x_post"])
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(res.params["treat_x_post"]),
            "others": [
                float(res.bse["treat_x_post"]),
                float(res.tvalues["treat_x_post"]),
                float(res.pvalues["treat_x_post"]),
                *map(float, res.conf_int().loc["treat_x_post"]),
            ],
        }
    )
    + "\n"
)
