"""A loopback OPeNDAP (DAP2) server for nco-rs's tests and bench: pydap's file server.

Usage: python serve.py --port PORT --data DIR [--parent PID]

Started by the integration tests (tests/src/dap.rs) and by `nco-bench run --dap`, from the
virtual environment scripts/dap-venv.sh makes. It exits by itself when process PID (the
test run or bench that started it) is gone, so no server outlives its run.

Four mends of pydap 3.5.9's file server, each a server bug that makes libnetcdf's DAP2
client (and so NCO 5.1.4 and nco-rs alike) fail on files that are fine:
- a request for part of a variable (a record, a hyperslab, a block of a large variable)
  fails after the answer's header: pydap reshapes the part to the whole variable's
  shape, and the truncated answer reaches libnetcdf, which warns and returns zeros;
- a scalar variable's data request fails (the netCDF handler indexes the netCDF4-python
  variable with numpy.newaxis, which netCDF4-python refuses);
- text attributes are written into the DAS without escaping `"` and `\\`, so libnetcdf's
  DAS parser stops at the first quote inside a value;
- gunicorn's default request-line limit (4094 bytes) is shorter than the constraint
  libnetcdf sends when it fetches a file's small variables in one request.
"""

import argparse
import os
import threading
import time

import numpy as np
import pydap.lib
import pydap.responses.das as das
import netCDF4
from pydap.handlers.netcdf_handler import LazyVariable, NetCDFHandler
from pydap.model import BaseType
from pydap.wsgi.app import DapServer, PyDapApplication, StaticMiddleware

_encode = pydap.lib.encode


def encode(obj):
    """DAS encoding with DAP2's string escapes (backslash before `"` and `\\`)."""
    if isinstance(obj, str) or isinstance(obj, np.ndarray) and obj.dtype.char in "SU":
        text = str(obj).replace("\\", "\\\\").replace('"', '\\"')
        return '"{0}"'.format(text)
    return _encode(obj)


das.encode = encode

def getitem(self, key):
    """A variable's raw values (no masking, no scaling), then `key` applied; for a
    scalar, the whole value is read first (netCDF4-python refuses numpy.newaxis). The
    result keeps the shape of the hyperslab `key` selects: pydap reshapes it to the
    variable's whole shape, which fails for every part of a variable (a record, or a
    block of a large variable), so the answer stops after its header."""
    with netCDF4.Dataset(self.filepath) as source:
        source.set_auto_maskandscale(False)
        var = source[self.path]
        if not var.shape:
            return np.asarray(var[...])[key]
        data = np.asarray(var[key]).astype(self.dtype)
        if tuple(self._reshape) != tuple(self._shape) and data.size == np.prod(self._reshape):
            data = data.reshape(self._reshape)
        return data


LazyVariable.__getitem__ = getitem


class CharAsString:
    """A netCDF char variable served as DAP2 strings over all but its last dimension,
    as netCDF-C's DAP2 client expects (and THREDDS and Hyrax serve them): pydap serves
    `char name(len)` as an array of one-character strings. A scalar char is a string of
    at most one character. Values are numpy unicode strings: pydap writes an empty numpy
    byte string as one NUL byte, which shifts every value after it."""

    def __init__(self, filepath, path, shape):
        self.filepath = filepath
        self.path = path
        self.dtype = np.dtype("U%d" % max(shape[-1] if shape else 1, 1))
        self.shape = tuple(shape[:-1])
        self.ndim = len(self.shape)
        self.size = int(np.prod(self.shape))

    def __getitem__(self, key):
        with netCDF4.Dataset(self.filepath) as source:
            source.set_auto_maskandscale(False)
            var = source[self.path]
            var.set_auto_chartostring(False)
            chars = np.asarray(var[...])
        rows = chars.reshape(-1, chars.shape[-1] if chars.ndim else 1)
        text = np.array(
            [b"".join(row).rstrip(b"\0").decode("latin-1") for row in rows],
            dtype=self.dtype,
        ).reshape(self.shape)
        return text[key]

    def __len__(self):
        return self.shape[0]


_init = NetCDFHandler.__init__


def init(self, filepath):
    """pydap's dataset, then char variables as strings and the record dimension named
    in DODS_EXTRA (as THREDDS and Hyrax do; pydap looks for it where netCDF4-python
    never puts it, so a record dimension is served as fixed)."""
    _init(self, filepath)
    with netCDF4.Dataset(filepath) as source:
        unlimited = [d for d, dim in source.dimensions.items() if dim.isunlimited()]
    if unlimited:
        self.dataset.attributes["DODS_EXTRA"] = {"Unlimited_Dimension": unlimited[0]}
    for name in list(self.dataset.keys()):
        var = self.dataset[name]
        data = getattr(var, "data", None)
        if isinstance(data, LazyVariable) and data.dtype.char == "S":
            dims = list(var.dims)[:-1]
            self.dataset[name] = BaseType(
                name,
                CharAsString(filepath, data.path, data._shape),
                dims=dims,
                **var.attributes,
            )


NetCDFHandler.__init__ = init


def watch_parent(pid):
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            os._exit(0)
        time.sleep(0.5)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--parent", type=int)
    args = parser.parse_args()
    if args.parent:
        threading.Thread(target=watch_parent, args=(args.parent,), daemon=True).start()
    app = StaticMiddleware(DapServer(args.data, None), ("pydap.wsgi", "templates/static"))
    PyDapApplication(
        app,
        host="127.0.0.1",
        port=args.port,
        # Processes, not threads: netCDF4-python (HDF5) is not safe to call from
        # several threads at once, and parallel tests ask at the same time.
        workers=2,
        threads=1,
        worker_class="sync",
        limit_request_line=0,
        loglevel="warning",
        accesslog=os.environ.get("NCO_RS_DAP_ACCESS_LOG"),
    ).run()


if __name__ == "__main__":
    main()
