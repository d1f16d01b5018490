import pandas as pd
from rdrobust import rdrobust

df = pd.read_csv("data/scenario.csv")
rd = rdrobust(df["y"], df["running_var"], c=0.5)
print(rd)
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(rd.coef.iloc[0, 0]),
            "others": [
                float(rd.se.iloc[0, 0]),
                float(rd.se.iloc[2, 0]),
                *map(float, rd.ci.iloc[0]),
            ],
        }
    )
    + "\n"
)
