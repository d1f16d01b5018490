# TWFE with pyfixest, main line first, then a robustness table (columns = specifications)
import pandas as pd
import pyfixest as pf

df = pd.read_csv("data/scenario.csv")
start = int(df.loc[df.treat_x_post == 1, "period"].min())
first, last = int(df.period.min()), int(df.period.max())

main = pf.feols("y ~ treat_x_post | unit_id + period", data=df, vcov={"CRV1": "unit_id"})
b = float(main.coef()["treat_x_post"])
main_txt = f"{b:.3f}"
print(f"Main estimate (TWFE, SE clustered by unit): {main_txt}")
print(f"  standard error {float(main.se()['treat_x_post']):.3f}, {len(df):,} unit-periods")

pre = df[df.period < start].copy()
pre["fake"] = ((pre.period >= start - 2) & (pre.treated == 1)).astype(int)
specs = {
    "baseline": (df, "treat_x_post"),
    f"drop period {first}": (df[df.period > first], "treat_x_post"),
    f"drop period {last}": (df[df.period < last], "treat_x_post"),
    "placebo: adoption 2 periods early": (pre, "fake"),
}
cols = {}
for name, (data, var) in specs.items():
    fit = pf.feols(f"y ~ {var} | unit_id + period", data=data, vcov={"CRV1": "unit_id"})
    cols[name] = {
        "coef": f"{float(fit.coef()[var]):.4f}",
        "se": f"{float(fit.se()[var]):.4f}",
        "N": f"{len(data):,}",
    }
table = pd.DataFrame(cols)
print()
print("Robustness (columns are specifications):")
print(table.to_string())
# ---- golden truth (stderr) ----
import json  # noqa: E402
import sys  # noqa: E402

last_name = list(cols)[-1]
sys.stderr.write(
    json.dumps(
        {
            "value": main_txt,
            "anchor": "Main estimate (TWFE",
            "unit": {"scale": "as_printed", "window": None},
            "style": [
                "to_string of a transposed DataFrame (specifications as columns)",
                "main line rounded to 3 decimals, table at 4",
                "thousands separators in N row",
            ],
            "decoys": [
                {
                    "kind": "robustness_last_column_placebo",
                    "printed": cols[last_name]["coef"],
                    "anchor": ["Robustness", "coef"],
                },
                {
                    "kind": "robustness_later_fit",
                    "printed": cols[f"drop period {last}"]["coef"],
                    "anchor": ["Robustness", "coef"],
                },
                {"kind": "setup_constant", "printed": str(last), "anchor": "drop period"},
            ],
            "equivalents": [
                {
                    "printed": cols["baseline"]["coef"],
                    "anchor": ["Robustness", "coef"],
                    "unit": {"scale": "as_printed", "window": None},
                }
            ],
        }
    )
    + "\n"
)
