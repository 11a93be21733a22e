//! Unit conversion through UDUnits-2, as NCO converts hyperslab bounds given with
//! units (`-d wvl,'0.4 micron','0.7 micron'` on a coordinate in `meter`; NCO manual,
//! "UDUnits Support").
//!
//! The library (`libudunits2.so.0`, Debian's `libudunits2-0`, with its unit database
//! from `libudunits2-data`) is loaded when a conversion is first asked for, not linked:
//! the operators run without it, and only bounds with units need it. Calls go through
//! one lock (UDUnits-2 is not thread-safe); its own messages on stderr are silenced,
//! failures become our one-line errors.

use std::ffi::{c_char, c_double, c_int, c_void, CStr, CString};
use std::sync::{Mutex, OnceLock};

use crate::error::{Error, Result};

type ReadXml = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type Parse = unsafe extern "C" fn(*const c_void, *const c_char, c_int) -> *mut c_void;
type GetConverter = unsafe extern "C" fn(*const c_void, *const c_void) -> *mut c_void;
type ConvertDouble = unsafe extern "C" fn(*const c_void, c_double) -> c_double;
type Free = unsafe extern "C" fn(*mut c_void);
type SetHandler = unsafe extern "C" fn(*const c_void) -> *const c_void;

/// The loaded library and its unit system.
struct Lib {
    system: *mut c_void,
    parse: Parse,
    get_converter: GetConverter,
    convert: ConvertDouble,
    free_unit: Free,
    free_converter: Free,
}

// SAFETY: the pointers are only used under `LIB`'s mutex, one call at a time.
unsafe impl Send for Lib {}

static LIB: OnceLock<Mutex<std::result::Result<Lib, String>>> = OnceLock::new();

/// UDUnits' `UT_UTF8` encoding of unit strings.
const UT_UTF8: c_int = 2;

fn load() -> std::result::Result<Lib, String> {
    let name = c"libudunits2.so.0";
    // SAFETY: dlopen and dlsym with valid NUL-terminated names; each symbol is cast to
    // the signature of UDUnits-2's declaration of it (udunits2.h, 2.2).
    unsafe {
        let h = libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        if h.is_null() {
            return Err("units need UDUnits-2 (libudunits2.so.0: apt-get install \
                        libudunits2-0), which cannot be loaded"
                .into());
        }
        let sym = |s: &CStr| {
            let p = libc::dlsym(h, s.as_ptr());
            if p.is_null() {
                Err(format!("UDUnits-2 lacks {}", s.to_string_lossy()))
            } else {
                Ok(p)
            }
        };
        let set_handler: SetHandler = std::mem::transmute(sym(c"ut_set_error_message_handler")?);
        set_handler(sym(c"ut_ignore")?);
        let read_xml: ReadXml = std::mem::transmute(sym(c"ut_read_xml")?);
        let system = read_xml(std::ptr::null());
        if system.is_null() {
            return Err("UDUnits-2 cannot read its unit database (apt-get install \
                        libudunits2-data)"
                .into());
        }
        Ok(Lib {
            system,
            parse: std::mem::transmute::<*mut c_void, Parse>(sym(c"ut_parse")?),
            get_converter: std::mem::transmute::<*mut c_void, GetConverter>(sym(
                c"ut_get_converter",
            )?),
            convert: std::mem::transmute::<*mut c_void, ConvertDouble>(sym(c"cv_convert_double")?),
            free_unit: std::mem::transmute::<*mut c_void, Free>(sym(c"ut_free")?),
            free_converter: std::mem::transmute::<*mut c_void, Free>(sym(c"cv_free")?),
        })
    }
}

/// `value` in unit `from` expressed in unit `to` (UDUnits-2 unit strings: `micron`,
/// `nm`, `meter`, `hPa`, `degC`...).
///
/// Errors: UDUnits-2 is not installed, either string is not a unit it knows (named),
/// or the units are not convertible (`m` to `s`).
pub fn convert(value: f64, from: &str, to: &str) -> Result<f64> {
    let lib = LIB.get_or_init(|| Mutex::new(load()));
    let guard = lib.lock().unwrap_or_else(|p| p.into_inner());
    let lib = guard.as_ref().map_err(|e| Error::msg(e.clone()))?;
    let parse = |s: &str| -> Result<*mut c_void> {
        let c = CString::new(s.trim()).map_err(|_| Error::msg("NUL in a unit"))?;
        // SAFETY: a valid system and NUL-terminated string; the result is freed below.
        let u = unsafe { (lib.parse)(lib.system, c.as_ptr(), UT_UTF8) };
        if u.is_null() {
            Err(Error::msg(format!("\"{s}\" is not a unit UDUnits-2 knows")))
        } else {
            Ok(u)
        }
    };
    let f = parse(from)?;
    let t = match parse(to) {
        Ok(t) => t,
        Err(e) => {
            // SAFETY: `f` came from ut_parse and is freed once.
            unsafe { (lib.free_unit)(f) };
            return Err(e);
        }
    };
    // SAFETY: two valid units; the converter and units are freed once each.
    unsafe {
        let cv = (lib.get_converter)(f, t);
        let out = if cv.is_null() {
            Err(Error::msg(format!(
                "\"{from}\" cannot be converted to \"{to}\""
            )))
        } else {
            let y = (lib.convert)(cv, value);
            (lib.free_converter)(cv);
            Ok(y)
        };
        (lib.free_unit)(f);
        (lib.free_unit)(t);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Needs UDUnits-2 (installed by the project's install step, .ci/deps).
    #[test]
    fn converts_as_udunits_does() {
        let x = convert(0.4, "micron", "meter").unwrap();
        assert!((x - 4e-7).abs() < 1e-20, "{x}");
        let c = convert(1000.0, "hPa", "Pa").unwrap();
        assert!((c - 1e5).abs() < 1e-6);
        let e = convert(1.0, "meter", "second").unwrap_err().to_string();
        assert!(e.contains("cannot be converted"), "{e}");
        let e = convert(1.0, "furlongs per fortnight x", "meter").unwrap_err();
        assert!(e.to_string().contains("not a unit"), "{e}");
    }
}
