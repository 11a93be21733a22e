//! netCDF-4 chunking and compression settings of output variables (NCO manual,
//! "Chunking"; `--cnk_plc`, `--cnk_map`, `--cnk_dmn`, `--cnk_byt`, `--cnk_min`,
//! `--cnk_scl`, `-L`).
//!
//! As NCO 5.1.4 does (checked with `ncdump -hs`): with no chunking option, chunked input
//! variables keep their chunk sizes and the rest is left to libnetcdf (fixed variables
//! contiguous, record variables libnetcdf's default chunks); with a policy, the chosen
//! variables get chunk sizes from the map (`rd1` by default: one record, every other
//! dimension whole), `--cnk_dmn` overriding single dimensions; variables smaller than
//! `--cnk_min` bytes stay contiguous. On netCDF3 output all of this (and `-L`) is
//! ignored with a warning. docs/chunking.md lists the policies and maps, and where NCO
//! chunks differently (a netCDF3 input's variables without options, maps `nco`, `prd`).

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
    /// Chunking map: dmn, rd1, scl, prd, lfp, xst, nc4, nco
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
    /// Target chunk size in bytes (maps lfp/prd)
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

impl ChunkArgs {
    /// True when any chunking option was given.
    pub fn any(&self) -> bool {
        self.policy.is_some()
            || self.map.is_some()
            || !self.dims.is_empty()
            || self.scalar.is_some()
    }

    /// Chunk sizes for output variable `v` of `meta` (`None` = leave to libnetcdf /
    /// contiguous). `input` is the variable's chunking in the input file.
    pub fn chunks_for(&self, meta: &Meta, v: &Var, input: Option<&[usize]>) -> Option<Vec<usize>> {
        if v.dims.is_empty() {
            return None;
        }
        let fitted = input.and_then(|c| fit(c, meta, v));
        let input = fitted.as_deref();
        let policy = self.policy.as_deref().map(strip);
        let explicit = &self.dims;
        if !self.any() {
            return input.map(<[usize]>::to_vec);
        }
        let rank = v.dims.len();
        let record = meta.is_record_var(v);
        let named = v
            .dims
            .iter()
            .any(|&d| explicit.iter().any(|(n, _)| *n == meta.dims[d].name));
        let chosen = match policy.as_deref().unwrap_or("g2d") {
            "all" => true,
            "g2d" | "nco" => rank >= 2,
            "g3d" => rank >= 3,
            "r1d" => rank == 1 && record,
            "xpl" => named,
            "xst" => input.is_some(),
            _ => false,
        };
        if !chosen {
            return None;
        }
        let bytes = meta.var_len(v) as u64 * v.ty.size() as u64;
        if bytes < self.min.unwrap_or(8192) && !record {
            return None;
        }
        let map = self
            .map
            .as_deref()
            .map(strip)
            .unwrap_or_else(|| "rd1".into());
        let lens: Vec<usize> = v.dims.iter().map(|&d| meta.dims[d].len.max(1)).collect();
        let mut out: Vec<usize> = match map.as_str() {
            "dmn" => lens.clone(),
            "scl" => lens
                .iter()
                .map(|&l| l.min(self.scalar.unwrap_or(l).max(1)))
                .collect(),
            "xst" => input.map_or_else(|| lens.clone(), <[usize]>::to_vec),
            "lfp" | "nco" | "prd" => {
                // Rightmost dimensions whole, the leftmost shrunk to reach the target bytes.
                let target = self.bytes.unwrap_or(4 << 20).max(1) as usize;
                let mut c = lens.clone();
                let elem = v.ty.size();
                for k in 0..rank {
                    let rest: usize = c[k + 1..].iter().product::<usize>() * elem;
                    c[k] = (target / rest.max(1)).clamp(1, lens[k]);
                    if c[k] < lens[k] {
                        break;
                    }
                }
                c
            }
            _ => {
                let mut c = lens.clone();
                if record {
                    c[0] = 1;
                }
                c
            }
        };
        for (k, &d) in v.dims.iter().enumerate() {
            if let Some((_, s)) = explicit.iter().find(|(n, _)| *n == meta.dims[d].name) {
                out[k] = (*s).min(lens[k]).max(1);
            }
        }
        Some(out)
    }
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

    #[test]
    fn explicit_dimension_sizes_with_xpl() {
        let (m, v) = meta();
        let a = ChunkArgs {
            policy: Some("xpl".into()),
            min: Some(1),
            dims: vec![("lat".into(), 1), ("lon".into(), 2)],
            ..Default::default()
        };
        assert_eq!(a.chunks_for(&m, &v, None), Some(vec![1, 3, 2]));
    }

    #[test]
    fn defaults_keep_input_and_small_variables_stay_contiguous() {
        let (m, v) = meta();
        assert_eq!(
            ChunkArgs::default().chunks_for(&m, &v, Some(&[1, 1, 4])),
            Some(vec![1, 1, 4])
        );
        // Input chunks larger than a dimension cut by a hyperslab shrink to it
        // (lat 2, lev 3, lon 4 here; libnetcdf refuses larger chunks).
        assert_eq!(
            ChunkArgs::default().chunks_for(&m, &v, Some(&[5, 1, 20000])),
            Some(vec![2, 1, 4])
        );
        let a = ChunkArgs {
            policy: Some("all".into()),
            ..Default::default()
        };
        assert_eq!(
            a.chunks_for(&m, &v, None),
            None,
            "96 bytes < default cnk_min"
        );
        assert!(parse_policy("bogus").is_err());
        assert_eq!(parse_policy("cnk_all").unwrap(), "cnk_all");
        assert!(parse_map("bogus").is_err());
        assert!(parse_dim_size("lat").is_err());
        assert!(parse_dim_size("lat,0").is_err());
        assert_eq!(parse_dim_size(" lat , 3").unwrap(), ("lat".into(), 3));
    }
}
