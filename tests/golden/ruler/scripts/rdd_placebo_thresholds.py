# Jump at the threshold, then placebo thresholds on each side
import pandas as pd
import statsmodels.formula.api as smf

df = pd.read_csv("data/scenario.csv")
C, H, P = 0.5, 0.3, 1


def jump(data, c):
    d = data.assign(rc=data.running_var - c, above=(data.running_var >= c).astype(int))
    return smf.ols("y ~ above * rc", data=d).fit(cov_type="HC3")


main = jump(df[df.near_cutoff == 1], C)
b = main.params["above"]
main_txt = f"{b:.4f}"
print(
    f"Jump at threshold (c = {C}, h = {H}, p = {P}): {main_txt} (HC3 s.e. {main.bse['above']:.4f})"
)
print("Placebo thresholds (half the bandwidth, one side of the true cutoff only):")
placebo = {}
for c in (0.35, 0.65):
    side = df[(df.running_var < C) if c < C else (df.running_var >= C)]
    side = side[(side.running_var - c).abs() <= H / 2]
    placebo[c] = f"{jump(side, c).params['above']:.4f}"
    print(f"  jump at placebo threshold {c:.2f}: {placebo[c]}")
est_txt = f"{b:.6f}"
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
            "style": [
                "setup constants inside the main label",
                "'jump at threshold' label",
                "ESTIMATE line",
            ],
            "decoys": [
                {"kind": "placebo_cutoff", "printed": placebo[0.35], "anchor": "threshold 0.35"},
                {"kind": "placebo_cutoff", "printed": placebo[0.65], "anchor": "threshold 0.65"},
                {"kind": "setup_constant", "printed": str(H), "anchor": "Jump at threshold (c ="},
            ],
            "equivalents": [
                {
                    "printed": main_txt,
                    "anchor": "Jump at threshold (c =",
                    "unit": {"scale": "as_printed", "window": None},
                }
            ],
        }
    )
    + "\n"
)
