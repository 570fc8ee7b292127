//! Dead-code elimination: removes instructions none of whose results are
//! used (no Kiln op has side effects).

use kiln_ir::Result;
use kiln_ir::graph::Func;

use crate::manager::{Pass, PassCx};
use crate::rewrite::Rewriter;

/// Removes unused instructions.
pub struct DcePass;

impl Pass for DcePass {
    fn name(&self) -> &'static str {
        "dce"
    }

    fn run_func(&self, func: &mut Func, cx: &PassCx) -> Result<()> {
        // Walk backwards: an instruction is live if a live one uses it.
        let mut live = vec![false; func.values.len()];
        for v in &func.returns {
            live[v.index()] = true;
        }
        let is_live =
            |live: &[bool], inst: &kiln_ir::Inst| inst.results.iter().any(|r| live[r.index()]);
        for inst in func.insts.iter().rev() {
            if is_live(&live, inst) {
                for v in inst.value_operands() {
                    live[v.index()] = true;
                }
            }
        }
        if func.insts.iter().all(|i| is_live(&live, i)) {
            return Ok(());
        }
        let mut rw = Rewriter::new(func, cx.ctx)?;
        for inst in func.insts.iter().filter(|i| is_live(&live, i)) {
            rw.copy(inst)?;
        }
        *func = rw.finish()?;
        Ok(())
    }
}
