import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
df["post_event"] = (df["event_day"] >= 0).astype(int)
res = smf.ols("ret ~ mkt_ret + post_event", data=df).fit(
    cov_type="cluster", cov_kwds={"groups": df["stock_id"]}
)
print(res.summary().tables[1])
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(res.params["post_event"]),
            "others": [
                float(res.bse["post_event"]),
                float(res.tvalues["post_event"]),
                float(res.pvalues["post_event"]),
                *map(float, res.conf_int().loc["post_event"]),
            ],
        }
    )
    + "\n"
)
