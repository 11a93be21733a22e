#!/usr/bin/env bash
# The main job of nco-rs on a fresh Debian machine: install what is missing (the netCDF
# packages, NCO as the reference and CDO as a second one), build the workspace, make the
# synthetic benchmark files when absent, and run NCO's operator wishlist with nco-rs and
# NCO (and CDO) side by side. Arguments go to `nco-bench run` (e.g. --full, -t 2,
# --cold, --only 1,2, --dap). Results: bench-out/results.{txt,csv,json,svg}, and with no
# arguments the scaling study's bench-out/scale.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
export NCO_RS_EXTRA_PACKAGES="cdo"
# shellcheck source=.ci/deps
source .ci/deps
cargo build --release --workspace --bins
# `--dap` reads the inputs from the loopback OPeNDAP server of the DAP tests.
for a in "$@"; do
    if [ "$a" = "--dap" ]; then bash scripts/dap-venv.sh; fi
done
target/release/nco-bench run "$@"
# The default run ends with the scaling study (issue 22): ncra over 32 files as one
# process, as a job array of two parts plus the merge, and under mpirun when the MPI
# build is there (bash scripts/mpi-build.sh; the test command makes it). Results:
# bench-out/scale.txt.
if [ $# -eq 0 ]; then
    target/release/nco-bench scale
fi
