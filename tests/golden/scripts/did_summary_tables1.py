import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
res = smf.ols("y ~ treated * post", data=df).fit(
    cov_type="cluster", cov_kwds={"groups": df["unit_id"]}
)
print(res.summary().tables[1])
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
