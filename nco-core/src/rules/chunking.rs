//! netCDF-4 chunking and compression settings of output variables (NCO manual,
//! "Chunking"; `--cnk_plc`, `--cnk_map`, `--cnk_dmn`, `--cnk_byt`, `--cnk_min`,
//! `--cnk_scl`, `-L`).
//!
//! As NCO 5.1.4 does (its `nco_cnk_ini` and `nco_cnk_sz_set_trv`, checked with
//! `ncdump -hs`): without options a netCDF-4 input's chunked variables keep their chunk
//! sizes, and a netCDF3 input's variables get NCO's own chunking (policy `all`, Rew's
//! balanced shape for rank 3, the lefter product otherwise); options choose the
//! variables (policy) and their sizes (map), `--cnk_dmn` overriding single dimensions;
//! record and compressed variables are always chunked, others not below `--cnk_min`
//! bytes. On netCDF3 output all of this (and `-L`) is ignored with a warning.
//! docs/chunking.md lists the policies and maps, and where NCO still chunks
//! differently.

use clap::{ArgAction, Args};

use crate::error::{Error, Result};
use crate::model::{Meta, Var};

pub use nco_io::chunking::fit;

/// Chunking options.
#[derive(Args, Debug, Clone, Default)]
pub struct ChunkArgs {
    /// Chunking policy: all, g2d, g3d, r1d, xpl, xst, nco, uck (unchunk), none
    #[arg(
        id = "cnk_plc",
        long = "cnk_plc",
        visible_alias = "chunk_policy",
        value_name = "POLICY",
        value_parser = parse_policy
    )]
    pub policy: Option<String>,
    /// Chunking map: dmn, rd1, scl, prd, lfp, rew, xst, nc4, nco (= rew)
    #[arg(
        id = "cnk_map",
        long = "cnk_map",
        visible_alias = "chunk_map",
        value_name = "MAP",
        value_parser = parse_map
    )]
    pub map: Option<String>,
    /// Chunk size of one dimension: name,size (repeatable)
    #[arg(
        id = "cnk_dmn",
        long = "cnk_dmn",
        visible_alias = "chunk_dimension",
        value_name = "DIM,SIZE",
        action = ArgAction::Append,
        value_parser = parse_dim_size
    )]
    pub dims: Vec<(String, usize)>,
    /// Target chunk size in bytes (maps lfp, rew; default 4 MiB)
    #[arg(
        id = "cnk_byt",
        long = "cnk_byt",
        visible_alias = "chunk_byte",
        value_name = "BYTES"
    )]
    pub bytes: Option<u64>,
    /// Smallest variable (bytes) that gets chunked
    #[arg(
        id = "cnk_min",
        long = "cnk_min",
        visible_alias = "chunk_min",
        value_name = "BYTES"
    )]
    pub min: Option<u64>,
    /// Chunk scalar: elements per dimension (map scl) or per chunk (map prd)
    #[arg(
        id = "cnk_scl",
        long = "cnk_scl",
        visible_alias = "chunk_scalar",
        value_name = "N"
    )]
    pub scalar: Option<usize>,
    /// HDF5 chunk cache size in bytes
    #[arg(
        id = "cnk_csh",
        long = "cnk_csh",
        visible_alias = "chunk_cache",
        value_name = "BYTES"
    )]
    pub cache: Option<usize>,
}

const POLICIES: &[&str] = &[
    "all", "g2d", "g3d", "r1d", "xpl", "xst", "nco", "uck", "none", "unchunk",
];
const MAPS: &[&str] = &[
    "dmn", "rd1", "scl", "prd", "lfp", "xst", "nc4", "nco", "rew",
];

fn strip(s: &str) -> String {
    s.trim_start_matches("cnk_")
        .trim_start_matches("plc_")
        .trim_start_matches("map_")
        .to_string()
}

/// Parse a `--cnk_plc` name (kept as given; NCO's prefixes `cnk_`, `plc_` allowed).
///
/// Errors: an unknown policy.
pub fn parse_policy(p: &str) -> Result<String> {
    one_of(p, POLICIES, "--cnk_plc", "policy")
}

/// Parse a `--cnk_map` name (kept as given; NCO's prefixes `cnk_`, `map_` allowed).
///
/// Errors: an unknown map.
pub fn parse_map(m: &str) -> Result<String> {
    one_of(m, MAPS, "--cnk_map", "map")
}

/// `name` (kept as given) when, without NCO's prefixes, it is one of `names`.
///
/// Errors: another name, "unknown chunking `what`" on `option`.
fn one_of(name: &str, names: &[&str], option: &str, what: &str) -> Result<String> {
    if !names.contains(&strip(name).as_str()) {
        return Err(Error::option(
            option,
            format!("unknown chunking {what} \"{name}\""),
        ));
    }
    Ok(name.to_string())
}

/// Parse a `--cnk_dmn` pair `name,size`.
///
/// Errors: no comma, or a size that is not a positive integer.
pub fn parse_dim_size(s: &str) -> Result<(String, usize)> {
    let (n, v) = s
        .split_once(',')
        .ok_or_else(|| Error::option("--cnk_dmn", format!("\"{s}\" is not name,size")))?;
    let size = v
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|&x| x > 0)
        .ok_or_else(|| {
            Error::option(
                "--cnk_dmn",
                format!("size in \"{s}\" must be a positive integer"),
            )
        })?;
    Ok((n.trim().to_string(), size))
}

/// What a variable's output chunking is decided from, besides the options.
#[derive(Clone, Copy, Debug, Default)]
pub struct ChunkContext<'a> {
    /// The variable's chunk sizes in the input (`None`: contiguous, or a netCDF3 input).
    pub input: Option<&'a [usize]>,
    /// True when the input is a netCDF-4 file (its chunking is kept by default); false
    /// for a netCDF3 one, whose variables get NCO's own chunking.
    pub input_netcdf4: bool,
    /// True when the output variable is compressed (it must be chunked).
    pub compressed: bool,
    /// True when a hyperslab cut the variable's record dimension (NCO then chunks a
    /// one-dimensional record variable by the records selected, not by 4096 bytes).
    pub record_cut: bool,
}

/// The target chunk bytes NCO 5.1.4 uses (`NCO_CNK_SZ_BYT_DFL`).
const DEFAULT_CHUNK_BYTES: u64 = 4 << 20;
/// The smallest variable NCO 5.1.4 chunks when it need not (twice a 4 KiB block).
const DEFAULT_MIN_BYTES: u64 = 8192;
/// The chunk bytes of a one-dimensional record variable (`NCO_CNK_SZ_BYT_R1D_DFL`).
const RECORD_1D_BYTES: usize = 4096;

impl ChunkArgs {
    /// True when any chunking option was given.
    pub fn any(&self) -> bool {
        self.policy.is_some()
            || self.map.is_some()
            || !self.dims.is_empty()
            || self.scalar.is_some()
            || self.bytes.is_some()
            || self.min.is_some()
    }

    /// The policy and map in effect, as NCO 5.1.4 resolves them: nothing given keeps a
    /// netCDF-4 input's chunking (`None`) and chunks a netCDF3 input's variables with
    /// NCO's recommendation (`all`, `rew`); a size option alone takes the same
    /// defaults (`xst`/`xst` for a netCDF-4 input); a policy alone takes map `rd1`, a
    /// map alone policy `g2d`; `nco` means `all` (policy) and `rew` (map).
    fn resolved(&self, input_netcdf4: bool) -> Option<(String, String)> {
        let policy = self.policy.as_deref().map(strip);
        let map = self.map.as_deref().map(strip);
        let (policy, map) = match (policy, map) {
            (None, None) if input_netcdf4 => {
                if !self.any() {
                    return None;
                }
                ("xst".to_string(), "xst".to_string())
            }
            (None, None) => ("nco".to_string(), "nco".to_string()),
            (Some(p), None) => (p, "rd1".to_string()),
            (None, Some(m)) => ("g2d".to_string(), m),
            (Some(p), Some(m)) => (p, m),
        };
        let policy = if policy == "nco" {
            "all".into()
        } else {
            policy
        };
        let map = if map == "nco" { "rew".into() } else { map };
        Some((policy, map))
    }

    /// Chunk sizes for output variable `v` of `meta` (`None` = contiguous, or
    /// libnetcdf's choice for a variable that must be chunked), as NCO 5.1.4 chooses
    /// them (its `nco_cnk_sz_set_trv`; docs/chunking.md): the policy picks the
    /// variables (a record or compressed variable is always chunked; others not below
    /// `--cnk_min` bytes), the map their sizes, `--cnk_dmn` then overrides single
    /// dimensions. Record dimensions keep chunk sizes beyond their current length (the
    /// file grows into them), fixed ones are trimmed to theirs.
    pub fn chunks_for(&self, meta: &Meta, v: &Var, ctx: ChunkContext) -> Option<Vec<usize>> {
        if v.dims.is_empty() {
            return None;
        }
        let fitted = ctx.input.and_then(|c| fit(c, meta, v));
        let input = fitted.as_deref();
        let Some((policy, map)) = self.resolved(ctx.input_netcdf4) else {
            return input.map(<[usize]>::to_vec);
        };
        if map == "nc4" {
            return None;
        }
        let rank = v.dims.len();
        // Which of the variable's dimensions are record dimensions.
        let is_rec: Vec<bool> = v.dims.iter().map(|&d| meta.dims[d].unlimited).collect();
        let record = is_rec.contains(&true);
        let explicit = &self.dims;
        let named = v
            .dims
            .iter()
            .any(|&d| explicit.iter().any(|(n, _)| *n == meta.dims[d].name));
        let elem = v.ty.size().max(1);
        let bytes = meta.var_len(v) as u64 * elem as u64;
        if !(record || ctx.compressed) {
            let skip = bytes < self.min.unwrap_or(DEFAULT_MIN_BYTES)
                || (policy == "xpl" && !named)
                || (policy == "xst" && input.is_none())
                || (policy == "g2d" && rank < 2)
                || (policy == "g3d" && rank < 3)
                || matches!(policy.as_str(), "uck" | "unchunk" | "none");
            if skip {
                return None;
            }
        }
        let target = self.bytes.unwrap_or(DEFAULT_CHUNK_BYTES).max(1);
        let lens: Vec<usize> = v.dims.iter().map(|&d| meta.dims[d].len).collect();
        let mut out = match (map.as_str(), input) {
            ("xst", Some(c)) => c.to_vec(),
            ("rew", _) if rank == 3 => {
                // Rew's balanced shape ends the choice (no --cnk_dmn override).
                let shape: Vec<usize> = lens.iter().map(|&l| l.max(1)).collect();
                let mut c = rew(&shape, elem, target);
                trim(&mut c, &lens, &is_rec);
                return Some(c);
            }
            _ => {
                // Defaults: fixed dimensions whole, record ones at their length (one
                // for rd1; 4096 bytes of a one-dimensional record variable).
                let mut c: Vec<usize> = (0..rank)
                    .map(|k| match is_rec[k] {
                        true if map == "rd1" => 1,
                        true if rank == 1 && !ctx.record_cut => RECORD_1D_BYTES / elem,
                        _ => lens[k].max(1),
                    })
                    .collect();
                if map == "lfp" || map == "rew" {
                    if bytes >= target {
                        lefter_product(&mut c, &is_rec, elem, target);
                    }
                } else {
                    let each = match map.as_str() {
                        "prd" => self
                            .scalar
                            .map(|n| (n as f64).powf(1.0 / rank as f64).ceil() as usize),
                        _ => self.scalar,
                    };
                    if let Some(each) = each.filter(|&e| e > 0) {
                        for (k, x) in c.iter_mut().enumerate() {
                            *x = each.min(lens[k].max(1));
                        }
                    }
                }
                c
            }
        };
        for (k, &d) in v.dims.iter().enumerate() {
            if let Some((_, s)) = explicit.iter().find(|(n, _)| *n == meta.dims[d].name) {
                if policy != "r1d" || (rank == 1 && record) {
                    out[k] = *s;
                }
            }
        }
        trim(&mut out, &lens, &is_rec);
        Some(out)
    }
}

/// NCO's final check: fixed dimensions at most their length, no chunk size of 0.
fn trim(c: &mut [usize], lens: &[usize], record: &[bool]) {
    for (k, x) in c.iter_mut().enumerate() {
        if !record[k] && *x > lens[k] {
            *x = lens[k];
        }
        *x = (*x).max(1);
    }
}

/// NCO's "lefter product" map: the dimensions up to the last record dimension share
/// equally what the target leaves after the (default) sizes of the ones right of it;
/// with no record dimension nothing changes (NCO 5.1.4 keeps one whole chunk).
fn lefter_product(c: &mut [usize], record: &[bool], elem: usize, target: u64) {
    let Some(last) = record.iter().rposition(|&r| r) else {
        return;
    };
    let right: f64 = c[last + 1..].iter().map(|&x| x as f64).product();
    let left = (target as f64 / elem as f64) / right;
    let each = (left.powf(1.0 / (last + 1) as f64) as usize).max(1);
    for x in &mut c[..=last] {
        *x = each;
    }
}

/// Russ Rew's balanced chunk shape of a three-dimensional variable of shape `shape`
/// (NCO 5.1.4's map `rew`, from Rew's "Chunking Data: Choosing Shapes", 2013): about
/// as many chunks along the first axis as across a slab of the other two, the
/// first-guess sizes then raised by one along the axes (NCO's order) whichever brings
/// the chunk closest below `target` bytes.
pub fn rew(shape: &[usize], elem: usize, target: u64) -> Vec<usize> {
    let values = target as f64 / elem as f64;
    let total: f64 = shape.iter().map(|&x| x as f64).product();
    let mut across = (total / values).powf(0.25);
    let mut base = vec![0usize; shape.len()];
    let first = shape[0] as f64 / (across * across);
    if first >= 1.0 {
        base[0] = first as usize;
    } else {
        base[0] = 1;
        across /= first.sqrt();
    }
    let mut grow = 1.0;
    for &d in &shape[1..] {
        if (d as f64) / across < 1.0 {
            grow *= across / d as f64;
        }
    }
    for (k, &d) in shape.iter().enumerate().skip(1) {
        base[k] = if (d as f64) / across < 1.0 {
            1
        } else {
            (grow * d as f64 / across) as usize
        };
    }
    let gap = |c: &[usize]| {
        target as i128 - c.iter().map(|&x| x as i128).product::<i128>() * elem as i128
    };
    let mut best = base.clone();
    let mut best_gap = gap(&base);
    for p in 1..(1usize << shape.len()) {
        if best_gap == 0 {
            break;
        }
        let cand: Vec<usize> = base
            .iter()
            .enumerate()
            .map(|(k, &b)| b + ((p >> k) & 1))
            .collect();
        let g = gap(&cand);
        if g >= 0 && g < best_gap {
            best = cand;
            best_gap = g;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Dim, Format, Storage};
    use crate::types::NcType;

    fn meta() -> (Meta, Var) {
        let mut m = Meta::new(Format::Netcdf4);
        for (n, l) in [("lat", 2), ("lev", 3), ("lon", 4)] {
            m.dims.push(Dim {
                name: n.into(),
                len: l,
                unlimited: false,
                group: 0,
            });
        }
        let v = Var {
            name: "v".into(),
            ty: NcType::Float,
            dims: vec![0, 1, 2],
            attrs: vec![],
            storage: Storage::default(),
            group: 0,
        };
        (m, v)
    }

    /// The context of a netCDF-4 input's variable chunked as `input`.
    fn nc4(input: Option<&[usize]>) -> ChunkContext<'_> {
        ChunkContext {
            input,
            input_netcdf4: true,
            ..Default::default()
        }
    }

    #[test]
    fn explicit_dimension_sizes_with_xpl() {
        let (m, v) = meta();
        let a = ChunkArgs {
            policy: Some("xpl".into()),
            min: Some(1),
            dims: vec![("lat".into(), 1), ("lon".into(), 2)],
            ..Default::default()
        };
        assert_eq!(a.chunks_for(&m, &v, nc4(None)), Some(vec![1, 3, 2]));
    }

    #[test]
    fn defaults_keep_input_and_small_variables_stay_contiguous() {
        let (m, v) = meta();
        assert_eq!(
            ChunkArgs::default().chunks_for(&m, &v, nc4(Some(&[1, 1, 4]))),
            Some(vec![1, 1, 4])
        );
        // Input chunks larger than a dimension cut by a hyperslab shrink to it
        // (lat 2, lev 3, lon 4 here; libnetcdf refuses larger chunks).
        assert_eq!(
            ChunkArgs::default().chunks_for(&m, &v, nc4(Some(&[5, 1, 20000]))),
            Some(vec![2, 1, 4])
        );
        let a = ChunkArgs {
            policy: Some("all".into()),
            ..Default::default()
        };
        assert_eq!(
            a.chunks_for(&m, &v, nc4(None)),
            None,
            "96 bytes < default cnk_min"
        );
        // A netCDF3 input's variable: NCO's own chunking, here too small to chunk...
        let classic = ChunkContext::default();
        assert_eq!(ChunkArgs::default().chunks_for(&m, &v, classic), None);
        // ...unless compressed (Rew's shape, trimmed to the dimensions).
        let compressed = ChunkContext {
            compressed: true,
            ..classic
        };
        assert_eq!(
            ChunkArgs::default().chunks_for(&m, &v, compressed),
            Some(vec![2, 3, 4])
        );
        assert!(parse_policy("bogus").is_err());
        assert_eq!(parse_policy("cnk_all").unwrap(), "cnk_all");
        assert!(parse_map("bogus").is_err());
        assert!(parse_dim_size("lat").is_err());
        assert!(parse_dim_size("lat,0").is_err());
        assert_eq!(parse_dim_size(" lat , 3").unwrap(), ("lat".into(), 3));
    }

    /// Rew's balanced shapes as NCO 5.1.4's `ncks --cnk_map=rew --cnk_byt=B` gives them.
    #[test]
    fn rew_shapes_match_nco() {
        for (shape, elem, bytes, want) in [
            (vec![1560, 128, 256], 4, 4 << 20, vec![224, 48, 97]),
            (vec![1560, 128, 256], 4, 4096, vec![7, 8, 18]),
            (vec![2, 1000, 1000], 4, 4 << 20, vec![1, 851, 851]),
            (vec![100000, 2, 3], 8, 4096, vec![2921, 1, 1]),
            (vec![1000, 10, 4000], 4, 65536, vec![21, 1, 570]),
            (vec![12, 94, 192], 2, 4096, vec![1, 30, 60]),
            (vec![10, 34, 34], 4, 8192, vec![4, 23, 22]),
            (vec![50, 20, 20], 4, 4096, vec![11, 10, 9]),
            // in.nc's PS(time = 10, lat = 2, lon = 4) before trimming: 1145, 2, 4.
            (vec![10, 2, 4], 4, 4 << 20, vec![1145, 21, 43]),
        ] {
            assert_eq!(
                rew(&shape, elem, bytes),
                want,
                "{shape:?} x {elem} B, {bytes} B"
            );
        }
    }

    #[test]
    fn lefter_product_shares_the_target_left_of_the_record_dimension() {
        // pr(time = 1560, 128, 256) floats, 4 MiB: 32, 128, 256 (NCO 5.1.4).
        let mut c = vec![1560, 128, 256];
        lefter_product(&mut c, &[true, false, false], 4, 4 << 20);
        assert_eq!(c, [32, 128, 256]);
        // No record dimension: one chunk of the whole variable, as NCO keeps it.
        let mut c = vec![1560, 128, 256];
        lefter_product(&mut c, &[false, false, false], 4, 4 << 20);
        assert_eq!(c, [1560, 128, 256]);
    }
}
