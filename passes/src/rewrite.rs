//! Rebuilding a function instruction by instruction: the common shape of
//! Kiln's passes. The new function is typed by the builder as it grows, and
//! keeps the names, locations and layout claims of what it copies.

use kiln_ir::graph::{Func, FuncBuilder, Inst, Operand, ValueId};
use kiln_ir::infer::InferCtx;
use kiln_ir::{MemoryFormat, Module, Op, Result, TypeLayout};

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
        self.finish_returning(returns)
    }

    /// Finishes the function returning these (new) values.
    pub fn finish_returning(self, returns: Vec<ValueId>) -> Result<Func> {
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

/// Gives values named in `wanted` (per function: name, strides) back the
/// strides they had before a rewrite, with a `clone` to a memory format
/// (or to explicit strides) after each that lost them; fusion makes the
/// copy free. Decomposition needs it (softmax's result is contiguous, its
/// last pointwise op is not; TensorIterator breaks ties between size-1 dims
/// differently with a zero-dim operand), and so does the optimizer (a
/// program's results keep their strides whatever it rewrites).
pub fn restore_layouts(module: &mut Module, wanted: &[Vec<(String, Vec<i64>)>]) -> Result<()> {
    let ctx = module.ctx();
    // A clone changes the layouts downstream of it, which may need clones
    // of their own: repeat until every composite's layout is restored (or
    // no memory format gives it). Names survive rebuilds; ids do not.
    let mut restored: Vec<Vec<bool>> = wanted.iter().map(|w| vec![false; w.len()]).collect();
    loop {
        let mut changed = false;
        for ((func, wanted), restored) in module.funcs.iter_mut().zip(wanted).zip(&mut restored) {
            let mut fixes: Vec<(ValueId, Op)> = Vec::new();
            for ((name, strides), done) in wanted.iter().zip(restored.iter_mut()) {
                let Some(i) = func.values.iter().position(|v| v.name == *name) else {
                    continue;
                };
                let ty = &func.values[i].ty;
                if *done || ty.strides() == Some(strides.as_slice()) {
                    continue;
                }
                let Some(clone) = clone_to(&ty.shape, strides) else {
                    continue;
                };
                fixes.push((ValueId(i as u32), clone));
                *done = true;
            }
            if fixes.is_empty() {
                continue;
            }
            changed = true;
            let mut rw = Rewriter::new(func, ctx)?;
            for inst in &func.insts {
                let v = rw.copy(inst)?;
                if let Some((_, clone)) = fixes.iter().find(|(f, _)| *f == inst.result) {
                    let c = rw.push_temp(inst, clone.clone(), vec![Operand::Value(v)])?;
                    rw.set(inst.result, c);
                }
            }
            *func = rw.finish()?;
        }
        if !changed {
            return Ok(());
        }
        relayout(module, true)?;
    }
}

/// The clone that lays a value of `shape` out with `strides`: to a memory
/// format when one gives them (it reads better), else to explicit strides
/// (when they are dense); `None` when no copy can have them.
pub fn clone_to(shape: &[i64], strides: &[i64]) -> Option<Op> {
    let format = [
        MemoryFormat::Contiguous,
        MemoryFormat::ChannelsLast,
        MemoryFormat::ChannelsLast3d,
    ]
    .into_iter()
    .find(|f| f.strides(shape).is_ok_and(|s| s == strides));
    match format {
        Some(memory_format) => Some(Op::Clone {
            memory_format,
            strides: None,
        }),
        None if kiln_ir::layout::is_non_overlapping_and_dense(shape, strides) => Some(Op::Clone {
            memory_format: MemoryFormat::Preserve,
            strides: Some(strides.to_vec()),
        }),
        None => None,
    }
}

/// Gives each result of each function the strides in `wanted` (per
/// function, per result; `None`: any), with a `clone` for the results that
/// lost them (for that result only: results may share a value).
pub fn restore_result_layouts(module: &mut Module, wanted: &[Vec<Option<Vec<i64>>>]) -> Result<()> {
    let ctx = module.ctx();
    let mut changed = false;
    for (func, wanted) in module.funcs.iter_mut().zip(wanted) {
        let fixes: Vec<Option<Op>> = func
            .returns
            .iter()
            .zip(wanted)
            .map(|(r, w)| {
                let ty = func.ty(*r);
                match w {
                    Some(w) if ty.strides() != Some(w.as_slice()) => clone_to(&ty.shape, w),
                    _ => None,
                }
            })
            .collect();
        if fixes.iter().all(Option::is_none) {
            continue;
        }
        changed = true;
        let mut rw = Rewriter::new(func, ctx)?;
        for inst in &func.insts {
            rw.copy(inst)?;
        }
        let mut returns = Vec::with_capacity(func.returns.len());
        for (r, fix) in func.returns.iter().zip(fixes) {
            let v = rw.get(*r);
            returns.push(match fix {
                Some(clone) => rw.b.push(clone, vec![Operand::Value(v)], None)?,
                None => v,
            });
        }
        *func = rw.finish_returning(returns)?;
    }
    relayout(module, changed)
}
