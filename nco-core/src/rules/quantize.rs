//! `--ppc` and `--baa`: which variables are quantized, and how (NCO manual,
//! "Precision-Preserving Compression"; the arithmetic is [`crate::kernels::quantize`]).
//!
//! `--ppc KEY[,KEY...]=PRC` (repeatable, several joined by `#`): `PRC` is a number of
//! significant digits (`3`, NSD, at least 1; significand bits for HalfShave and
//! BitRound) or, after a dot, of decimal significant digits (`.2` keeps hundredths,
//! `.-2` hundreds: DSD). A key is a variable's name (every variable of that name, in any
//! group), its full path (`/g1/T`), or a regular expression (searched in short names,
//! or anchored at the start of full paths when it holds `/`); `default` (`dfl`,
//! `global`, `glb`) applies to every floating-point variable but coordinate variables
//! and those a `bounds`, `climatology`, `coordinates` or `grid_mapping` attribute of
//! their group names. Named keys override `default`, later ones earlier ones.
//!
//! As NCO 5.1.4 decides: significant digits apply to `float` and `double` only, and no
//! more than 7 and 15 of them (more: an INFO that the variable is left as it is, except
//! for HalfShave and BitRound, which count bits); decimal digits apply to floating
//! types up to 7 and 15, and to integer types when negative, down to minus the type's
//! decimal width (5 for shorts, 10 for ints, 19 and 20 for the 64-bit types); text and
//! byte types are never quantized. A key that matches no variable of the input is an
//! error. Each quantized variable of the output records the precision in an attribute
//! ([`Quantize::attr`]), an existing one kept when it is already coarser.

use crate::error::{Error, Result};
use crate::model::{Attr, Meta, Precision, Quantize, QuantizeAlgorithm, Var};
use crate::rules::groups::{is_regex, regex};
use crate::types::{NcType, Values};

/// The quantization the command line asks for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuantizeArgs {
    /// Every `KEY=PRC` of every `--ppc`, in order.
    pub items: Vec<(String, Precision)>,
    /// `--baa`: the algorithm of significant-digit precisions.
    pub algorithm: QuantizeAlgorithm,
}

impl QuantizeArgs {
    /// True when `--ppc` was given.
    pub fn any(&self) -> bool {
        !self.items.is_empty()
    }
}

/// The keys that stand for every eligible variable.
fn is_default_key(key: &str) -> bool {
    ["default", "dfl", "global", "glb"]
        .iter()
        .any(|k| k.eq_ignore_ascii_case(key))
}

/// Split `s` on `sep` except where a backslash escapes it (`\#`, `\,`). With `last`
/// every backslash is then dropped, as NCO's multi-argument parser drops them;
/// otherwise backslashes before other characters stay for the next split.
fn split_escaped(s: &str, sep: char, last: bool) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        let cur = out.last_mut().expect("never empty");
        match c {
            '\\' => match chars.next() {
                Some(n) if n == sep || last => cur.push(n),
                Some(n) => {
                    cur.push('\\');
                    cur.push(n);
                }
                None => {}
            },
            c if c == sep => out.push(String::new()),
            c => cur.push(c),
        }
    }
    out
}

/// Parse one `--ppc` argument: `KEY[,KEY...]=PRC`, several joined by `#`.
///
/// Errors (naming `--ppc` and the item): an item without `=`, without a key or value,
/// a precision that is not an integer, a significant-digit precision below 1.
pub fn parse_ppc(arg: &str) -> Result<Vec<(String, Precision)>> {
    let bad = |why: String| Error::option("--ppc", why);
    let mut out = Vec::new();
    for item in split_escaped(arg, '#', false) {
        let Some((keys, value)) = item.split_once('=') else {
            return Err(bad(format!("'{item}' is not VAR=PRC")));
        };
        if keys.trim().is_empty() {
            return Err(bad(format!("'{item}' has no variable name")));
        }
        let value = value.trim();
        if value.is_empty() {
            return Err(bad(format!("'{item}' has no precision")));
        }
        let precision = match value.strip_prefix('.') {
            Some(d) => Precision::Decimal(parse_int(d).ok_or_else(|| {
                bad(format!(
                    "'{value}' is not a number of decimal digits (.N, N an integer of at \
                     most 10 digits)"
                ))
            })?),
            None => {
                let n = parse_int(value).ok_or_else(|| {
                    bad(format!(
                        "'{value}' is not a number of significant digits (an integer of \
                         at most 10 digits, or .N for decimal digits)"
                    ))
                })?;
                if n <= 0 {
                    return Err(bad(format!(
                        "{keys}={value}: the number of significant digits must be positive \
                         (for digits before the decimal point use decimal digits with a \
                         dot: {keys}=.-2)"
                    )));
                }
                Precision::Significant(n)
            }
        };
        for key in split_escaped(keys, ',', true) {
            let key = key.trim().to_string();
            if key.is_empty() {
                return Err(bad(format!("'{item}' has an empty variable name")));
            }
            out.push((key, precision));
        }
    }
    Ok(out)
}

/// An integer (optional sign, digits) within the range of `i32`.
fn parse_int(s: &str) -> Option<i32> {
    s.trim().parse().ok()
}

/// Parse a `--baa` (`--qnt_alg`) value: NCO's number 0-8, or a name (`btg`
/// `bitgroom`, `shv` `bitshave`, `set` `bitset`, `dgr` `digitround`, `gbr`
/// `granularbr` `granularbitround`, `bgr` `bitgroomround`, `sh2` `halfshave`, `brt`
/// `bruteforce`, `btr` `bitround`).
///
/// Errors: anything else.
pub fn parse_algorithm(s: &str) -> Result<QuantizeAlgorithm> {
    use QuantizeAlgorithm as A;
    let t = s.trim().to_ascii_lowercase();
    if let Ok(n) = t.parse::<usize>() {
        if let Some(a) = A::ALL.get(n) {
            return Ok(*a);
        }
    }
    Ok(match t.as_str() {
        "btg" | "bitgroom" => A::BitGroom,
        "shv" | "bitshave" => A::BitShave,
        "set" | "bitset" => A::BitSet,
        "dgr" | "digitround" => A::DigitRound,
        "gbr" | "granularbr" | "granularbitround" => A::GranularBitRound,
        "bgr" | "bitgroomround" => A::BitGroomRound,
        "sh2" | "halfshave" => A::HalfShave,
        "brt" | "bruteforce" => A::BruteForce,
        "btr" | "bitround" => A::BitRound,
        _ => {
            return Err(Error::option(
                "--baa",
                format!(
                    "unknown quantization algorithm '{s}' (0-8, or btg shv set dgr gbr bgr \
                     sh2 brt btr)"
                ),
            ))
        }
    })
}

/// The most decimal digits an integer type holds (NCO's limits for negative decimal
/// precisions); `None` for types never quantized.
fn integer_digits(ty: NcType) -> Option<i32> {
    Some(match ty {
        NcType::Short | NcType::UShort => 5,
        NcType::Int | NcType::UInt => 10,
        NcType::Int64 => 19,
        NcType::UInt64 => 20,
        _ => return None,
    })
}

/// The variables `default` leaves alone, one flag per variable of `meta`: coordinate
/// variables, and those a `bounds`, `climatology`, `coordinates` or `grid_mapping`
/// attribute of a variable of their group names (each attribute read once).
fn coordinate_like(meta: &Meta) -> Vec<bool> {
    let mut named = std::collections::HashSet::new();
    for o in &meta.vars {
        for a in ["bounds", "climatology", "coordinates", "grid_mapping"] {
            if let Some(t) = o.attr_text(a) {
                named.extend(t.split_whitespace().map(|n| (o.group, n.to_string())));
            }
        }
    }
    (0..meta.vars.len())
        .map(|v| {
            let var = &meta.vars[v];
            var.dims.iter().any(|&d| meta.coord_var(d) == Some(v))
                || named.contains(&(var.group, var.name.clone()))
        })
        .collect()
}

/// The variables of `meta` key `key` names (see the module docs).
///
/// Errors: a bad regular expression.
fn matching(meta: &Meta, key: &str) -> Result<Vec<usize>> {
    let all = 0..meta.vars.len();
    if is_regex(key) {
        let full = key.contains('/');
        let pattern = if full {
            format!("^{key}")
        } else {
            key.to_string()
        };
        let re = regex(&pattern)
            .map_err(|e| Error::option("--ppc", format!("bad regular expression {key}: {e}")))?;
        return Ok(all
            .filter(|&v| {
                if full {
                    re.is_match(&meta.var_path(v))
                } else {
                    re.is_match(&meta.vars[v].name)
                }
            })
            .collect());
    }
    Ok(all
        .filter(|&v| {
            if key.contains('/') {
                meta.var_path(v) == key
            } else {
                meta.vars[v].name == key
            }
        })
        .collect())
}

/// The quantization of each variable of `input` (by index) that `args` asks for, as
/// NCO 5.1.4 decides it (see the module docs), and the INFO lines to print about
/// precisions too high to apply.
///
/// Errors: a key that matches no variable of `input` (naming it), a bad regular
/// expression.
pub fn plan(input: &Meta, args: &QuantizeArgs) -> Result<(Vec<Option<Quantize>>, Vec<String>)> {
    let n = input.vars.len();
    let mut chosen: Vec<Option<Precision>> = vec![None; n];
    if let Some((_, p)) = args.items.iter().find(|(k, _)| is_default_key(k)) {
        let skip = coordinate_like(input);
        for (v, c) in chosen.iter_mut().enumerate() {
            let ty = input.vars[v].ty;
            if matches!(ty, NcType::Float | NcType::Double) && !skip[v] {
                *c = Some(*p);
            }
        }
    }
    for (key, p) in args.items.iter().filter(|(k, _)| !is_default_key(k)) {
        let vars = matching(input, key)?;
        if vars.is_empty() {
            return Err(Error::option(
                "--ppc",
                format!("{key} matches no variable of the input"),
            ));
        }
        for v in vars {
            chosen[v] = Some(*p);
        }
    }
    let mut notes = Vec::new();
    let plan = chosen
        .into_iter()
        .enumerate()
        .map(|(v, p)| {
            let p = p?;
            let var = &input.vars[v];
            applies(var.ty, p, args.algorithm, |max| {
                if let Precision::Significant(n) = p {
                    notes.push(format!(
                        "Number of Significant Digits (NSD) requested = {n} too high for \
                         variable {} which is of type {}: no quantization is performed for \
                         it (at most {max})",
                        var.name, var.ty
                    ))
                }
            })
            .then_some(Quantize {
                algorithm: args.algorithm,
                precision: p,
            })
        })
        .collect();
    Ok((plan, notes))
}

/// True when precision `p` quantizes a variable of type `ty` under `algorithm`;
/// `too_high(max)` is called for a significant-digit precision beyond the type's `max`.
pub fn applies(
    ty: NcType,
    p: Precision,
    algorithm: QuantizeAlgorithm,
    mut too_high: impl FnMut(i32),
) -> bool {
    let float_max = match ty {
        NcType::Float => Some(7),
        NcType::Double => Some(15),
        _ => None,
    };
    if let Some(max) = float_max {
        let n = match p {
            Precision::Significant(n) | Precision::Decimal(n) => n,
        };
        if algorithm.counts_bits() || n <= max {
            return true;
        }
        if matches!(p, Precision::Significant(_)) {
            too_high(max);
        }
        return false;
    }
    match (integer_digits(ty), p) {
        (Some(max), Precision::Decimal(d)) => d < 0 && d >= -max,
        _ => false,
    }
}

/// Record quantization `q` in `var`'s attributes, as NCO 5.1.4 does: the attribute
/// [`Quantize::attr`] names is added (an `int`), or lowered when the variable already
/// has one of a finer precision; one of another type or size is left, with the
/// warning returned.
pub fn stamp(var: &mut Var, path: &str, q: &Quantize) -> Option<String> {
    let (name, value) = q.attr();
    match var.attrs.iter_mut().find(|a| a.name == name) {
        None => {
            var.attrs.push(Attr {
                name: name.to_string(),
                value: Values::Int(vec![value]),
            });
            None
        }
        Some(a) => match &mut a.value {
            Values::Int(old) if old.len() == 1 => {
                old[0] = old[0].min(value);
                None
            }
            _ => Some(format!(
                "non-conforming {name} attribute (not one int) found in variable {path}, \
                 left as it is"
            )),
        },
    }
}

/// Remove the attribute [`stamp`] recorded for `q` when it holds `q`'s precision (for
/// a variable that is finally not quantized).
pub fn unstamp(var: &mut Var, q: &Quantize) {
    let (name, value) = q.attr();
    var.attrs
        .retain(|a| !(a.name == name && a.value == Values::Int(vec![value])));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Dim, Format};

    #[test]
    fn ppc_arguments_parse_as_nco_reads_them() {
        assert_eq!(
            parse_ppc("default=3#T,u\\,v=.-2").unwrap(),
            vec![
                ("default".into(), Precision::Significant(3)),
                ("T".into(), Precision::Decimal(-2)),
                ("u,v".into(), Precision::Decimal(-2)),
            ]
        );
        for bad in ["T", "=3", "T=", "T=0", "T=-1", "T=x", "T=.x", "T=."] {
            let e = parse_ppc(bad).unwrap_err().to_string();
            assert!(e.contains("--ppc"), "{bad}: {e}");
        }
        assert_eq!(parse_algorithm("8").unwrap(), QuantizeAlgorithm::BitRound);
        assert_eq!(
            parse_algorithm("GranularBR").unwrap(),
            QuantizeAlgorithm::GranularBitRound
        );
        assert!(parse_algorithm("9").is_err());
    }

    fn meta() -> Meta {
        let mut m = Meta::new(Format::Netcdf4);
        m.dims.push(Dim {
            name: "lat".into(),
            len: 2,
            unlimited: false,
            group: 0,
        });
        let mut lat = Var::new("lat", NcType::Double, vec![0]);
        lat.attrs.push(Attr::text("bounds", "lat_bnds"));
        m.vars.push(lat);
        m.vars.push(Var::new("lat_bnds", NcType::Double, vec![0]));
        m.vars.push(Var::new("T", NcType::Float, vec![0]));
        m.vars.push(Var::new("n", NcType::Int, vec![0]));
        m
    }

    #[test]
    fn default_skips_coordinates_bounds_and_integers() {
        let m = meta();
        let args = QuantizeArgs {
            items: parse_ppc("default=3#n=.-2#lat=.1").unwrap(),
            algorithm: QuantizeAlgorithm::default(),
        };
        let (p, notes) = plan(&m, &args).unwrap();
        let prec: Vec<_> = p.iter().map(|q| q.map(|q| q.precision)).collect();
        assert_eq!(
            prec,
            vec![
                Some(Precision::Decimal(1)),
                None,
                Some(Precision::Significant(3)),
                Some(Precision::Decimal(-2))
            ]
        );
        assert!(notes.is_empty());
        let too_high = QuantizeArgs {
            items: parse_ppc("T=8").unwrap(),
            ..args.clone()
        };
        let (p, notes) = plan(&m, &too_high).unwrap();
        assert!(p[2].is_none());
        assert_eq!(notes.len(), 1);
        let nothing = QuantizeArgs {
            items: parse_ppc("nope=3").unwrap(),
            ..args
        };
        assert!(plan(&m, &nothing)
            .unwrap_err()
            .to_string()
            .contains("nope matches no variable"));
    }

    #[test]
    fn stamps_keep_the_coarser_precision() {
        let mut v = Var::new("T", NcType::Float, vec![]);
        let q = |n| Quantize {
            algorithm: QuantizeAlgorithm::GranularBitRound,
            precision: Precision::Significant(n),
        };
        assert!(stamp(&mut v, "/T", &q(4)).is_none());
        stamp(&mut v, "/T", &q(3));
        stamp(&mut v, "/T", &q(5));
        let a = v
            .attr("QuantizeGranularBitRoundNumberOfSignificantDigits")
            .unwrap();
        assert_eq!(a.value, Values::Int(vec![3]));
    }
}
