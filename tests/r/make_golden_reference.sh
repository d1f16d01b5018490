#!/bin/sh
# Regenerate tests/golden/estimators/r_paper_reference.tsv: the R implementation of the "paper"
# canonical estimators (canonical_paper.R) run on the published reference CSVs, which sit in
# shared/reference/causalverify-2026/data beside the repository checkout.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../../shared/reference/causalverify-2026/data"
Rscript "$here/canonical_paper.R" \
  did=s01_data.csv did=s40_data.csv did=s46_data.csv did=s49_data.csv \
  event_study=s11_data.csv event_study=s63_data.csv event_study=s66_data.csv \
  iv=s19_data.csv iv=s21_data.csv iv=s75_data.csv iv=s82_data.csv \
  rdd=s25_data.csv rdd=s28_data.csv rdd=s86_data.csv rdd=s96_data.csv \
  > "$here/../golden/estimators/r_paper_reference.tsv"
