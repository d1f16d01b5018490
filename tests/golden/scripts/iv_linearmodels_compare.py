import pandas as pd
from linearmodels.iv import IV2SLS
from linearmodels.iv.results import compare

df = pd.read_csv("data/scenario.csv")
ols = IV2SLS.from_formula("y ~ 1 + x + controls", data=df).fit(cov_type="robust")
iv = IV2SLS.from_formula("y ~ 1 + controls + [x ~ z]", data=df).fit(cov_type="robust")
print(compare({"OLS": ols, "2SLS": iv}))
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(iv.params["x"]),
            "others": [
                float(iv.std_errors["x"]),
                float(iv.tstats["x"]),
                float(iv.pvalues["x"]),
                float(ols.params["x"]),
            ],
        }
    )
    + "\n"
)
