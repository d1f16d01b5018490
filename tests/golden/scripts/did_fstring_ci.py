import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
res = smf.ols("y ~ treated + post + treat_x_post", data=df).fit(cov_type="HC1")
b = res.params["treat_x_post"]
se = res.bse["treat_x_post"]
lo, hi = res.conf_int().loc["treat_x_post"]
print(f"N = {int(res.nobs)}, R-squared = {res.rsquared:.3f}")
print(f"Effect: {b:.4f}, 95% CI [{lo:.4f}, {hi:.4f}]")
print(f"Standard error: {se:.4f}")
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(res.params["treat_x_post"]),
            "others": [
                float(res.bse["treat_x_post"]),
                float(res.tvalues["treat_x_post"]),
                float(res.pvalues["treat_x_post"]),
                *map(float, res.conf_int().loc["treat_x_post"]),
            ],
        }
    )
    + "\n"
)
