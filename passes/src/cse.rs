//! Common-subexpression elimination: an instruction identical to an earlier
//! one (same op and attributes, operands and out_dtype) reuses its results.
//! Commutative ops match with their operands in either order. Identity is
//! structural: ops, operands and literals compare by value (floats by
//! their bits, so `-0.0` and `0.0` stay distinct).

use std::collections::HashMap;

use kiln_ir::graph::{Func, Operand, ValueId};
use kiln_ir::{DType, Op, Result};

use crate::manager::{Pass, PassCx};
use crate::rewrite::Rewriter;

/// Reuses the results of identical instructions.
pub struct CsePass;

/// An instruction without its results: what makes two the same.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    op: Op,
    operands: Vec<Operand>,
    out_dtype: Option<DType>,
}

impl Key {
    fn new(op: &Op, mut operands: Vec<Operand>, out_dtype: Option<DType>) -> Key {
        if matches!(op, Op::Binary { op } if op.is_commutative()) {
            operands.sort();
        }
        Key {
            op: op.clone(),
            operands,
            out_dtype,
        }
    }
}

impl Pass for CsePass {
    fn name(&self) -> &'static str {
        "cse"
    }

    fn run_func(&self, func: &mut Func, cx: &PassCx) -> Result<()> {
        let mut rw = Rewriter::new(func, cx.ctx)?;
        let mut seen: HashMap<Key, Vec<ValueId>> = HashMap::new();
        for inst in &func.insts {
            let key = Key::new(&inst.op, rw.operands(inst), inst.out_dtype);
            match seen.get(&key) {
                Some(vs) => {
                    for (r, v) in inst.results.iter().zip(vs) {
                        rw.set(*r, *v);
                    }
                }
                None => {
                    let vs = rw.copy(inst)?;
                    seen.insert(key, vs);
                }
            }
        }
        *func = rw.finish()?;
        Ok(())
    }
}
