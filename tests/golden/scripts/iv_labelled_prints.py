import numpy as np
import pandas as pd

df = pd.read_csv("data/scenario.csv")
X = np.column_stack([np.ones(len(df)), df["x"], df["controls"]])
Z = np.column_stack([np.ones(len(df)), df["z"], df["controls"]])
y = df["y"].to_numpy()
b_ols = np.linalg.lstsq(X, y, rcond=None)[0]
Xhat = Z @ np.linalg.lstsq(Z, X, rcond=None)[0]
b_iv = np.linalg.lstsq(Xhat, y, rcond=None)[0]
print(f"N = {len(df)}")
print(f"OLS estimate of the effect of x: {b_ols[1]:.4f}")
print(f"2SLS estimate of the effect of x: {b_iv[1]:.4f}")
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(json.dumps({"estimate": round(float(b_iv[1]), 4), "others": []}) + "\n")
