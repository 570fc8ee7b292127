//! Rebuilding a function instruction by instruction: the common shape of
//! Kiln's passes. The new function is typed by the builder as it grows, and
//! keeps the names, locations and layout claims of what it copies.

use kiln_ir::graph::{Func, FuncBuilder, Inst, Operand, ValueId};
use kiln_ir::infer::InferCtx;
use kiln_ir::{Module, Result, TypeLayout};

/// A function being rebuilt: the builder and the map from old values to new.
pub struct Rewriter<'a> {
    pub old: &'a Func,
    pub b: FuncBuilder,
    map: Vec<Option<ValueId>>,
}

impl<'a> Rewriter<'a> {
    pub fn new(old: &'a Func, ctx: InferCtx) -> Result<Rewriter<'a>> {
        let mut b = FuncBuilder::new(old.name.clone(), ctx);
        b.reserve_names(old.values.iter().map(|v| v.name.as_str()));
        if let Some(loc) = &old.location {
            b.set_location(loc.clone());
        }
        let mut map = vec![None; old.values.len()];
        for &p in &old.params {
            map[p.index()] = Some(b.param(Some(old.name_of(p)), old.ty(p).clone())?);
        }
        Ok(Rewriter { old, b, map })
    }

    /// The new value standing for an old one.
    pub fn get(&self, v: ValueId) -> ValueId {
        self.map[v.index()].expect("operands are rebuilt before their uses")
    }

    /// An old instruction's operands, mapped to the new function.
    pub fn operands(&self, inst: &Inst) -> Vec<Operand> {
        inst.operands
            .iter()
            .map(|o| match o {
                Operand::Value(v) => Operand::Value(self.get(*v)),
                s => *s,
            })
            .collect()
    }

    /// Records that `new` replaces the old value `old`.
    pub fn set(&mut self, old: ValueId, new: ValueId) {
        self.map[old.index()] = Some(new);
    }

    /// Copies an instruction unchanged (name, location and layout claim kept).
    pub fn copy(&mut self, inst: &Inst) -> Result<ValueId> {
        let operands = self.operands(inst);
        self.push_as(inst, inst.op.clone(), operands, inst.out_dtype)
    }

    /// Pushes the replacement of `inst` under its name and location.
    pub fn push_as(
        &mut self,
        inst: &Inst,
        op: kiln_ir::Op,
        operands: Vec<Operand>,
        out_dtype: Option<kiln_ir::DType>,
    ) -> Result<ValueId> {
        let name = self.old.name_of(inst.result).to_string();
        let v = self.b.push_full(
            op,
            operands,
            out_dtype,
            Some(&name),
            inst.location.clone(),
            None,
        )?;
        self.set(inst.result, v);
        Ok(v)
    }

    /// Pushes a helper instruction with a fresh name, located at `inst`.
    pub fn push_temp(
        &mut self,
        inst: &Inst,
        op: kiln_ir::Op,
        operands: Vec<Operand>,
    ) -> Result<ValueId> {
        self.b
            .push_full(op, operands, None, None, inst.location.clone(), None)
    }

    /// Finishes the function with the old returns, mapped.
    pub fn finish(self) -> Result<Func> {
        let returns = self.old.returns.iter().map(|v| self.get(*v)).collect();
        let declared = self
            .old
            .result_types
            .iter()
            .map(|t| t.clone().with_layout(TypeLayout::Unspecified))
            .collect();
        self.b.finish(returns, Some(declared))
    }
}

/// Whether every instruction result already has a layout (the layout pass
/// has run): passes that rebuild functions then lay them out again.
pub fn is_laid_out(module: &Module) -> bool {
    module.funcs.iter().any(|f| !f.insts.is_empty())
        && module.funcs.iter().all(|f| {
            f.insts
                .iter()
                .all(|i| f.ty(i.result).layout != TypeLayout::Unspecified)
        })
}

/// Re-runs the layout rules when the module had layouts before a rebuild.
pub fn relayout(module: &mut Module, was_laid_out: bool) -> Result<()> {
    use crate::manager::Pass;
    if was_laid_out {
        crate::layout::LayoutPass.run(module)
    } else {
        Ok(())
    }
}
