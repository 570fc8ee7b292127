//! Rebuilding a function instruction by instruction: the common shape of
//! Kiln's passes. The new function is typed by the builder as it grows, and
//! keeps the names, locations and layout claims of what it copies.

use kiln_ir::graph::{Func, FuncBuilder, Inst, NewInst, Operand, ValueId};
use kiln_ir::infer::InferCtx;
use kiln_ir::{MemoryFormat, Op, Result, TypeLayout};

/// A function being rebuilt: the builder and the map from old values to new.
pub struct Rewriter<'a> {
    /// The function being rebuilt.
    pub old: &'a Func,
    /// The new function.
    pub b: FuncBuilder,
    map: Vec<Option<ValueId>>,
}

impl<'a> Rewriter<'a> {
    /// Starts a rebuild of `old` with its parameters.
    pub fn new(old: &'a Func, ctx: InferCtx) -> Result<Rewriter<'a>> {
        let mut rw = Rewriter::without_params(old, ctx);
        for &p in &old.params {
            let new = rw.b.param(Some(old.name_of(p)), old.ty(p).clone())?;
            rw.set(p, new);
        }
        Ok(rw)
    }

    /// Starts a function built from instructions of `old` that read none
    /// of its parameters (it has none of its own until the caller adds
    /// them).
    pub fn without_params(old: &'a Func, ctx: InferCtx) -> Rewriter<'a> {
        let mut b = FuncBuilder::new(old.name.clone(), ctx);
        b.reserve_names(old.values.iter().map(|v| v.name.as_str()));
        if let Some(loc) = &old.location {
            b.set_location(loc.clone());
        }
        Rewriter {
            old,
            b,
            map: vec![None; old.values.len()],
        }
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

    /// Copies an instruction unchanged (names, location and layout claims
    /// kept); returns its new results.
    pub fn copy(&mut self, inst: &Inst) -> Result<Vec<ValueId>> {
        let operands = self.operands(inst);
        self.push_as(inst, inst.op.clone(), operands, inst.out_dtype)
    }

    /// Pushes the replacement of `inst` (with as many results) under its
    /// names and location.
    pub fn push_as(
        &mut self,
        inst: &Inst,
        op: Op,
        operands: Vec<Operand>,
        out_dtype: Option<kiln_ir::DType>,
    ) -> Result<Vec<ValueId>> {
        let names = inst
            .results
            .iter()
            .map(|r| self.old.name_of(*r).to_string())
            .collect();
        let vs = self.b.push_full(
            NewInst::new(op, operands)
                .out_dtype(out_dtype)
                .names(names)
                .location(inst.location.clone()),
        )?;
        for (r, v) in inst.results.iter().zip(&vs) {
            self.set(*r, *v);
        }
        Ok(vs)
    }

    /// Pushes a single-result helper instruction with a fresh name,
    /// located at `inst`.
    pub fn push_temp(&mut self, inst: &Inst, op: Op, operands: Vec<Operand>) -> Result<ValueId> {
        let mut vs = self
            .b
            .push_full(NewInst::new(op, operands).location(inst.location.clone()))?;
        match (vs.pop(), vs.is_empty()) {
            (Some(v), true) => Ok(v),
            _ => Err(kiln_ir::Error::new(
                kiln_ir::ErrorKind::Arity,
                "a helper instruction must have one result",
            )),
        }
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

/// Gives values named in `wanted` (name, strides) back the strides they
/// had before a rewrite, with a `clone` to a memory format (or to explicit
/// strides) after each that lost them; fusion makes the copy free.
/// Decomposition needs it (softmax's result is contiguous, its last
/// pointwise op is not; TensorIterator breaks ties between size-1 dims
/// differently with a zero-dim operand). `func` must be laid out.
pub fn restore_layouts(
    func: &mut Func,
    ctx: &InferCtx,
    wanted: &[(String, Vec<i64>)],
) -> Result<()> {
    // A clone changes the layouts downstream of it, which may need clones
    // of their own: repeat until every value's layout is restored (or no
    // copy gives it). Names survive rebuilds; ids do not.
    let mut restored = vec![false; wanted.len()];
    loop {
        let mut fixes: Vec<(ValueId, Vec<Op>)> = Vec::new();
        for ((name, strides), done) in wanted.iter().zip(restored.iter_mut()) {
            let Some(i) = func.values.iter().position(|v| v.name == *name) else {
                continue;
            };
            let ty = &func.values[i].ty;
            if *done || ty.strides() == Some(strides.as_slice()) {
                continue;
            }
            let Some(ops) = ty
                .strides()
                .and_then(|have| relayout(&ty.shape, have, strides))
            else {
                continue;
            };
            fixes.push((ValueId(i as u32), ops));
            *done = true;
        }
        if fixes.is_empty() {
            return Ok(());
        }
        let mut rw = Rewriter::new(func, *ctx)?;
        for inst in &func.insts {
            let vs = rw.copy(inst)?;
            for (r, v) in inst.results.iter().zip(vs) {
                if let Some((_, ops)) = fixes.iter().find(|(f, _)| f == r) {
                    let mut c = v;
                    for op in ops {
                        c = rw.push_temp(inst, op.clone(), vec![Operand::Value(c)])?;
                    }
                    rw.set(*r, c);
                }
            }
        }
        *func = rw.finish()?;
        crate::layout::lay_out(func, ctx)?;
    }
}

/// The ops that lay a value of `shape` and strides `have` out with
/// `want`: a clone ([`clone_to`]), or, for strides that broadcast (0 along
/// a dim of size above 1, where the composite's values repeat: an
/// expansion of an expanded operand), a slice of one along each such dim
/// and an expand back, when the other dims have their strides already.
/// `None` when neither gives them.
fn relayout(shape: &[i64], have: &[i64], want: &[i64]) -> Option<Vec<Op>> {
    if let Some(clone) = clone_to(shape, want) {
        return Some(vec![clone]);
    }
    let broadcast = |d: usize| want[d] == 0 && shape[d] > 1;
    let dims = 0..shape.len();
    if !dims.clone().any(broadcast) || dims.clone().any(|d| !broadcast(d) && have[d] != want[d]) {
        return None;
    }
    let mut ops: Vec<Op> = dims
        .filter(|&d| broadcast(d))
        .map(|d| Op::Slice {
            dim: d as i64,
            start: Some(0),
            end: Some(1),
            step: 1,
        })
        .collect();
    ops.push(Op::Expand {
        shape: shape.to_vec(),
    });
    Some(ops)
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

/// Gives each result of `func` the strides in `wanted` (per result;
/// `None`: any), with a `clone` for the results that lost them (for that
/// result only: results may share a value). `func` must be laid out.
pub fn restore_result_layouts(
    func: &mut Func,
    ctx: &InferCtx,
    wanted: &[Option<Vec<i64>>],
) -> Result<()> {
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
        return Ok(());
    }
    let mut rw = Rewriter::new(func, *ctx)?;
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
    crate::layout::lay_out(func, ctx)
}
