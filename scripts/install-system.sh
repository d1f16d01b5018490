#!/usr/bin/env bash
# Installs the system packages CausalVerify needs: R with the Debian-packaged CRAN libraries that
# model-written R code loads most often, and bubblewrap for the sandbox. With --tests, also
# Debian's Chromium and its driver, which the report's browser tests drive headless, and faketime,
# whose library shifts the sandbox's clock in the golden tests. Installs with apt-get when running
# as root; otherwise prints the command to run.
set -euo pipefail

DEB_PACKAGES=(
  r-base-core r-cran-aer r-cran-estimatr r-cran-plm r-cran-sandwich r-cran-lmtest r-cran-car
  r-cran-clubsandwich r-cran-data.table r-cran-dplyr r-cran-tidyr r-cran-readr r-cran-broom
  r-cran-ggplot2 r-cran-tidyverse r-cran-zoo r-cran-jsonlite bubblewrap
)
if [ "${1:-}" = "--tests" ]; then
  DEB_PACKAGES=(chromium chromium-driver faketime)
fi

missing=()
for pkg in "${DEB_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "system packages: ${DEB_PACKAGES[*]:0:1} and the rest present"
  exit 0
fi

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "system packages: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "system packages: installed"
else
  echo "system packages missing: ${missing[*]}" >&2
  echo "install them with:  sudo apt-get install --no-install-recommends ${missing[*]}" >&2
  echo "(CausalVerify refuses to execute model-written code without bubblewrap; R-language cells need R.)" >&2
fi
