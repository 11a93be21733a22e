//! Start-up prototype of docs/netcdf4-engine.md: libnetcdf loaded only when a file needs
//! it. `lazy_nc FILE` reads the file's magic number; a classic file needs nothing more
//! (our own reader), a netCDF-4/HDF5 file loads libnetcdf with `dlopen` (through
//! `libloading`) and asks it for the number of dimensions. This binary does not link
//! libnetcdf (check with `ldd`), so a classic run pays none of its start-up.

use std::ffi::{c_char, c_int, CString};
use std::io::Read;

type NcOpen = unsafe extern "C" fn(*const c_char, c_int, *mut c_int) -> c_int;
type NcInqNdims = unsafe extern "C" fn(c_int, *mut c_int) -> c_int;
type NcClose = unsafe extern "C" fn(c_int) -> c_int;

fn main() {
    let path = std::env::args().nth(1).expect("usage: lazy_nc FILE");
    let mut magic = [0u8; 4];
    std::fs::File::open(&path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .expect("read");
    if &magic[..3] == b"CDF" {
        println!("classic: read by our own reader, libnetcdf not loaded");
        return;
    }
    // SAFETY: libnetcdf's C functions are called with the signatures of netcdf.h, a
    // NUL-terminated path and live out-pointers; the library stays loaded until exit.
    unsafe {
        let lib = libloading::Library::new("libnetcdf.so.19").expect("dlopen libnetcdf");
        let open: libloading::Symbol<NcOpen> = lib.get(b"nc_open\0").expect("nc_open");
        let ndims: libloading::Symbol<NcInqNdims> =
            lib.get(b"nc_inq_ndims\0").expect("nc_inq_ndims");
        let close: libloading::Symbol<NcClose> = lib.get(b"nc_close\0").expect("nc_close");
        let c = CString::new(path).expect("path");
        let (mut id, mut n) = (0, 0);
        assert_eq!(open(c.as_ptr(), 0, &mut id), 0, "nc_open");
        assert_eq!(ndims(id, &mut n), 0, "nc_inq_ndims");
        close(id);
        println!("netCDF-4: libnetcdf loaded on demand, {n} dimensions");
    }
}
