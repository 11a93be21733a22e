//! The selected values of variables as the bytes a C program holds in memory: ncks's
//! `--md5_dgs` digests (and `--md5_wrt_att` attributes) and its `-b` unformatted
//! binary file (NCO manual, "ncks", `-b fl_bnr` and "MD5 Digests").
//!
//! Rules measured on NCO 5.1.4:
//! - the bytes are the hyperslab's elements in this machine's byte order (little-endian
//!   here: the digest of `lat = -90, 90` as NC_FLOAT is `63c95a0415b85087807a3a77ac44b6b6`),
//!   NC_CHAR as its bytes;
//! - the variables go in the order ncks copies them ([`copy_order`]): into a CDF-1 or
//!   CDF-2 output without any `-d`, the fixed variables, then the record variables,
//!   each in output order (what NCO calls its "MM3 workaround"); otherwise (CDF-5,
//!   netCDF-4, any hyperslab) simply the output order;
//! - digests are of the values the output stores: converted to its type (NC_UBYTE as
//!   NC_SHORT into netCDF-4 classic, as NCO 5.1.4 digests them there; into netCDF3
//!   NCO digests the unconverted values, ours the stored ones); a `-b` file holds the
//!   input's type, as NCO's;
//! - NC_STRING: NCO digests and writes the addresses of the strings (a digest that
//!   changes from run to run, a binary file of pointers). Ours digests each string's
//!   UTF-8 bytes followed by a NUL (the strings' C layout), and `-b` refuses the
//!   variable.

use std::io::Write;

use crate::dataset::Dataset;
use crate::extract;
use crate::hyperslab::Selection;
use crate::model::{Attr, Format, Meta};
use crate::types::{NcType, Values};
use crate::{Error, Result};

/// The name of the attribute `--md5_wrt_att` gives each variable.
pub const MD5_ATTRIBUTE: &str = "MD5";

/// Output variables (indices of `out`) in the order ncks copies and so digests and
/// writes them to a binary file: fixed then record variables into CDF-1 and CDF-2
/// outputs when nothing is hyperslabbed (`slabbed` false: no `-d`), the output order
/// otherwise (NCO 5.1.4, measured with `-b`).
pub fn copy_order(out: &Meta, slabbed: bool) -> Vec<usize> {
    let all = 0..out.vars.len();
    if slabbed || !matches!(out.format, Format::Classic | Format::Offset64) {
        return all.collect();
    }
    let (rec, fixed): (Vec<usize>, Vec<usize>) =
        all.partition(|&i| out.is_record_var(&out.vars[i]));
    fixed.into_iter().chain(rec).collect()
}

/// The blocks digests and binary files read a variable in ([`Dataset::read_blocks`]).
const BLOCK_BYTES: usize = 64 << 20;

/// Call `f` with the values of input variable `s` of `ds` under `sel`, block after
/// block in file order ([`Dataset::read_blocks`]).
///
/// Errors: read errors, and those of `f`.
fn for_each_block(
    ds: &Dataset,
    s: usize,
    sel: &Selection,
    mut f: impl FnMut(&Values) -> Result<()>,
) -> Result<()> {
    ds.read_blocks(s, &sel.for_var(ds.meta(), s), BLOCK_BYTES, |_, v| f(&v))
}

/// The MD5 digest of input variable `s` of `ds` under `sel`, its values as type `ty`
/// (the output's: a netCDF-4 classic output stores NC_UBYTE as NC_SHORT), as 32
/// lower-case hex digits (NCO's `MD5(var) = ...` and its `MD5` attribute).
///
/// Errors: read errors.
pub fn md5_hex(ds: &Dataset, s: usize, sel: &Selection, ty: NcType) -> Result<String> {
    use md5::{Digest, Md5};
    let mut h = Md5::new();
    let mut buf = Vec::new();
    for_each_block(ds, s, sel, |v| {
        let converted = (v.nc_type() != ty).then(|| v.convert(ty)).flatten();
        let v = converted.as_ref().unwrap_or(v);
        buf.clear();
        if !v.encode_ne(&mut buf) {
            if let Values::Str(strings) = v {
                for x in strings {
                    buf.extend_from_slice(x.as_bytes());
                    buf.push(0);
                }
            }
        }
        h.update(&buf);
        Ok(())
    })?;
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The digests of the variables `order` (indices into `out`, the output's
/// definitions or, for a print, the input's own), each of its source `src[i]` of `ds`
/// under `sel`, as `out` stores it: `(index, digest)`.
///
/// Errors: read errors.
pub fn digests(
    ds: &Dataset,
    out: &Meta,
    src: impl Fn(usize) -> usize,
    sel: &Selection,
    order: &[usize],
) -> Result<Vec<(usize, String)>> {
    let stored = |i: usize| crate::rules::formats::stored_type(out.format, out.vars[i].ty);
    order
        .iter()
        .map(|&i| Ok((i, md5_hex(ds, src(i), sel, stored(i))?)))
        .collect()
}

/// Give each digested output variable its `MD5` text attribute (replacing one it
/// had), as `--md5_wrt_att` does.
pub fn put_md5_attributes(out: &mut Meta, digests: &[(usize, String)]) {
    for (i, d) in digests {
        let attrs = &mut out.vars[*i].attrs;
        let a = Attr::text(MD5_ATTRIBUTE, d);
        match attrs.iter_mut().find(|a| a.name == MD5_ATTRIBUTE) {
            Some(old) => *old = a,
            None => attrs.push(a),
        }
    }
}

/// Write the selected values of the output variables `order` (sources `plan.src`)
/// to `w`, one after the other with nothing between them: ncks's `-b` file.
///
/// Errors: an NC_STRING variable (no fixed-size form; named), read and write errors
/// (named with `path`).
pub fn write_binary(
    ds: &Dataset,
    plan: &extract::Plan,
    sel: &Selection,
    order: &[usize],
    w: &mut impl Write,
    path: &str,
) -> Result<()> {
    let mut buf = Vec::new();
    for &i in order {
        let name = plan.meta.var_ref(i);
        // The values in the input's type (NCO 5.1.4 writes them so, in every format).
        for_each_block(ds, plan.src[i], sel, |v| {
            buf.clear();
            if !v.encode_ne(&mut buf) {
                return Err(Error::var(
                    &name,
                    "an NC_STRING variable cannot be written to a binary file (-b)",
                ));
            }
            w.write_all(&buf).map_err(|e| Error::io(path, e))
        })?;
    }
    w.flush().map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Dim, Var};

    fn var(name: &str, dims: Vec<usize>) -> Var {
        Var::new(name, NcType::Float, dims)
    }

    #[test]
    fn cdf1_and_cdf2_outputs_copy_fixed_variables_first_unless_slabbed() {
        let mut m = Meta::new(Format::Classic);
        for (name, unlimited) in [("time", true), ("lat", false)] {
            m.dims.push(Dim {
                name: name.into(),
                len: 2,
                unlimited,
                group: 0,
            });
        }
        m.vars = vec![var("a", vec![0, 1]), var("b", vec![1]), var("c", vec![0])];
        assert_eq!(copy_order(&m, false), [1, 0, 2]);
        assert_eq!(copy_order(&m, true), [0, 1, 2], "a hyperslab: output order");
        for f in [Format::Cdf5, Format::Netcdf4] {
            m.format = f;
            assert_eq!(copy_order(&m, false), [0, 1, 2], "{f:?}");
        }
    }

    #[test]
    fn md5_attribute_is_added_or_replaced() {
        let mut m = Meta::new(Format::Classic);
        m.vars = vec![var("a", vec![]), var("b", vec![])];
        m.vars[1].attrs.push(Attr::text(MD5_ATTRIBUTE, "old"));
        put_md5_attributes(&mut m, &[(0, "x".into()), (1, "y".into())]);
        assert_eq!(m.vars[0].attrs[0].value.as_text().as_deref(), Some("x"));
        assert_eq!(m.vars[1].attrs.len(), 1);
        assert_eq!(m.vars[1].attrs[0].value.as_text().as_deref(), Some("y"));
    }
}
