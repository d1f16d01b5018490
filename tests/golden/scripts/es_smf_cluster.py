import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
df["post"] = (df["event_day"] >= 0).astype(int)
res = smf.ols("ret ~ mkt_ret + post", data=df).fit(
    cov_type="cluster", cov_kwds={"groups": df["stock_id"]}
)
print(res.summary())
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(res.params["post"]),
            "others": [
                float(res.bse["post"]),
                float(res.tvalues["post"]),
                float(res.pvalues["post"]),
                *map(float, res.conf_int().loc["post"]),
            ],
        }
    )
    + "\n"
)
