import json

import pandas as pd
from linearmodels.iv import IV2SLS

df = pd.read_csv("data/scenario.csv")
res = IV2SLS.from_formula("y ~ 1 + controls + [x ~ z]", data=df).fit(cov_type="robust")
first = res.first_stage.diagnostics
out = {
    "second_stage": {"coef": float(res.params["x"]), "se": float(res.std_errors["x"])},
    "first_stage_F": float(first["f.stat"].iloc[0]),
    "nobs": int(res.nobs),
}
print(json.dumps(out, indent=2))
# ---- golden truth (stderr) ----
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(res.params["x"]),
            "others": [
                float(res.std_errors["x"]),
                float(res.tstats["x"]),
                float(res.pvalues["x"]),
                float(first["f.stat"].iloc[0]),
            ],
        }
    )
    + "\n"
)
