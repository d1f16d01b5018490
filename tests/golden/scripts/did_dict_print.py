import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
fit = smf.ols("y ~ treated * post", data=df).fit(
    cov_type="cluster", cov_kwds={"groups": df["unit_id"]}
)
term = "treated:post"
print({"att": fit.params[term], "se": fit.bse[term], "n": int(fit.nobs)})
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "estimate": float(fit.params[term]),
            "others": [float(fit.bse[term]), float(fit.tvalues[term]), float(fit.pvalues[term])],
        }
    )
    + "\n"
)
