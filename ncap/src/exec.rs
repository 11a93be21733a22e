//! Execution of statements: expressions (assignments are expressions), blocks,
//! `if`/`else`, `where`/`elsewhere`, `while`, `for`, `break`, `continue` and `exit`.
//! An error names the statement it happened in (script piece, line, column and first
//! token).

use std::io::Write;

use nco_core::{Error, Result};

use crate::assign::Mask;
use crate::ast::{Pos, Stmt, StmtKind};
use crate::expr::truth;
use crate::state::Ctx;

/// How a statement ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    /// Go on with the next statement.
    Next,
    /// `break`: leave the innermost loop.
    Break,
    /// `continue`: the innermost loop's next iteration.
    Continue,
    /// `exit()`: stop the script.
    Exit,
}

/// `e` with the position of the statement it happened in, unless it has one.
fn located(e: Error, pos: &Pos) -> Error {
    let msg = e.to_string();
    if msg.starts_with(&*pos.piece) {
        return e;
    }
    Error::msg(format!("{pos}: {msg}"))
}

impl Ctx<'_> {
    /// Run statements in order (until `exit()`).
    ///
    /// Errors: the first statement that fails, with its position.
    pub fn run(&mut self, stmts: &[Stmt]) -> Result<()> {
        self.block(stmts, None)?;
        self.out.flush().map_err(|e| Error::io("stdout", e))
    }

    fn block(&mut self, stmts: &[Stmt], mask: Option<&Mask>) -> Result<Flow> {
        for s in stmts {
            let f = self.stmt(s, mask).map_err(|e| located(e, &s.pos))?;
            if f != Flow::Next {
                return Ok(f);
            }
        }
        Ok(Flow::Next)
    }

    fn stmt(&mut self, s: &Stmt, mask: Option<&Mask>) -> Result<Flow> {
        match &s.kind {
            StmtKind::Expr(crate::ast::Expr::Assign(lhs, op, e)) => {
                self.saw_slab = false;
                self.eval_assign(lhs, *op, e, mask)?;
                Ok(Flow::Next)
            }
            StmtKind::Expr(e) => {
                self.saw_slab = false;
                self.eval(e)?;
                Ok(Flow::Next)
            }
            StmtKind::Block(b) => self.block(b, mask),
            StmtKind::If(c, t, e) => {
                let v = self.eval(c)?;
                self.block(if truth(&v) { t } else { e }, mask)
            }
            StmtKind::Where(c, t, e) => {
                let cond = self.eval(c)?;
                if cond.is_text() {
                    return Err(Error::msg("where() condition must be numeric"));
                }
                let pos = (cond, false);
                let f = self.block(t, Some(&pos))?;
                if f != Flow::Next {
                    return Ok(f);
                }
                let neg = (pos.0, true);
                self.block(e, Some(&neg))
            }
            StmtKind::While(c, body) => {
                loop {
                    let v = self.eval(c)?;
                    if !truth(&v) {
                        break;
                    }
                    match self.block(body, mask)? {
                        Flow::Break => break,
                        Flow::Exit => return Ok(Flow::Exit),
                        _ => {}
                    }
                }
                Ok(Flow::Next)
            }
            StmtKind::For(init, cond, step, body) => {
                if let Some(i) = init {
                    self.eval(i)?;
                }
                loop {
                    if let Some(c) = cond {
                        let v = self.eval(c)?;
                        if !truth(&v) {
                            break;
                        }
                    }
                    match self.block(body, mask)? {
                        Flow::Break => break,
                        Flow::Exit => return Ok(Flow::Exit),
                        _ => {}
                    }
                    if let Some(st) = step {
                        self.eval(st)?;
                    }
                }
                Ok(Flow::Next)
            }
            StmtKind::Break => Ok(Flow::Break),
            StmtKind::Continue => Ok(Flow::Continue),
            StmtKind::Exit(code) => {
                if let Some(c) = code {
                    let v = self.eval(c)?;
                    self.exit_code = v.data.get_f64(0).map_or(0, |x| x as i32);
                }
                Ok(Flow::Exit)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use nco_core::types::NcType;

    use super::*;
    use crate::ast::BinOp;
    use crate::num;
    use crate::parser::parse;
    use crate::state::OutVar;

    /// Run `script` with no input file; the written variables and the printed text.
    fn run(script: &str) -> (HashMap<String, OutVar>, String) {
        let mut buf = Vec::new();
        let vars = {
            let mut ctx = Ctx::new(None, Box::new(&mut buf), "ncap2");
            ctx.run(&parse(script).unwrap()).unwrap();
            std::mem::take(&mut ctx.vars)
        };
        (vars, String::from_utf8(buf).unwrap())
    }

    fn val(vars: &HashMap<String, OutVar>, name: &str) -> (NcType, Vec<f64>) {
        let v = &vars[name].val;
        (v.ty(), v.data.to_f64_vec().unwrap())
    }

    fn err(script: &str) -> String {
        let mut ctx = Ctx::new(None, Box::new(std::io::sink()), "ncap2");
        ctx.run(&parse(script).unwrap()).unwrap_err().to_string()
    }

    #[test]
    fn literal_typing_and_integer_arithmetic() {
        let (v, _) = run("a=3/2;b=3.0/2;c=1s+2b;d=2^3;e=4*atan(1);f=-7%3;g=2.5f*2");
        assert_eq!(val(&v, "a"), (NcType::Int, vec![1.0]));
        assert_eq!(val(&v, "b"), (NcType::Double, vec![1.5]));
        assert_eq!(val(&v, "c"), (NcType::Short, vec![3.0]));
        assert_eq!(val(&v, "d"), (NcType::Float, vec![8.0]));
        assert_eq!(
            val(&v, "e"),
            (NcType::Float, vec![f64::from(std::f32::consts::PI)])
        );
        assert_eq!(val(&v, "f"), (NcType::Int, vec![-1.0]));
        assert_eq!(val(&v, "g"), (NcType::Float, vec![5.0]));
    }

    #[test]
    fn defdim_lhs_cast_hyperslab_and_reductions() {
        let (v, _) = run("defdim(\"a\",3);defdim(\"b\",4);m[$a,$b]=10;c=m(1,1);\
             r[$b]={1,2,3,4};s[$a,$b]=r*2;t=s.total();u=s(:,1:3:2).total();w=s.avg($a)");
        assert_eq!(val(&v, "m").1, vec![10.0; 12]);
        assert_eq!(val(&v, "c"), (NcType::Int, vec![10.0]));
        assert_eq!(val(&v, "s").1[4..8], [2.0, 4.0, 6.0, 8.0]);
        assert_eq!(val(&v, "t").1, vec![60.0]);
        assert_eq!(val(&v, "u").1, vec![36.0]);
        assert_eq!(val(&v, "w").1, vec![2.0, 4.0, 6.0, 8.0]);
        assert_eq!(v["w"].val.dims.len(), 1);
    }

    #[test]
    fn atan2_is_double_whatever_its_arguments() {
        // NCO 5.1.4: atan2 of two floats is a double (checked with ncap2 -s).
        let (v, _) = run("a=atan2(1.0f,2.0f);b=atan2(1,2);c=atan2(1.0,-1.0)");
        let want = 1f64.atan2(2.0);
        assert_eq!(val(&v, "a"), (NcType::Double, vec![want]));
        assert_eq!(val(&v, "b"), (NcType::Double, vec![want]));
        assert_eq!(val(&v, "c"), (NcType::Double, vec![1f64.atan2(-1.0)]));
    }

    #[test]
    fn attributes_convert_to_the_variable_type() {
        let (v, _) = run("x=1.5;x@scale=2.5;y=x@scale*2;z=x@scale*2.0f;q=x@scale+x@scale");
        assert_eq!(val(&v, "y"), (NcType::Int, vec![4.0]));
        assert_eq!(val(&v, "z"), (NcType::Float, vec![5.0]));
        assert_eq!(val(&v, "q"), (NcType::Double, vec![5.0]));
        assert!(v["x"].attrs.iter().any(|a| a.name == "scale"));
    }

    #[test]
    fn where_elsewhere_and_compound_assignment() {
        let (v, _) = run(
            "defdim(\"n\",5);x[$n]={1,5,2,8,3};where(x>2) x=0; elsewhere x=x*10;\
             y=x;y+=1.7;z[$n]=1.5f;z*=2",
        );
        assert_eq!(val(&v, "x").1, vec![10.0, 0.0, 20.0, 0.0, 0.0]);
        assert_eq!(val(&v, "y"), (NcType::Int, vec![12.0, 2.0, 22.0, 2.0, 2.0]));
        assert_eq!(val(&v, "z"), (NcType::Float, vec![3.0; 5]));
    }

    #[test]
    fn where_spreads_values_and_broadcasts_the_condition() {
        // Checked against NCO 5.1.4: a 1-D condition over a 2-D variable, a real
        // value into an int variable (rounded), an int variable into a float one.
        let (v, _) = run(
            "defdim(\"a\",2);defdim(\"b\",3);c[$b]={0,1,0};x[$a,$b]={1,2,3,4,5,6};\
             where(c) x=9.7; elsewhere x=x*2;y[$a,$b]=1.5f;where(x>5) y=x;",
        );
        assert_eq!(
            val(&v, "x"),
            (NcType::Int, vec![2.0, 10.0, 6.0, 8.0, 10.0, 12.0])
        );
        assert_eq!(
            val(&v, "y"),
            (NcType::Float, vec![1.5, 10.0, 6.0, 8.0, 10.0, 12.0])
        );
        assert!(err("defdim(\"n\",2);defdim(\"m\",3);c[$m]=1;x[$n]=1;where(c) x=2;").contains("x"));
    }

    #[test]
    fn missing_values_propagate_and_are_skipped() {
        let (v, _) = run(
            "defdim(\"n\",4);x[$n]={73.0f,-1.0f,73.0f,-1.0f};x@_FillValue=-1.0f;\
             z=x;t=z.total();m=z.min();y=z+1",
        );
        // As in NCO 5.1.4, a _FillValue set by the script does not make the script's own
        // values missing during the run.
        assert_eq!(val(&v, "t").1, vec![144.0]);
        assert_eq!(val(&v, "m").1, vec![-1.0]);
        assert_eq!(val(&v, "y").1, vec![74.0, 0.0, 74.0, 0.0]);
        // Kernel level: the fill of either operand makes the result missing.
        let r = num::binary(
            BinOp::Mul,
            3,
            num::Side::Array(&[1.0f64, 2.0, 3.0]),
            num::Side::Array(&[-9.0, 5.0, 5.0]),
            None,
            Some(-9.0),
            -9.0,
        );
        assert_eq!(r, vec![-9.0, 10.0, 15.0]);
    }

    #[test]
    fn print_formats() {
        let (_, out) =
            run("a=55.0;print(a);b=1.5f;print(b,\"%.2f\");defdim(\"n\",2);c[$n]=2;print(c)");
        assert_eq!(out, "a = 55 \n\n1.50\nc[0]=2 \nc[1]=2 \n\n");
    }

    #[test]
    fn loops_ram_variables_and_steps() {
        let (v, _) = run("*s=0;for(*i=0;i<5;i++) s+=i; r=s; *k=0; while(k<10){k++; if(k%2) continue; if(k>6) break;} q=k; a=3; b=a>2?10:20; c=++a; d=a--");
        assert_eq!(val(&v, "r").1, vec![10.0]);
        assert!(v["s"].ram && v["i"].ram);
        assert_eq!(val(&v, "q").1, vec![8.0]);
        assert_eq!(val(&v, "b").1, vec![10.0]);
        assert_eq!(val(&v, "c").1, vec![4.0]);
        assert_eq!(val(&v, "d").1, vec![4.0]);
        assert_eq!(val(&v, "a").1, vec![3.0]);
        let (v, _) = run("z=x=2;y=x+=z*=10");
        assert_eq!(val(&v, "y").1, vec![22.0]);
    }

    #[test]
    fn if_needs_every_valid_element_true() {
        let (v, _) =
            run("defdim(\"n\",3);x[$n]={1,0,2};if(x) a=1; else a=2; if(x>=0) b=1; else b=2;");
        assert_eq!(val(&v, "a").1, vec![2.0]);
        assert_eq!(val(&v, "b").1, vec![1.0]);
    }

    #[test]
    fn errors_name_what_is_wrong() {
        assert!(err("a=nosuch*2").contains("nosuch"));
        assert!(
            err("defdim(\"a\",2);defdim(\"b\",3);x[$a]=1;y[$b]=1;z=x*y").contains("do not conform")
        );
        assert!(err("x=3;y=x(5)").contains("hyperslab"));
        let e = err("a=1;\n b=nosuch+1");
        assert!(
            e.contains("2:2") && e.contains("\"b\"") && e.contains("nosuch"),
            "{e}"
        );
        assert!(err("x[$nodim]=1").contains("nodim"));
    }
}
