import pandas as pd
import pyfixest as pf

df = pd.read_csv("data/scenario.csv")
df["post"] = (df.event_day >= 0).astype(int)
fit = pf.feols("ret ~ mkt_ret + post", data=df, vcov={"CRV1": "stock_id"})
fit.summary()
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

row = fit.tidy().loc["post"]
sys.stderr.write(
    json.dumps({"estimate": float(row.iloc[0]), "others": [float(v) for v in row.iloc[1:]]}) + "\n"
)
