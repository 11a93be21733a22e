//! The evaluation state ([`Ctx`]): the input, the dimension table, the variables and
//! attributes the script has written, and reading input variables (whole, or one block
//! of a streamed evaluation).

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use nco_core::arith;
use nco_core::dataset::Dataset;
use nco_core::model::{Attr, Dim, Meta};
use nco_core::types::Values;
use nco_core::{Error, Result};

use crate::value::{Kind, Val};

/// A variable written by the script.
#[derive(Clone, Debug)]
pub struct OutVar {
    /// Its current value (type fixed at first assignment).
    pub val: Val,
    /// Attributes (sorted by name at definition).
    pub attrs: Vec<Attr>,
    /// A RAM variable (`*v=...`): kept in memory only, not written unless
    /// `ram_write()` is called.
    pub ram: bool,
}

/// Where a variable the script writes goes in the output ([`Ctx::output_order`]); the
/// variants are in output order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    /// Defined from a hyperslab or updated under `where()`: first, in script order.
    First,
    /// The others: by name (in script order with three variables or fewer).
    ByName,
    /// Computed from attributes only: last, in script order.
    Last,
}

/// The evaluation state.
pub struct Ctx<'a> {
    ds: Option<&'a Dataset>,
    /// Input metadata (empty without an input file).
    pub input: Meta,
    /// Dimension table: the input's, then `defdim` ones.
    pub dims: Vec<Dim>,
    /// Dimensions in order of first use.
    pub dims_used: Vec<usize>,
    /// Variables written by the script.
    pub vars: HashMap<String, OutVar>,
    /// Attribute lists of input variables changed by `v@att=` (not otherwise written).
    pub touched: HashMap<String, Vec<Attr>>,
    /// Order in which input variables were touched.
    pub touched_order: Vec<String>,
    /// Global attributes (input's, with script changes).
    pub globals: Vec<Attr>,
    /// The dimensions and shape of the LHS cast being evaluated (`v[lat,lon]=...`):
    /// operands that do not conform are broadcast to it.
    pub(crate) template: Option<(Vec<usize>, Vec<usize>)>,
    /// Output position class of each written variable (see [`Ctx::output_order`]).
    placement: HashMap<String, (Place, usize)>,
    /// A hyperslab was evaluated in the current statement.
    pub(crate) saw_slab: bool,
    /// Streamed evaluation ([`Ctx::set_block`]): input variables with these dimensions
    /// are read at this selection only.
    block: Option<(Vec<usize>, Vec<Vec<usize>>)>,
    /// Input variables read for the current block, by name.
    block_inputs: HashMap<String, Val>,
    /// The last input variable read whole (outside blocks): scripts often use one twice
    /// in a row (`x.max($time)-x.min($time)`, `m=x; where(m > x.avg())`), and its
    /// buffer is shared, so keeping it costs one variable's memory and saves a read.
    last_input: Option<(String, Val)>,
    /// Where `print()` writes.
    pub(crate) out: Box<dyn Write + 'a>,
    /// The program name, for warnings.
    pub(crate) prog: String,
    /// The code given to `exit()` (0 without one).
    pub exit_code: i32,
    /// The attributes a builtin gives the variable being defined (`make_bounds()`),
    /// instead of those of the right-hand side's first variable.
    pub(crate) pending_attrs: Option<Vec<Attr>>,
}

/// The netCDF constants a script may name (`NC_DOUBLE`, `NC_UNLIMITED`...), which
/// ncap2 defines as RAM variables (NCO manual, "Methods and functions": `convert()`).
pub(crate) fn nc_constant(name: &str) -> Option<i32> {
    Some(match name {
        "NC_NAT" => 0,
        "NC_BYTE" => 1,
        "NC_CHAR" => 2,
        "NC_SHORT" => 3,
        "NC_INT" | "NC_LONG" => 4,
        "NC_FLOAT" => 5,
        "NC_DOUBLE" => 6,
        "NC_UBYTE" => 7,
        "NC_USHORT" => 8,
        "NC_UINT" => 9,
        "NC_INT64" => 10,
        "NC_UINT64" => 11,
        "NC_STRING" => 12,
        "NC_UNLIMITED" => 0,
        _ => return None,
    })
}

/// Sort attributes by name (bytewise), as NCO lists a new variable's.
pub(crate) fn sort_attrs(attrs: &mut [Attr]) {
    attrs.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
}

impl<'a> Ctx<'a> {
    /// A context reading from `ds` (or from nothing), printing to `out`.
    pub fn new(ds: Option<&'a Dataset>, out: Box<dyn Write + 'a>, prog: &str) -> Ctx<'a> {
        let input = ds.map_or_else(
            || Meta::new(nco_core::model::Format::Classic),
            |d| d.meta().clone(),
        );
        Ctx {
            ds,
            dims: input.dims.clone(),
            globals: input.attrs.clone(),
            input,
            dims_used: Vec::new(),
            vars: HashMap::new(),
            touched: HashMap::new(),
            touched_order: Vec::new(),
            template: None,
            placement: HashMap::new(),
            saw_slab: false,
            block: None,
            block_inputs: HashMap::new(),
            last_input: None,
            out,
            prog: prog.to_string(),
            exit_code: 0,
            pending_attrs: None,
        }
    }

    /// Evaluate for one block of an element-wise script (`stream::blockwise_dims`): input
    /// variables whose dimensions are `dims` are read at `sel` (one index list per
    /// dimension) instead of whole, so every value computed from them covers that
    /// block only.
    pub fn set_block(&mut self, dims: Vec<usize>, sel: Vec<Vec<usize>>) {
        self.block = Some((dims, sel));
    }

    /// Names of the written variables in NCO's output order: variables defined from a
    /// hyperslab or updated under where() first (script order), then the others sorted
    /// by name (in script order when the script writes three variables or fewer),
    /// then those computed from attributes only (script order). This mimics what NCO
    /// 5.1.4 was observed to do.
    pub fn output_order(&self) -> Vec<String> {
        let mut names: Vec<&String> = self.vars.keys().collect();
        let by_name = names.len() > 3;
        names.sort_by(|a, b| {
            let (ca, sa) = self
                .placement
                .get(*a)
                .copied()
                .unwrap_or((Place::ByName, 0));
            let (cb, sb) = self
                .placement
                .get(*b)
                .copied()
                .unwrap_or((Place::ByName, 0));
            ca.cmp(&cb).then(if ca == Place::ByName && by_name {
                a.as_bytes().cmp(b.as_bytes())
            } else {
                sa.cmp(&sb)
            })
        });
        names.into_iter().cloned().collect()
    }

    /// Record where variable `name` goes in the output: its first place, except that a
    /// later [`Place::First`] moves a [`Place::ByName`] variable first.
    pub(crate) fn place(&mut self, name: &str, class: Place) {
        let seq = self.placement.len();
        let e = self
            .placement
            .entry(name.to_string())
            .or_insert((class, seq));
        if class == Place::First && e.0 == Place::ByName {
            *e = (Place::First, seq);
        }
    }

    pub(crate) fn use_dim(&mut self, d: usize) {
        if !self.dims_used.contains(&d) {
            self.dims_used.push(d);
        }
    }

    pub(crate) fn dim_id(&self, name: &str) -> Result<usize> {
        self.dims
            .iter()
            .position(|d| d.name == name)
            .ok_or_else(|| Error::msg(format!("dimension {name} is not defined")))
    }

    /// The current attributes of variable `name` (script's, touched, or input's).
    pub(crate) fn attrs_of(&self, name: &str) -> Option<Vec<Attr>> {
        if let Some(v) = self.vars.get(name) {
            return Some(v.attrs.clone());
        }
        if let Some(a) = self.touched.get(name) {
            return Some(a.clone());
        }
        self.input.var(name).map(|v| v.attrs.clone())
    }

    /// The shape of input variable `name` (`None` when the input has none).
    pub(crate) fn input_shape(&self, name: &str) -> Option<Vec<usize>> {
        let v = self.input.var(name)?;
        Some(v.dims.iter().map(|&d| self.input.dims[d].len).collect())
    }

    /// Read an input variable, unpacked, with its fill value.
    fn read_input(&mut self, name: &str) -> Result<Option<Val>> {
        self.read_input_sel(name, None)
    }

    /// Read the selection `lists` (one index list per dimension) of input variable
    /// `name`, unpacked; the value keeps the variable's dimensions with the lists'
    /// lengths.
    ///
    /// Errors: an unknown variable, reading.
    pub(crate) fn read_input_at(&mut self, name: &str, lists: &[Vec<usize>]) -> Result<Val> {
        self.read_input_sel(name, Some(lists))?
            .ok_or_else(|| Error::var(name, "is not a variable of the input file"))
    }

    fn read_input_sel(&mut self, name: &str, sel: Option<&[Vec<usize>]>) -> Result<Option<Val>> {
        let Some(id) = self.input.var_id(name) else {
            return Ok(None);
        };
        let ds = self.ds.expect("input variables come from a dataset");
        let pv = arith::prepare(&self.input, id, false);
        let var = &self.input.vars[id];
        let block_shape: Option<Vec<usize>> = match (&self.block, sel) {
            (_, Some(l)) => Some(l.iter().map(Vec::len).collect()),
            (Some((dims, sel)), None) if *dims == var.dims => {
                Some(sel.iter().map(Vec::len).collect())
            }
            _ => None,
        };
        let raw = match (&self.block, sel) {
            (_, Some(l)) => ds.read(id, l)?,
            (Some((_, sel)), None) if block_shape.is_some() => ds.read(id, sel)?,
            _ => ds.read_all(id)?,
        };
        let (data, fill) = match &pv.pack {
            Some(_) if raw.nc_type().is_numeric() => {
                let x = pv.unpacked(&raw);
                let fill = pv.in_fill.map(|_| pv.out_fill);
                let data = Values::from_f64_slice(pv.out.ty, &x)
                    .ok_or_else(|| Error::var(name, "cannot unpack"))?;
                (data, fill)
            }
            _ => (raw, pv.in_fill),
        };
        let dims = self.input.vars[id].dims.clone();
        for &d in &dims {
            self.use_dim(d);
        }
        let shape =
            block_shape.unwrap_or_else(|| dims.iter().map(|&d| self.input.dims[d].len).collect());
        Ok(Some(Val {
            data: data.into(),
            dims,
            shape,
            fill,
            kind: Kind::Var,
            src: Some(name.to_string()),
            slab: None,
        }))
    }

    /// Stop keeping the last input read when it shares `data`, a buffer about to be
    /// updated in place (which then needs no copy).
    pub(crate) fn release_input(&mut self, data: &Arc<Values>) {
        if let Some((_, v)) = &self.last_input {
            if Arc::ptr_eq(&v.data, data) {
                self.last_input = None;
            }
        }
    }

    pub(crate) fn var_value(&mut self, name: &str) -> Result<Val> {
        if let Some(v) = self.vars.get(name) {
            let mut v = v.val.clone();
            v.kind = Kind::Var;
            v.src = Some(name.to_string());
            return Ok(v);
        }
        // A block's inputs are small: keep each one read for the block's other uses
        // (`x*x` reads x once).
        if let Some(v) = self.block_inputs.get(name) {
            return Ok(v.clone());
        }
        if let Some((_, v)) = self.last_input.as_ref().filter(|(n, _)| n == name) {
            if self.block.is_none() {
                return Ok(v.clone());
            }
        }
        let v = match self.read_input(name)? {
            Some(v) => v,
            None => match nc_constant(name) {
                Some(c) => return Ok(Val::scalar(Values::Int(vec![c]), Kind::Var)),
                None => {
                    return Err(Error::var(
                        name,
                        "is not in the input file nor defined by the script (unknown variable)",
                    ))
                }
            },
        };
        if self.block.is_some() {
            self.block_inputs.insert(name.to_string(), v.clone());
        } else {
            self.last_input = Some((name.to_string(), v.clone()));
        }
        Ok(v)
    }

    pub(crate) fn attr_value(&self, var: &str, att: &str) -> Result<Val> {
        let attrs = if var == "global" || var.is_empty() {
            Some(self.globals.clone())
        } else {
            self.attrs_of(var)
        };
        let attrs =
            attrs.ok_or_else(|| Error::var(var, "unknown variable in attribute reference"))?;
        let a = attrs
            .iter()
            .find(|a| a.name == att)
            .ok_or_else(|| Error::msg(format!("attribute {var}@{att} does not exist")))?;
        Ok(Val::scalar(a.value.clone(), Kind::Attr))
    }
}
