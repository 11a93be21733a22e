#!/usr/bin/env bash
# A real ncks run on a fresh Debian machine: install what is missing, build ncks, make a
# netCDF file with ncgen from tests/data/fixture.cdl, extract a hyperslab with ncks into
# netCDF-4 and print it. (The main job, the benchmark, is scripts/bench.sh.)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=.ci/deps
source .ci/deps
cargo build --release --workspace --bins
work=target/demo
mkdir -p "$work"
ncgen -o "$work/fixture.nc" tests/data/fixture.cdl
set -x
target/release/ncks -O -4 -L 1 -v fld3 -d lat,45. -d lon,90.,180. "$work/fixture.nc" "$work/slab.nc"
ncdump -k "$work/slab.nc"
target/release/ncks --trd -H -C -v fld3 "$work/slab.nc"
