//! Streamed evaluation of element-wise scripts: which scripts qualify
//! ([`blockwise_dims`]), and running one on blocks of its input variables, in parallel,
//! writing each block of the results as soon as it is done ([`Stream`]).

use nco_core::dataset::{Dataset, OutFile};
use nco_core::model::{Format, Meta};
use nco_core::types::Values;
use nco_core::{Error, Result};

use crate::ast::{AssignOp, BinOp, Expr, Lhs, Stmt, UnOp};
use crate::state::Ctx;

/// The dimensions of a script that can be evaluated block by block, or `None`.
///
/// A script qualifies when every statement is a plain assignment `name = expr` to a
/// new variable (not an input variable), and every `expr` is built from number
/// literals, input variables that all have the same dimensions (at least one),
/// variables the script defined before, `+ - * / % ^`, unary minus, and element-wise
/// functions (math functions, casts, `abs`, `pow`, `fmod`), with at least one
/// variable. Each element of the results then depends only on the same element of
/// the inputs, so evaluating the script on blocks of the inputs
/// ([`Ctx::set_block`]) gives the blocks of the whole-array results: same values,
/// types, fill values and attributes.
pub fn blockwise_dims(stmts: &[Stmt], input: &Meta) -> Option<Vec<usize>> {
    fn expr_ok(
        e: &Expr,
        input: &Meta,
        defined: &[&str],
        dims: &mut Option<Vec<usize>>,
        saw: &mut bool,
    ) -> bool {
        match e {
            Expr::Num(t, _) => t.is_numeric(),
            Expr::Var(n) if defined.contains(&n.as_str()) => {
                *saw = true;
                true
            }
            Expr::Var(n) => {
                let Some(v) = input.var(n) else {
                    return false;
                };
                if !v.ty.is_numeric() || v.dims.is_empty() {
                    return false;
                }
                *saw = true;
                match dims {
                    Some(d) => *d == v.dims,
                    None => {
                        *dims = Some(v.dims.clone());
                        true
                    }
                }
            }
            Expr::Bin(op, a, b) => {
                matches!(
                    op,
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod | BinOp::Pow
                ) && expr_ok(a, input, defined, dims, saw)
                    && expr_ok(b, input, defined, dims, saw)
            }
            Expr::Un(UnOp::Neg, a) => expr_ok(a, input, defined, dims, saw),
            Expr::Call(f, args) => {
                f.op.is_elementwise()
                    && args.len() == f.args
                    && args.iter().all(|a| expr_ok(a, input, defined, dims, saw))
            }
            _ => false,
        }
    }
    let mut dims = None;
    let mut defined: Vec<&str> = Vec::new();
    for s in stmts {
        let Some((
            Lhs::Var {
                name,
                ram: false,
                cast: None,
            },
            AssignOp::Set,
            e,
        )) = s.assignment()
        else {
            return None;
        };
        if input.var(name).is_some() {
            return None;
        }
        let mut saw = false;
        if !expr_ok(e, input, &defined, &mut dims, &mut saw) || !saw {
            return None;
        }
        defined.push(name);
    }
    dims
}

/// Bytes of each input variable's block in a streamed evaluation: a few arrays of
/// this size per statement stay in the processor's caches.
const UNIT_BYTES: usize = 256 << 10;

/// Streamed evaluation of an element-wise script ([`blockwise_dims`]): the script runs
/// on blocks of its input variables ([`nco_core::pipeline::blocks`]), in parallel, and
/// each block of every computed variable is written as soon as it and those before it
/// are done, so memory holds a few blocks, not whole variables.
pub struct Stream<'s> {
    stmts: &'s [Stmt],
    /// Input dimensions of the script's input variables.
    dims: Vec<usize>,
    /// The whole selection of those variables (every index of each dimension).
    full: Vec<Vec<usize>>,
    /// The blocks.
    units: Vec<nco_core::pipeline::Block>,
}

impl<'s> Stream<'s> {
    /// The stream of `stmts` over the input `ds` written as `format`, or `None` when the
    /// script is evaluated whole: without an input, when the input or the output is not
    /// netCDF3 (blocks across netCDF-4 chunks would decompress, or rewrite, every chunk
    /// once per block), when the script is not element-wise, or when its variables are
    /// empty.
    pub fn plan(stmts: &'s [Stmt], ds: Option<&Dataset>, format: Format) -> Option<Stream<'s>> {
        let input = ds
            .filter(|d| d.classic().is_some() && format.is_classic_family())?
            .meta();
        let dims = blockwise_dims(stmts, input)?;
        let full: Vec<Vec<usize>> = dims
            .iter()
            .map(|&d| (0..input.dims[d].len).collect())
            .collect();
        // Blocks sized for the widest type (8 bytes).
        let units = nco_core::pipeline::blocks(&full, 8, UNIT_BYTES);
        if units.is_empty() {
            return None;
        }
        Some(Stream {
            stmts,
            dims,
            full,
            units,
        })
    }

    /// Make `ctx` evaluate the first block (for the definitions of the outputs).
    pub fn start(&self, ctx: &mut Ctx<'_>) {
        ctx.set_block(self.dims.clone(), self.selection(0));
    }

    /// Block `u` as a selection (one index list per dimension).
    fn selection(&self, u: usize) -> Vec<Vec<usize>> {
        self.units[u].select(&self.full)
    }

    /// Evaluate every block and write the variables `outs` (script names, with their
    /// output variable indices) into `of`, in order.
    ///
    /// Errors: those of the evaluation and of writing.
    pub fn write(
        &self,
        prog: &str,
        ds: &Dataset,
        outs: &[(usize, String)],
        of: &mut OutFile,
    ) -> Result<()> {
        let compute = |u: usize| -> Result<Vec<Values>> {
            let mut c = Ctx::new(Some(ds), Box::new(std::io::sink()), prog);
            c.set_block(self.dims.clone(), self.selection(u));
            c.run(self.stmts)?;
            outs.iter()
                .map(|(_, n)| {
                    c.vars
                        .remove(n)
                        .map(|v| std::sync::Arc::unwrap_or_clone(v.val.data))
                        .ok_or_else(|| Error::var(n, "not computed by the script"))
                })
                .collect()
        };
        nco_core::pipeline::for_each_ordered(self.units.len(), compute, |u, vals| {
            let first = self.units[u].first(&self.full);
            for ((o, _), v) in outs.iter().zip(vals) {
                of.write_at(*o, &first, &v)?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::parse;
    use nco_core::types::NcType;

    #[test]
    fn element_wise_scripts_are_evaluated_in_blocks_others_whole() {
        use nco_core::model::{Dim, Var};
        let mut m = Meta::new(nco_core::model::Format::Classic);
        for (name, len) in [("t", 4), ("x", 5)] {
            m.dims.push(Dim {
                name: name.into(),
                len,
                unlimited: false,
                group: 0,
            });
        }
        for (name, ty, dims) in [
            ("a", NcType::Float, vec![0, 1]),
            ("b", NcType::Short, vec![0, 1]),
            ("c", NcType::Float, vec![1]),
            ("s", NcType::Double, vec![]),
            ("txt", NcType::Char, vec![0, 1]),
        ] {
            m.vars.push(Var {
                name: name.into(),
                ty,
                dims,
                attrs: Vec::new(),
                storage: Default::default(),
                group: 0,
            });
        }
        let dims = |script: &str| blockwise_dims(&parse(script).unwrap(), &m);
        for ok in [
            "y=a*2+b",
            "y=-a;z=sqrt(y*y)+pow(a,2)-fmod(b,3)+abs(a)+double(b)",
            "y=a/b;z=y%2.5f^2",
            "y=atan2(a,b)+sqr(b)",
        ] {
            assert_eq!(dims(ok), Some(vec![0, 1]), "{ok}");
        }
        for whole in [
            "y=a+c",           // another shape
            "y=a*s",           // a scalar variable
            "y=2*3",           // no variable
            "y=a;z=y.total()", // a reduction
            "y=a(0:1,:)",      // a hyperslab
            "a=a*2",           // an input variable replaced
            "y=a;y+=1",        // compound assignment
            "y[$t,$x]=a",      // LHS cast
            "y=a;print(y)",    // output
            "y=a>1",           // comparison
            "y=a*a@scale",     // attribute
            "y=txt",           // text
            "where(a>1) y=a;", // masks
        ] {
            assert_eq!(dims(whole), None, "{whole}");
        }
    }
}
