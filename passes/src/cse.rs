//! Common-subexpression elimination: an instruction identical to an earlier
//! one (same op, attributes, operands and out_dtype) reuses its result.
//! Commutative ops match with their operands in either order.

use kiln_ir::graph::Operand;
use kiln_ir::{Module, Op, Result};

use crate::manager::Pass;
use crate::rewrite::{Rewriter, is_laid_out, relayout};

pub struct CsePass;

/// A structural key for an instruction: its text without the result name.
fn key(op: &Op, operands: &[Operand], out: Option<kiln_ir::DType>) -> String {
    let mut parts: Vec<String> = operands
        .iter()
        .map(|o| match o {
            Operand::Value(v) => format!("%{}", v.0),
            // Bits, so that -0.0 and 0.0 (and NaN payloads) stay distinct.
            Operand::Scalar(kiln_ir::Scalar::Float(x)) => format!("f{:x}", x.to_bits()),
            Operand::Scalar(s) => format!("{s:?}"),
        })
        .collect();
    if let Op::Binary(b) = op {
        if b.is_commutative() {
            parts.sort();
        }
    }
    format!("{op:?}|{}|{out:?}", parts.join(","))
}

impl Pass for CsePass {
    fn name(&self) -> &'static str {
        "cse"
    }

    fn run(&self, module: &mut Module) -> Result<()> {
        let ctx = module.ctx();
        let laid_out = is_laid_out(module);
        for func in &mut module.funcs {
            let mut rw = Rewriter::new(func, ctx)?;
            let mut seen = std::collections::HashMap::new();
            for inst in &func.insts {
                let operands = rw.operands(inst);
                let k = key(&inst.op, &operands, inst.out_dtype);
                match seen.get(&k) {
                    Some(&v) => rw.set(inst.result, v),
                    None => {
                        let v = rw.copy(inst)?;
                        seen.insert(k, v);
                    }
                }
            }
            *func = rw.finish()?;
        }
        relayout(module, laid_out)
    }
}
