import pandas as pd
import pyfixest as pf

df = pd.read_csv("data/scenario.csv")
fit = pf.feols("y ~ treat_x_post | unit_id + period", data=df, vcov={"CRV1": "unit_id"})
pf.etable([fit], type="md")
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

row = fit.tidy().loc["treat_x_post"]
sys.stderr.write(
    json.dumps({"estimate": float(row.iloc[0]), "others": [float(v) for v in row.iloc[1:]]}) + "\n"
)
