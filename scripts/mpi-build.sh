#!/usr/bin/env bash
# Build ncra (ncrcat), nces (ncea, ncecat) and ncwa with the `mpi` feature into target/mpi/
# (the default binaries in target/release/ stay the build without MPI). Installs
# Debian's Open MPI and libclang (for the bindings) when missing.
#   bash scripts/mpi-build.sh            then: mpirun -np 4 target/mpi/ncra in_*.nc out.nc
set -euo pipefail
cd "$(dirname "$0")/.."
NCO_RS_EXTRA_PACKAGES="libopenmpi-dev openmpi-bin libclang-dev" source .ci/deps
cargo build --release -p ncra -p ncea -p ncwa --features ncra/mpi,ncea/mpi,ncwa/mpi
mkdir -p target/mpi
for b in ncra ncrcat nces ncea ncecat ncwa; do
    cp -f "target/release/$b" "target/mpi/$b"
done
# The same packages built without the feature again (only relinked: both builds stay
# in cargo's cache), so target/release/ holds the default binaries.
cargo build --release -p ncra -p ncea -p ncwa
echo "MPI builds in target/mpi/: $(ls target/mpi | tr '\n' ' ')"
