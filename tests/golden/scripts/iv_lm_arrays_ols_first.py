import pandas as pd
import statsmodels.api as sm
from linearmodels.iv import IV2SLS

df = pd.read_csv("data/scenario.csv")
exog = sm.add_constant(df[["controls"]])
ols = sm.OLS(df["y"], sm.add_constant(df[["x", "controls"]])).fit()
print(ols.summary())
res = IV2SLS(df["y"], exog, df["x"], df["z"]).fit(cov_type="unadjusted")
print(res.summary)
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(res.params["x"]),
            "others": [
                float(res.std_errors["x"]),
                float(res.tstats["x"]),
                float(res.pvalues["x"]),
                *map(float, res.conf_int().loc["x"]),
            ],
        }
    )
    + "\n"
)
