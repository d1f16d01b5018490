import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
first = smf.ols("x ~ z + controls", data=df).fit()
print("First stage")
print(first.summary().tables[1])
df["x_hat"] = first.fittedvalues
res = smf.ols("y ~ x_hat + controls", data=df).fit()
print("Second stage")
print(res.summary().tables[1])
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(res.params["x_hat"]),
            "others": [
                float(res.bse["x_hat"]),
                float(res.tvalues["x_hat"]),
                float(res.pvalues["x_hat"]),
                *map(float, res.conf_int().loc["x_hat"]),
            ],
        }
    )
    + "\n"
)
