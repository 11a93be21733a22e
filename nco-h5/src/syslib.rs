//! The system's libnetcdf, and the libhdf5 it links, loaded the first time a file needs
//! them (a netCDF-4 or DAP input, a netCDF-4 output, a file read or written through
//! libnetcdf on request) rather than linked into the operators.
//!
//! Why: linking Debian's libnetcdf costs every process about 8 ms before `main` (46
//! shared libraries mapped and their constructors run: HDF5, curl, GnuTLS, Kerberos...),
//! more than the whole of a small extraction from a netCDF3 file; shell loops and station
//! batches pay it on every call (measurements in docs/netcdf4-engine.md, section 3).
//! Loaded on demand, a run on classic files never maps them.
//!
//! How: [`load`] opens the library with `dlopen` (through `libloading`; `RTLD_GLOBAL`,
//! as linking would, so HDF5's filter plugins resolve against the same libhdf5) and
//! finds every function of the two tables below at once; libhdf5's functions are looked
//! up through libnetcdf's handle, which searches its dependencies, so they are those of
//! the very libhdf5 libnetcdf uses. The functions of [`nc`] and [`h5`] have the C
//! prototypes of `netcdf.h` and `H5*public.h` (types and constants from `netcdf-sys` and
//! `hdf5-metno-sys`, whose functions are never called, so nothing links the libraries)
//! and call through the tables. Callers still hold the libraries' process-wide lock
//! (`hdf5_metno_sys::LOCK`) around every call, as before.
//!
//! Which library: `NCO_RS_LIBNETCDF` (a file name or path) when set, and then only that
//! one, else the soname the build found (`libnetcdf.so.19` on Debian 12; see `build.rs`), else `libnetcdf.so`.
//! When none loads, the first netCDF-4 file fails with one line naming the library and
//! the loader's reason ([`load`]).

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

use hdf5_metno_sys::h5::{haddr_t, herr_t, hsize_t, htri_t};
use hdf5_metno_sys::h5d::H5D_layout_t;
use hdf5_metno_sys::h5e::H5E_auto2_t;
use hdf5_metno_sys::h5i::hid_t;
use hdf5_metno_sys::h5t::{H5T_class_t, H5T_direction_t, H5T_order_t, H5T_sign_t};
use hdf5_metno_sys::h5z::H5Z_filter_t;
use netcdf_sys::nc_type;

/// The soname the build found (see `build.rs`).
const BUILD_SONAME: &str = env!("NCO_RS_LIBNETCDF_SONAME");

/// The loaded libraries and their function tables.
struct Libraries {
    /// Keeps the library mapped for the life of the process.
    _netcdf: libloading::Library,
    nc: NcTable,
    h5: H5Table,
}

static LOADED: OnceLock<Result<Libraries, String>> = OnceLock::new();

/// The library names tried, in order: only the one `NCO_RS_LIBNETCDF` names when it is
/// set (a library the user chose that does not load is an error, not a quiet fallback),
/// else the build's soname and then `libnetcdf.so`.
fn candidates() -> Vec<String> {
    if let Some(v) = std::env::var_os("NCO_RS_LIBNETCDF").filter(|v| !v.is_empty()) {
        return vec![v.to_string_lossy().into_owned()];
    }
    let mut names = vec![BUILD_SONAME.to_string()];
    if BUILD_SONAME != "libnetcdf.so" {
        names.push("libnetcdf.so".to_string());
    }
    names
}

fn open_libraries() -> Result<Libraries, String> {
    let mut reasons = Vec::new();
    for name in candidates() {
        // SAFETY: loading libnetcdf runs its and its dependencies' initialisers, which
        // have no preconditions (they run at start-up when the library is linked).
        let lib = unsafe {
            libloading::os::unix::Library::open(
                Some(&name),
                libloading::os::unix::RTLD_LAZY | libloading::os::unix::RTLD_GLOBAL,
            )
        };
        match lib {
            Ok(lib) => {
                let lib = libloading::Library::from(lib);
                let nc = NcTable::find(&lib).map_err(|e| format!("{name}: {e}"))?;
                let h5 = H5Table::find(&lib)
                    .map_err(|e| format!("{name}: the libhdf5 it links lacks {e}"))?;
                return Ok(Libraries {
                    _netcdf: lib,
                    nc,
                    h5,
                });
            }
            Err(e) => reasons.push(e.to_string()),
        }
    }
    Err(format!(
        "libnetcdf could not be loaded ({}); netCDF-4 files and DAP URLs need it (Debian: apt-get install libnetcdf19; NCO_RS_LIBNETCDF names the library to load)",
        reasons.join("; ")
    ))
}

/// Load libnetcdf (and with it libhdf5) if not loaded yet. Cheap after the first call.
///
/// Errors: no candidate library loads, or one lacks a function nco-rs calls: one line
/// naming the library and the loader's reason.
pub fn load() -> Result<(), &'static str> {
    match LOADED.get_or_init(open_libraries) {
        Ok(_) => Ok(()),
        Err(e) => Err(e.as_str()),
    }
}

/// Whether libnetcdf is loaded (without loading it).
pub fn is_loaded() -> bool {
    matches!(LOADED.get(), Some(Ok(_)))
}

/// The tables, loading them on first use. Every entry point that can reach a libnetcdf
/// call ([`load`] callers: opening or creating a file) loads first and reports a failure
/// as an error; should a call come first and the library not load, the process ends with
/// that one line and status 1 rather than a panic.
fn libraries() -> &'static Libraries {
    match LOADED.get_or_init(open_libraries) {
        Ok(l) => l,
        Err(e) => {
            let prog = std::env::args_os()
                .next()
                .map(std::path::PathBuf::from)
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "nco-rs".into());
            eprintln!("{prog}: ERROR {e}");
            std::process::exit(1)
        }
    }
}

/// Declare a table of C functions, its lookup, and a module of `unsafe fn`s of the same
/// names and prototypes that call through it.
macro_rules! c_functions {
    ($table:ident, $field:ident, $module:ident, $what:literal:
     $( fn $name:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty; )*) => {
        #[allow(non_snake_case)]
        struct $table {
            $( $name: unsafe extern "C" fn($($ty),*) -> $ret, )*
        }

        impl $table {
            fn find(lib: &libloading::Library) -> Result<Self, String> {
                // SAFETY: each symbol is taken with the prototype of its C declaration
                // (the library's public headers, as netcdf-sys and hdf5-metno-sys
                // declare them for this build's library versions).
                unsafe {
                    Ok(Self {
                        $( $name: *lib
                            .get(concat!(stringify!($name), "\0").as_bytes())
                            .map_err(|e| format!("{}: {e}", stringify!($name)))?, )*
                    })
                }
            }
        }

        #[doc = concat!("The functions of ", $what, " nco-rs calls, through the loaded library.")]
        #[allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]
        pub mod $module {
            use super::*;
            $(
                #[doc = concat!("`", stringify!($name), "` of the loaded library; its C contract applies.")]
                pub unsafe fn $name($($arg: $ty),*) -> $ret {
                    // SAFETY: the caller keeps the C function's contract.
                    unsafe { (super::libraries().$field.$name)($($arg),*) }
                }
            )*
        }
    };
}

c_functions! { NcTable, nc, nc, "libnetcdf":
    fn nc_close(ncid: c_int) -> c_int;
    fn nc_create(path: *const c_char, cmode: c_int, ncidp: *mut c_int) -> c_int;
    fn nc_def_dim(ncid: c_int, name: *const c_char, len: usize, idp: *mut c_int) -> c_int;
    fn nc_def_grp(parent_ncid: c_int, name: *const c_char, new_ncid: *mut c_int) -> c_int;
    fn nc_def_var(ncid: c_int, name: *const c_char, xtype: nc_type, ndims: c_int,
        dimidsp: *const c_int, varidp: *mut c_int) -> c_int;
    fn nc_def_var_chunking(ncid: c_int, varid: c_int, storage: c_int,
        chunksizesp: *const usize) -> c_int;
    fn nc_def_var_deflate(ncid: c_int, varid: c_int, shuffle: c_int, deflate: c_int,
        deflate_level: c_int) -> c_int;
    fn nc_def_var_fletcher32(ncid: c_int, varid: c_int, fletcher32: c_int) -> c_int;
    fn nc_def_var_fill(ncid: c_int, varid: c_int, no_fill: c_int,
        fill_value: *const c_void) -> c_int;
    fn nc_enddef(ncid: c_int) -> c_int;
    fn nc_free_string(len: usize, data: *mut *mut c_char) -> c_int;
    fn nc_get_att(ncid: c_int, varid: c_int, name: *const c_char, ip: *mut c_void) -> c_int;
    fn nc_get_att_string(ncid: c_int, varid: c_int, name: *const c_char,
        ip: *mut *mut c_char) -> c_int;
    fn nc_get_vars(ncid: c_int, varid: c_int, startp: *const usize, countp: *const usize,
        stridep: *const isize, ip: *mut c_void) -> c_int;
    fn nc_inq(ncid: c_int, ndimsp: *mut c_int, nvarsp: *mut c_int, nattsp: *mut c_int,
        unlimdimidp: *mut c_int) -> c_int;
    fn nc_inq_att(ncid: c_int, varid: c_int, name: *const c_char, xtypep: *mut nc_type,
        lenp: *mut usize) -> c_int;
    fn nc_inq_attname(ncid: c_int, varid: c_int, attnum: c_int, name: *mut c_char) -> c_int;
    fn nc_inq_dim(ncid: c_int, dimid: c_int, name: *mut c_char, lenp: *mut usize) -> c_int;
    fn nc_inq_dimids(ncid: c_int, ndims: *mut c_int, dimids: *mut c_int,
        include_parents: c_int) -> c_int;
    fn nc_inq_format(ncid: c_int, formatp: *mut c_int) -> c_int;
    fn nc_inq_grp_ncid(ncid: c_int, grp_name: *const c_char, grp_ncid: *mut c_int) -> c_int;
    fn nc_inq_grpname(ncid: c_int, name: *mut c_char) -> c_int;
    fn nc_inq_grps(ncid: c_int, numgrps: *mut c_int, ncids: *mut c_int) -> c_int;
    fn nc_inq_natts(ncid: c_int, nattsp: *mut c_int) -> c_int;
    fn nc_inq_unlimdims(ncid: c_int, nunlimdimsp: *mut c_int, unlimdimidsp: *mut c_int) -> c_int;
    fn nc_inq_var(ncid: c_int, varid: c_int, name: *mut c_char, xtypep: *mut nc_type,
        ndimsp: *mut c_int, dimidsp: *mut c_int, nattsp: *mut c_int) -> c_int;
    fn nc_inq_var_chunking(ncid: c_int, varid: c_int, storagep: *mut c_int,
        chunksizesp: *mut usize) -> c_int;
    fn nc_inq_var_deflate(ncid: c_int, varid: c_int, shufflep: *mut c_int,
        deflatep: *mut c_int, deflate_levelp: *mut c_int) -> c_int;
    fn nc_inq_var_endian(ncid: c_int, varid: c_int, endianp: *mut c_int) -> c_int;
    fn nc_inq_var_fletcher32(ncid: c_int, varid: c_int, fletcher32p: *mut c_int) -> c_int;
    fn nc_inq_vardimid(ncid: c_int, varid: c_int, dimidsp: *mut c_int) -> c_int;
    fn nc_inq_varids(ncid: c_int, nvars: *mut c_int, varids: *mut c_int) -> c_int;
    fn nc_open(path: *const c_char, mode: c_int, ncidp: *mut c_int) -> c_int;
    fn nc_put_att(ncid: c_int, varid: c_int, name: *const c_char, xtype: nc_type, len: usize,
        op: *const c_void) -> c_int;
    fn nc_put_att_string(ncid: c_int, varid: c_int, name: *const c_char, len: usize,
        op: *mut *const c_char) -> c_int;
    fn nc_put_att_text(ncid: c_int, varid: c_int, name: *const c_char, len: usize,
        op: *const c_char) -> c_int;
    fn nc_put_vara(ncid: c_int, varid: c_int, startp: *const usize, countp: *const usize,
        op: *const c_void) -> c_int;
    fn nc_strerror(ncerr: c_int) -> *const c_char;
    fn nc_inq_libvers() -> *const c_char;
}

c_functions! { H5Table, h5, h5, "libhdf5":
    fn H5Dclose(dset_id: hid_t) -> herr_t;
    fn H5Dget_chunk_info(dset_id: hid_t, fspace_id: hid_t, index: hsize_t,
        offset: *mut hsize_t, filter_mask: *mut c_uint, addr: *mut haddr_t,
        size: *mut hsize_t) -> herr_t;
    fn H5Dget_chunk_info_by_coord(dset_id: hid_t, offset: *const hsize_t,
        filter_mask: *mut c_uint, addr: *mut haddr_t, size: *mut hsize_t) -> herr_t;
    fn H5Dget_create_plist(dset_id: hid_t) -> hid_t;
    fn H5Dget_num_chunks(dset_id: hid_t, fspace_id: hid_t, nchunks: *mut hsize_t) -> herr_t;
    fn H5Dget_offset(dset_id: hid_t) -> haddr_t;
    fn H5Dget_space(dset_id: hid_t) -> hid_t;
    fn H5Dget_type(dset_id: hid_t) -> hid_t;
    fn H5Dopen2(file_id: hid_t, name: *const c_char, dapl_id: hid_t) -> hid_t;
    fn H5Dset_extent(dset_id: hid_t, size: *const hsize_t) -> herr_t;
    fn H5Dwrite_chunk(dset_id: hid_t, dxpl_id: hid_t, filters: u32, offset: *const hsize_t,
        data_size: usize, buf: *const c_void) -> herr_t;
    fn H5Eset_auto2(estack_id: hid_t, func: H5E_auto2_t, client_data: *mut c_void) -> herr_t;
    fn H5Fclose(file_id: hid_t) -> herr_t;
    fn H5Fopen(filename: *const c_char, flags: c_uint, access_plist: hid_t) -> hid_t;
    fn H5Pclose(plist_id: hid_t) -> herr_t;
    fn H5Pget_chunk(plist_id: hid_t, max_ndims: c_int, dim: *mut hsize_t) -> c_int;
    fn H5Pget_fill_value(plist_id: hid_t, type_id: hid_t, value: *mut c_void) -> herr_t;
    fn H5Pget_filter2(plist_id: hid_t, filter: c_uint, flags: *mut c_uint,
        cd_nelmts: *mut usize, cd_values: *mut c_uint, namelen: usize, name: *mut c_char,
        filter_config: *mut c_uint) -> H5Z_filter_t;
    fn H5Pget_layout(plist_id: hid_t) -> H5D_layout_t;
    fn H5Pget_nfilters(plist_id: hid_t) -> c_int;
    fn H5Sclose(space_id: hid_t) -> herr_t;
    fn H5Sget_simple_extent_dims(space_id: hid_t, dims: *mut hsize_t,
        maxdims: *mut hsize_t) -> c_int;
    fn H5Sget_simple_extent_ndims(space_id: hid_t) -> c_int;
    fn H5Tclose(type_id: hid_t) -> herr_t;
    fn H5Tget_class(type_id: hid_t) -> H5T_class_t;
    fn H5Tget_native_type(type_id: hid_t, direction: H5T_direction_t) -> hid_t;
    fn H5Tget_order(type_id: hid_t) -> H5T_order_t;
    fn H5Tget_sign(type_id: hid_t) -> H5T_sign_t;
    fn H5Tget_size(type_id: hid_t) -> usize;
    fn H5Tis_variable_str(type_id: hid_t) -> htri_t;
    fn H5get_libversion(majnum: *mut c_uint, minnum: *mut c_uint, relnum: *mut c_uint) -> herr_t;
}
