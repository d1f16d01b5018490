import pandas as pd
import pyfixest as pf

df = pd.read_csv("data/scenario.csv")
fit = pf.feols("y ~ treat_x_post | unit_id + period", data=df, vcov={"CRV1": "unit_id"})
b, se = fit.coef()["treat_x_post"], fit.se()["treat_x_post"]
lo, hi = b - 1.96 * se, b + 1.96 * se
print(
    f"Relative to the comparison units, treated units moved by {b:.4f} after the policy "
    f"(s.e. {se:.4f}; 95% CI from {lo:.4f} to {hi:.4f}; {fit._N} unit-periods)."
)
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps({"estimate": float(b), "others": [float(se), float(lo), float(hi)]}) + "\n"
)
