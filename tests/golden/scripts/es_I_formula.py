import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
res = smf.ols("ret ~ mkt_ret + I(event_day >= 0)", data=df).fit(cov_type="HC1")
print(res.summary())
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(res.params["I(event_day >= 0)[T.True]"]),
            "others": [
                float(res.bse["I(event_day >= 0)[T.True]"]),
                float(res.tvalues["I(event_day >= 0)[T.True]"]),
                float(res.pvalues["I(event_day >= 0)[T.True]"]),
                *map(float, res.conf_int().loc["I(event_day >= 0)[T.True]"]),
            ],
        }
    )
    + "\n"
)
