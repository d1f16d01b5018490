# Two-stage least squares by hand (numpy), printed with Unicode symbols
import numpy as np
import pandas as pd

df = pd.read_csv("data/scenario.csv")
n = len(df)
one = np.ones(n)
X = np.column_stack([one, df.x, df.controls])
Z = np.column_stack([one, df.z, df.controls])
y = df.y.to_numpy()


def fmt(v, digits=4):
    return f"{v:.{digits}f}".replace("-", "\u2212")


pi = np.linalg.lstsq(Z, df.x.to_numpy(), rcond=None)[0]
Xhat = Z @ np.linalg.lstsq(Z, X, rcond=None)[0]
b = np.linalg.solve(Xhat.T @ X, Xhat.T @ y)
u = y - X @ b
bread = np.linalg.inv(Xhat.T @ Xhat)
V = bread @ (Xhat.T * u**2) @ Xhat @ bread * n / (n - X.shape[1])
se = float(np.sqrt(V[1, 1]))
b_ols = np.linalg.lstsq(X, y, rcond=None)[0]

pi_txt = fmt(pi[1])
main_txt = fmt(b[1])
ols_txt = fmt(b_ols[1])
print(f"n = {n}; instrument z; exogenous control: controls")
print(f"π̂ (first stage, effect of z on x) = {pi_txt}")
print(
    f"β̂₂ₛₗₛ = {main_txt}  (σ̂ = {fmt(se)}, 95% CI {fmt(b[1] - 1.96 * se)} … {fmt(b[1] + 1.96 * se)})"
)
print(f"β̂ₒₗₛ  = {ols_txt}  ← biased by the unobserved confounder")
est_txt = f"{b[1]:.6f}"
print(f"ESTIMATE: {est_txt}")
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(
    json.dumps(
        {
            "value": est_txt,
            "anchor": "ESTIMATE:",
            "unit": {"scale": "as_printed", "window": None},
            "style": ["Unicode symbols, subscripts and minus sign (U+2212)", "ESTIMATE line"],
            "decoys": [
                {"kind": "first_stage", "printed": pi_txt, "anchor": "first stage"},
                {"kind": "naive_model_after_main", "printed": ols_txt, "anchor": "β̂ₒₗₛ"},
            ],
            "equivalents": [
                {
                    "printed": main_txt,
                    "anchor": "β̂₂ₛₗₛ",
                    "unit": {"scale": "as_printed", "window": None},
                }
            ],
        }
    )
    + "\n"
)
