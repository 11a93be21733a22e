//! `-X lon_min,lon_max,lat_min,lat_max`: boxes on auxiliary coordinates (NCO manual,
//! "Auxiliary Coordinates"), for cell-based grids whose points lie along one
//! dimension (unstructured, geodesic, station grids) and whose latitude and longitude
//! are variables on that dimension named by a variable's CF `coordinates` attribute.
//!
//! Rules (NCO 5.1.4 measured on its test file, `lat_gds`/`lon_gds` on `gds_crd`): the
//! dimension keeps exactly the points inside the box, bounds included, in index order
//! (a multi-slab of single points); every variable on the dimension is cut so.
//! Where ours differs on purpose (README, compatibility notes):
//! - a box holding no point is an error (NCO 5.1.4 keeps every point and exits 0);
//! - a longitude range with `lon_min > lon_max` wraps through 360 (170.,10. holds 180
//!   and 0: NCO 5.1.4 keeps only some of those), longitudes compare modulo 360, and a
//!   degenerate range (`lon_min = lon_max`) holds the points at that longitude (NCO
//!   5.1.4 refuses it);
//! - several `-X` boxes keep the points of any of them (NCO 5.1.4 refuses them when
//!   one is degenerate);
//! - a file without auxiliary coordinates is an error (NCO ignores `-X`).
//!
//! Latitude and longitude are recognised by `standard_name` (`latitude`, `longitude`)
//! or, without one, by `units` (`degrees_north`, `degrees_east` and their CF
//! spellings); both must be 1-D on the same dimension.

use crate::error::{Error, Result};
use crate::model::Meta;
use crate::types::Values;

/// One `-X` box, in degrees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AuxBox {
    /// Western edge (inclusive).
    pub lon_min: f64,
    /// Eastern edge (inclusive); below `lon_min` for a box across the 360 meridian.
    pub lon_max: f64,
    /// Southern edge (inclusive).
    pub lat_min: f64,
    /// Northern edge (inclusive).
    pub lat_max: f64,
}

impl AuxBox {
    /// Parse `lon_min,lon_max,lat_min,lat_max` (numbers, degrees).
    ///
    /// Errors (naming `-X`): not four numbers, a latitude range whose minimum exceeds
    /// its maximum.
    pub fn parse(s: &str) -> Result<AuxBox> {
        let nums: Vec<f64> = s
            .split(',')
            .map(|x| x.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
            .collect::<Option<_>>()
            .filter(|v: &Vec<f64>| v.len() == 4)
            .ok_or_else(|| {
                Error::option(
                    "-X",
                    format!("'{s}' is not lon_min,lon_max,lat_min,lat_max (four numbers)"),
                )
            })?;
        let b = AuxBox {
            lon_min: nums[0],
            lon_max: nums[1],
            lat_min: nums[2],
            lat_max: nums[3],
        };
        if b.lat_min > b.lat_max {
            return Err(Error::option(
                "-X",
                format!(
                    "latitude minimum {} exceeds its maximum {}",
                    b.lat_min, b.lat_max
                ),
            ));
        }
        Ok(b)
    }

    /// True when the point lies in the box (edges included; longitudes modulo 360).
    pub fn contains(&self, lon: f64, lat: f64) -> bool {
        if !(lat >= self.lat_min && lat <= self.lat_max && lon.is_finite()) {
            return false;
        }
        if self.lon_max - self.lon_min >= 360.0 {
            return true;
        }
        let width = (self.lon_max - self.lon_min).rem_euclid(360.0);
        (lon - self.lon_min).rem_euclid(360.0) <= width
    }
}

/// A cell-based grid: dimension `dim` with latitude variable `lat` and longitude
/// variable `lon` on it (indices into the file's dimensions and variables).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuxGrid {
    /// The points' dimension.
    pub dim: usize,
    /// Latitude variable.
    pub lat: usize,
    /// Longitude variable.
    pub lon: usize,
}

fn is_axis(meta: &Meta, v: usize, name: &str, units: &[&str]) -> bool {
    let var = &meta.vars[v];
    match var.attr_text("standard_name") {
        Some(s) => s.trim() == name,
        None => var
            .attr_text("units")
            .is_some_and(|u| units.contains(&u.trim())),
    }
}

/// The grids the `coordinates` attributes of `meta` name, each once, in file order.
pub fn grids(meta: &Meta) -> Vec<AuxGrid> {
    const NORTH: &[&str] = &["degrees_north", "degree_north", "degree_N", "degrees_N"];
    const EAST: &[&str] = &["degrees_east", "degree_east", "degree_E", "degrees_E"];
    let mut out: Vec<AuxGrid> = Vec::new();
    for var in &meta.vars {
        let Some(names) = var.attr_text("coordinates") else {
            continue;
        };
        let named: Vec<usize> = names
            .split_whitespace()
            .filter_map(|n| {
                let in_group = meta
                    .vars
                    .iter()
                    .position(|c| c.name == n && c.group == var.group);
                in_group.or_else(|| meta.vars.iter().position(|c| c.name == n && c.group == 0))
            })
            .filter(|&c| meta.vars[c].dims.len() == 1 && meta.vars[c].ty.is_numeric())
            .collect();
        let lat = named
            .iter()
            .copied()
            .find(|&c| is_axis(meta, c, "latitude", NORTH));
        let lon = named
            .iter()
            .copied()
            .find(|&c| is_axis(meta, c, "longitude", EAST));
        if let (Some(lat), Some(lon)) = (lat, lon) {
            let dim = meta.vars[lat].dims[0];
            let g = AuxGrid { dim, lat, lon };
            if meta.vars[lon].dims[0] == dim && !out.iter().any(|o| o.dim == dim) {
                out.push(g);
            }
        }
    }
    out
}

/// The points of each grid of `meta` that lie in any of `boxes`: (dimension, indices
/// in increasing order). `read` gives a variable's values (packed coordinates are
/// unpacked); fill values and NaN are never inside.
///
/// Errors: no grid in the file, a grid on the record dimension (not supported yet), a
/// grid none of whose points lies in the boxes (naming its variables), read errors.
pub fn select(
    meta: &Meta,
    boxes: &[AuxBox],
    read: &dyn Fn(usize) -> Result<Values>,
) -> Result<Vec<(usize, Vec<usize>)>> {
    let grids = grids(meta);
    if grids.is_empty() {
        return Err(Error::option(
            "-X",
            "no auxiliary coordinates: no variable's `coordinates` attribute names a \
             latitude and a longitude on one dimension",
        ));
    }
    let mut out = Vec::new();
    for g in grids {
        if meta.dims[g.dim].unlimited {
            return Err(Error::option(
                "-X",
                format!(
                    "auxiliary coordinates on the record dimension {} are not supported yet",
                    meta.dims[g.dim].name
                ),
            ));
        }
        // Unpacked, with fill values as NaN (never inside a box).
        let values = |v: usize| -> Result<Vec<f64>> {
            let var = &meta.vars[v];
            let (fill, pack) = (
                crate::fill::fill_value(var),
                crate::packing::packing_of(var, false),
            );
            Ok(nco_kernels::to_f64_unpacked(
                &read(v)?,
                fill,
                pack.as_ref(),
                f64::NAN,
            ))
        };
        let (lat, lon) = (values(g.lat)?, values(g.lon)?);
        let picked: Vec<usize> = (0..lat.len().min(lon.len()))
            .filter(|&i| boxes.iter().any(|b| b.contains(lon[i], lat[i])))
            .collect();
        if picked.is_empty() {
            return Err(Error::option(
                "-X",
                format!(
                    "no point of {}/{} lies in the box",
                    meta.var_ref(g.lat),
                    meta.var_ref(g.lon)
                ),
            ));
        }
        out.push((g.dim, picked));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> AuxBox {
        AuxBox::parse(s).unwrap()
    }

    #[test]
    fn boxes_include_their_edges_and_wrap_through_360() {
        let x = b("0.,180.,-30.,30.");
        assert!(x.contains(0.0, -30.0) && x.contains(180.0, 30.0) && x.contains(360.0, 0.0));
        assert!(!x.contains(181.0, 0.0) && !x.contains(90.0, 30.5) && !x.contains(f64::NAN, 0.0));
        let w = b("170.,10.,-90.,90.");
        assert!(w.contains(180.0, 90.0) && w.contains(0.0, -90.0) && w.contains(-175.0, 0.0));
        assert!(!w.contains(90.0, 0.0));
        assert!(b("-10,10,0,1").contains(355.0, 0.5), "modulo 360");
        assert!(b("180.,180.,80.,90.").contains(180.0, 90.0), "degenerate");
        assert!(b("0,360,-90,90").contains(123.0, 0.0));
    }

    #[test]
    fn bad_boxes_name_the_option() {
        for s in ["1,2,3", "a,b,c,d", "0,1,30,-30", "0,1,2,3,4", "0,nan,1,2"] {
            let e = AuxBox::parse(s).unwrap_err().to_string();
            assert!(e.contains("-X"), "{s}: {e}");
        }
    }
}
