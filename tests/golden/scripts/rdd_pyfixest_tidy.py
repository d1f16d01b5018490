import pandas as pd
import pyfixest as pf

df = pd.read_csv("data/scenario.csv")
sub = df.loc[(df.running_var - 0.5).abs() <= 0.3].copy()
sub["rc"] = sub["running_var"] - 0.5
fit = pf.feols("y ~ treated * rc", data=sub, vcov="HC3")
print(fit.tidy())
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

row = fit.tidy().loc["treated"]
sys.stderr.write(
    json.dumps({"estimate": float(row.iloc[0]), "others": [float(v) for v in row.iloc[1:]]}) + "\n"
)
