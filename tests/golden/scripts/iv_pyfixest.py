import pandas as pd
import pyfixest as pf

df = pd.read_csv("data/scenario.csv")
fit = pf.feols("y ~ 1 + controls | x ~ z", data=df, vcov="hetero")
fit.summary()
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

row = fit.tidy().loc["x"]
sys.stderr.write(
    json.dumps({"estimate": float(row.iloc[0]), "others": [float(v) for v in row.iloc[1:]]}) + "\n"
)
