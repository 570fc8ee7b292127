//! Dead-code elimination: removes instructions whose results are never used
//! (no Kiln op has side effects).

use kiln_ir::{Module, Result};

use crate::manager::Pass;
use crate::rewrite::{Rewriter, is_laid_out, relayout};

pub struct DcePass;

impl Pass for DcePass {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run(&self, module: &mut Module) -> Result<()> {
        let ctx = module.ctx();
        let laid_out = is_laid_out(module);
        for func in &mut module.funcs {
            // Walk backwards: an instruction is live if a live one uses it.
            let mut live = vec![false; func.values.len()];
            for v in &func.returns {
                live[v.index()] = true;
            }
            for inst in func.insts.iter().rev() {
                if live[inst.result.index()] {
                    for v in inst.value_operands() {
                        live[v.index()] = true;
                    }
                }
            }
            if func.insts.iter().all(|i| live[i.result.index()]) {
                continue;
            }
            let mut rw = Rewriter::new(func, ctx)?;
            for inst in func.insts.iter().filter(|i| live[i.result.index()]) {
                rw.copy(inst)?;
            }
            *func = rw.finish()?;
        }
        relayout(module, laid_out)
    }
}
