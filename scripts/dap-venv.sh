#!/usr/bin/env bash
# Make the Python virtual environment of the loopback OPeNDAP server the DAP tests and
# `nco-bench run --dap` start (tests/dap/serve.py): target/dap-venv, with pydap's
# server from PyPI at the version the server's mends were written for. Does nothing
# when it is already there. Needs python3 with venv and pip (Debian: python3-venv).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/dap-venv
pins=("pydap[server,netcdf]==3.5.9" "gunicorn==27.0.1" "numpy<3")
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import pydap.wsgi.app, netCDF4' 2>/dev/null; then
    echo "DAP server environment present: $venv"
    exit 0
fi
mkdir -p target
if ! python3 -m venv "$venv" 2>/dev/null; then
    echo "python3 -m venv failed: installing python3-venv"
    if [ "$(id -u)" -eq 0 ]; then apt-get install -y -q python3-venv; else sudo apt-get install -y -q python3-venv; fi
    rm -rf "$venv"
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}"
"$venv/bin/python" -c 'import pydap.wsgi.app, netCDF4'
echo "DAP server environment made: $venv"
