import pandas as pd

df = pd.read_csv("data/scenario.csv")
means = df.pivot_table(index="treated", columns="post", values="y", aggfunc="mean")
print(means)
did = (means.loc[1, 1] - means.loc[1, 0]) - (means.loc[0, 1] - means.loc[0, 0])
print(f"Difference-in-differences estimate: {did:.5f}")
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

sys.stderr.write(json.dumps({"estimate": round(float(did), 5), "others": []}) + "\n")
