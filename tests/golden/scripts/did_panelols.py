import pandas as pd
from linearmodels.panel import PanelOLS

df = pd.read_csv("data/scenario.csv").set_index(["unit_id", "period"])
mod = PanelOLS.from_formula("y ~ treat_x_post + EntityEffects + TimeEffects", data=df)
res = mod.fit(cov_type="clustered", cluster_entity=True)
print(res)
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(res.params["treat_x_post"]),
            "others": [
                float(res.std_errors["treat_x_post"]),
                float(res.tstats["treat_x_post"]),
                float(res.pvalues["treat_x_post"]),
                *map(float, res.conf_int().loc["treat_x_post"]),
            ],
        }
    )
    + "\n"
)
