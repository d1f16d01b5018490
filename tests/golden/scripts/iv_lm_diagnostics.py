import pandas as pd
from linearmodels.iv import IV2SLS

df = pd.read_csv("data/scenario.csv")
res = IV2SLS.from_formula("y ~ 1 + controls + [x ~ z]", data=df).fit(cov_type="robust")
print(res.summary)
print("First-stage diagnostics:")
print(res.first_stage.diagnostics)
print(res.wu_hausman())
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
