//! The promotion pass: makes PyTorch's type promotion explicit.
//!
//! Every tensor operand whose dtype differs from the dtype its op computes
//! in (as inference decides: true division of integers, float ops on
//! integers, comparisons across dtypes, reductions with `dtype=`, ...) gets a
//! `cast`; a result written to an `out_dtype` becomes the op in its own dtype
//! followed by a `cast`. Scalar literals stay literals: after promotion each
//! literal's category is at most its op's, so it no longer promotes, and
//! backends materialise it in the op's computation precision (PyTorch's
//! "opmath": f32 for f16/bf16). Results are unchanged, bit for bit.

use kiln_ir::graph::Func;
use kiln_ir::{Op, Operand, Result};

use crate::manager::{Pass, PassCx};
use crate::rewrite::Rewriter;

/// Inserts the casts type promotion implies.
pub struct PromotePass;

impl Pass for PromotePass {
    fn name(&self) -> &'static str {
        "promote"
    }

    fn run_func(&self, func: &mut Func, cx: &PassCx) -> Result<()> {
        let mut rw = Rewriter::new(func, cx.ctx)?;
        for inst in &func.insts {
            let inferred = func.infer_inst(inst, &cx.ctx)?;
            let mut operands = rw.operands(inst);
            for (operand, target) in operands.iter_mut().zip(&inferred.operand_dtypes) {
                if let (Operand::Value(v), Some(target)) = (*operand, target) {
                    if rw.b.ty(v).dtype != *target {
                        let cast = rw.push_temp(
                            inst,
                            Op::Cast { dtype: *target },
                            vec![Operand::Value(v)],
                        )?;
                        *operand = Operand::Value(cast);
                    }
                }
            }
            match inst.out_dtype.filter(|out| *out != inferred.natural_dtype) {
                Some(out) => {
                    let natural = rw.push_temp(inst, inst.op.clone(), operands)?;
                    rw.push_as(
                        inst,
                        Op::Cast { dtype: out },
                        vec![Operand::Value(natural)],
                        None,
                    )?;
                }
                None => {
                    rw.push_as(inst, inst.op.clone(), operands, None)?;
                }
            }
        }
        *func = rw.finish()?;
        Ok(())
    }
}
