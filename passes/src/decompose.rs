//! The decomposition pass: lowers every composite op to primitives by its
//! expansion (`kiln_ir::ops::expand`, where each composite is defined),
//! computing in the dtypes PyTorch's CPU kernels use. The reference
//! interpreter runs composites through the same expansions, so the pass
//! leaves results bit-identical; a composite whose result layout differs
//! from its expansion's gets an explicit `clone`.
//!
//! A backend may run some composites as one fused step (the CPU backend's
//! attention): the pass keeps those ([`DecomposePass::keeping`]), and
//! they reach the backend whole.

use kiln_ir::graph::{Func, Inst};
use kiln_ir::ops::expand::{Emitter, expand};
use kiln_ir::{Op, Operand, Result};

use crate::manager::{Pass, PassCx};
use crate::rewrite::{Rewriter, restore_layouts};

/// Which composite instructions a backend runs whole (not decomposed).
pub type Keep = kiln_ir::ops::expand::KeepWhole;

/// Lowers composite ops.
#[derive(Clone, Copy, Default)]
pub struct DecomposePass {
    keep: Option<Keep>,
}

impl DecomposePass {
    /// Decomposes every composite except those `keep` selects (with
    /// `None`, every one).
    pub fn keeping(keep: Option<Keep>) -> DecomposePass {
        DecomposePass { keep }
    }

    fn keeps(&self, func: &Func, inst: &Inst) -> bool {
        self.keep.is_some_and(|keep| keep(func, inst))
    }
}

impl Pass for DecomposePass {
    fn name(&self) -> &'static str {
        "decompose"
    }

    fn run_func(&self, func: &mut Func, cx: &PassCx) -> Result<()> {
        if !func
            .insts
            .iter()
            .any(|i| i.op.is_composite() && !self.keeps(func, i))
        {
            return Ok(());
        }
        let mut rw = Rewriter::new(func, cx.ctx)?;
        // Each expansion's values, with the strides its composite's had.
        let mut wanted: Vec<(String, Vec<i64>)> = Vec::new();
        for inst in &func.insts {
            if self.keeps(func, inst) {
                rw.copy(inst)?;
                continue;
            }
            let operands = rw.operands(inst);
            // Composites the expansion emits are kept whole as well where
            // the backend keeps them.
            let mut emitter = match self.keep {
                Some(keep) => Emitter::keeping(&mut rw.b, keep),
                None => Emitter::new(&mut rw.b),
            };
            let expanded = expand(&mut emitter, &inst.op, &operands)?;
            let Some(mut vs) = expanded else {
                rw.copy(inst)?;
                continue;
            };
            if let (Some(out), [v]) = (inst.out_dtype, vs.as_mut_slice()) {
                *v = rw.push_temp(inst, Op::Cast { dtype: out }, vec![Operand::Value(*v)])?;
            }
            for (r, v) in inst.results.iter().zip(vs) {
                if let Some(strides) = func.ty(*r).strides() {
                    wanted.push((rw.b.func().name_of(v).to_string(), strides.to_vec()));
                }
                rw.set(*r, v);
            }
        }
        *func = rw.finish()?;
        if cx.laid_out() {
            crate::layout::lay_out(func, &cx.ctx)?;
            restore_layouts(func, &cx.ctx, &wanted)?;
        }
        Ok(())
    }
}
