# nco-rs test fixture (our own): a netCDF-4 file written by netCDF4-python, as a
# program other than libnetcdf's utilities and NCO writes one, read back by our chunk
# engine in tests/tests/nc4engine.rs. Usage: python3 nc4python.py OUT.nc
# v(time, lat, lon) = (10000 time + 100 lat + lon) / 7 where written.
import sys

import netCDF4
import numpy as np

d = netCDF4.Dataset(sys.argv[1], "w")
d.title = "written by netCDF4-python"
d.createDimension("time", None)
d.createDimension("lat", 37)
d.createDimension("lon", 50)
d.createDimension("s", 6)
t = d.createVariable("time", "f8", ("time",))
t.units = "days since 2000-01-01"
# Deflate + shuffle, one record per chunk row, chunks that do not divide lat or lon,
# records appended in three pieces.
v = d.createVariable("v", "f4", ("time", "lat", "lon"), zlib=True, complevel=4,
                     shuffle=True, chunksizes=(1, 9, 13))
# One element per chunk: 1850 chunks, a chunk B-tree of more than one level.
w = d.createVariable("w", "i2", ("lat", "lon"), chunksizes=(1, 1), fill_value=-99)
# Fletcher-32 checksums on big-endian doubles, no deflate.
f = d.createVariable("f", ">f8", ("time", "lon"), fletcher32=True, endian="big",
                     chunksizes=(4, 50))
# Unsigned 64-bit integers past 2^63, deflate level 9 without shuffle.
g = d.createVariable("g", "u8", ("lat",), zlib=True, complevel=9, shuffle=False,
                     chunksizes=(10,))
c = d.createVariable("c", "S1", ("lat", "s"), zlib=True)
k = d.createVariable("k", "i1", ("lon",), contiguous=True)
# Written for records 2 to 5 only (the others read as the fill value).
p = d.createVariable("p", "f4", ("time", "lat"), fill_value=1e20, chunksizes=(3, 37))
for start, n in ((0, 3), (3, 5), (8, 4)):
    r = np.arange(start, start + n)
    t[start:start + n] = r * 0.5
    v[start:start + n] = (r[:, None, None] * 10000 + np.arange(37)[None, :, None] * 100
                          + np.arange(50)[None, None, :]).astype("f4") / 7
    f[start:start + n] = -(r[:, None] * 1000.0 + np.arange(50)[None, :]) / 3
w[:] = (np.arange(37)[:, None] * 50 + np.arange(50)[None, :]).astype("i2")
w[5, 7] = np.ma.masked
g[:] = np.arange(37, dtype="u8") * np.uint64(123456789012345) + np.uint64(2**63)
c[:] = netCDF4.stringtochar(np.array(["row%02d" % i for i in range(37)], dtype="S6"))
k[:] = np.arange(50) - 25
p[2:6] = np.arange(4 * 37).reshape(4, 37)
d.close()
