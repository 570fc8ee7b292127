//! Constant subgraphs, computed once: the instructions of a laid-out
//! function that depend on no parameter (rotary embedding tables from
//! `arange`, `pow` and `cos`; inverse frequencies; masks built from
//! positions) compute the same tensor on every run. [`split_constants`]
//! moves them into a function of their own, with no parameters, whose
//! results become extra parameters of what is left; a backend evaluates
//! that function once (when it compiles) and passes its results on every
//! run, so neither the kernels nor their compilation are paid again.
//!
//! What is moved, and why:
//! - only what is worth keeping in memory: a subgraph with at least one
//!   op that is expensive per element or has a kernel of its own
//!   ([`Cost::is_expensive`], [`Cost::Kernel`]). A subgraph of creation
//!   ops, views and cheap arithmetic (`arange`, `gt`, `where` for a causal
//!   mask) is cheaper to recompute inside the kernels that use it than to
//!   read from memory, and fusion already does that.
//! - never a view: a kept view (an `expand` of a table) would be
//!   materialized whole; the view stays in the main function, over the
//!   kept tensor it looks at.
//! - never a returned value: a result must be a fresh tensor on every
//!   run, not one every run shares. What computes it stays.
//! - within [`Limits`]: the kept tensors' bytes, and the elements the
//!   subgraph computes, since it is evaluated at compile time.
//!
//! Random ops are pure functions of their seed (see `kiln_ir::random`),
//! so a subgraph that draws from one may be kept too; nothing in Kiln has
//! side effects.

use kiln_ir::graph::{Func, ValueId};
use kiln_ir::infer::InferCtx;
use kiln_ir::ops::Cost;
use kiln_ir::{Result, Stage};

use crate::dce::DcePass;
use crate::manager::{Pass, PassCx};
use crate::rewrite::Rewriter;

/// How much a split may keep.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The most bytes of kept tensors, all together.
    pub bytes: usize,
    /// The most elements the constant function computes (the sum of its
    /// instructions' result sizes): it runs on the reference interpreter
    /// at compile time.
    pub elements: usize,
}

impl Default for Limits {
    /// 16 MiB of tensors and 2^17 elements computed: a Llama block's
    /// rotary tables for a thousand positions. The interpreter takes about
    /// 0.1 µs an element (2 ms for 128 positions' tables, on another
    /// thread while the backend compiles the rest), so 2^17 elements bound
    /// what evaluating them adds to a compile to about 13 ms.
    fn default() -> Self {
        Limits {
            bytes: 16 << 20,
            elements: 1 << 17,
        }
    }
}

/// A function split in two.
#[derive(Clone, Debug)]
pub struct Split {
    /// No parameters; returns the kept tensors.
    pub constants: Func,
    /// The original parameters, then one per kept tensor (in the order
    /// `constants` returns them); computes and returns what the original
    /// did.
    pub main: Func,
}

/// Splits the constant subgraphs worth keeping out of a laid-out `func`,
/// or `None` where there are none. Both functions are laid out.
pub fn split_constants(func: &Func, ctx: &InferCtx, limits: Limits) -> Result<Option<Split>> {
    let n = func.values.len();
    // constant[v]: v depends on no parameter.
    let mut constant = vec![false; n];
    for inst in &func.insts {
        let c = inst.value_operands().all(|v| constant[v.index()]);
        for r in &inst.results {
            constant[r.index()] = c;
        }
    }
    let mut returned = vec![false; n];
    for v in &func.returns {
        returned[v.index()] = true;
    }
    // Candidate roots: constant operands of instructions that stay (those
    // with a parameter among their operands, and those computing returned
    // values), walked down through views and returned values to what they
    // are computed from.
    let mut pending: Vec<ValueId> = Vec::new();
    for inst in &func.insts {
        if inst
            .results
            .iter()
            .any(|r| !constant[r.index()] || returned[r.index()])
        {
            pending.extend(inst.value_operands().filter(|v| constant[v.index()]));
        }
    }
    let mut visited = vec![false; n];
    let mut roots: Vec<ValueId> = Vec::new();
    while let Some(v) = pending.pop() {
        if std::mem::replace(&mut visited[v.index()], true) {
            continue;
        }
        match func.def_inst(v) {
            Some(def) if def.op.is_view() || returned[v.index()] => {
                pending.extend(def.value_operands());
            }
            Some(_) => roots.push(v),
            None => {}
        }
    }
    roots.sort();

    // Each root's subgraph, and whether it is worth keeping.
    // (Sizes of verified types: their products do not overflow.)
    let numel = |v: ValueId| func.ty(v).numel().max(0) as usize;
    let mut kept = vec![false; n];
    let mut moved = vec![false; func.insts.len()];
    let (mut bytes, mut elements) = (0usize, 0usize);
    for &root in &roots {
        // Every result of the root's instruction is kept with it (sort's
        // values and indices): the instruction leaves the main function
        // whole, or it would define the kept one again there. So none of
        // them may be returned.
        let siblings: Vec<ValueId> = match func.value(root).def {
            kiln_ir::graph::ValueDef::Inst { inst, .. } => func.insts[inst].results.clone(),
            _ => vec![root],
        };
        if siblings.iter().any(|r| returned[r.index()]) {
            continue;
        }
        let cone = cone_of(func, root);
        let worth = cone.iter().any(|&i| {
            let cost = func.insts[i].op.cost();
            cost.is_expensive() || cost == Cost::Kernel
        });
        if !worth {
            continue;
        }
        let new_elements = cone
            .iter()
            .filter(|&&i| !moved[i])
            .flat_map(|&i| func.insts[i].results.iter().map(|&r| numel(r)))
            .fold(0usize, |a, e| a.saturating_add(e));
        let root_bytes = siblings
            .iter()
            .filter(|r| !kept[r.index()])
            .map(|&r| numel(r).saturating_mul(func.ty(r).dtype.itemsize()))
            .fold(0usize, usize::saturating_add);
        if bytes.saturating_add(root_bytes) > limits.bytes
            || elements.saturating_add(new_elements) > limits.elements
        {
            continue;
        }
        bytes += root_bytes;
        elements += new_elements;
        for i in cone {
            moved[i] = true;
        }
        // Siblings nothing reads still become parameters of the main
        // function (their bytes were counted above).
        for &r in &siblings {
            kept[r.index()] = true;
        }
    }
    let kept_roots: Vec<ValueId> = (0..n as u32)
        .map(ValueId)
        .filter(|r| kept[r.index()])
        .collect();
    if kept_roots.is_empty() {
        return Ok(None);
    }

    // The constant function: the kept roots' subgraphs, in order.
    let mut rw = Rewriter::without_params(func, *ctx);
    for (i, inst) in func.insts.iter().enumerate() {
        if moved[i] {
            rw.copy(inst)?;
        }
    }
    let returns = kept_roots.iter().map(|r| rw.get(*r)).collect();
    let mut constants = rw.b.finish(returns, None)?;
    constants.name = format!("{}.constants", func.name);
    crate::layout::lay_out(&mut constants, ctx)?;

    // The main function: the kept roots as parameters, every instruction
    // that computes something else (a value of a moved subgraph that
    // something else reads too is computed here as well), then without
    // what no longer has a use.
    let mut rw = Rewriter::new(func, *ctx)?;
    for &root in &kept_roots {
        let p =
            rw.b.param(Some(func.name_of(root)), func.ty(root).clone())?;
        rw.set(root, p);
    }
    for inst in &func.insts {
        if !inst.results.iter().all(|r| kept[r.index()]) {
            rw.copy(inst)?;
        }
    }
    let mut main = rw.finish()?;
    let cx = PassCx {
        ctx: *ctx,
        stage: Stage::LaidOut,
    };
    DcePass.run_func(&mut main, &cx)?;
    crate::layout::lay_out(&mut main, ctx)?;
    Ok(Some(Split { constants, main }))
}

/// The instructions `root` depends on, itself included (positions in
/// `func.insts`, ascending).
fn cone_of(func: &Func, root: ValueId) -> Vec<usize> {
    let mut seen = vec![false; func.insts.len()];
    let mut stack = vec![root];
    while let Some(v) = stack.pop() {
        if let kiln_ir::graph::ValueDef::Inst { inst, .. } = func.value(v).def
            && !seen[inst]
        {
            seen[inst] = true;
            stack.extend(func.insts[inst].value_operands());
        }
    }
    (0..seen.len()).filter(|&i| seen[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PassManager;

    /// The split of a program after the standard pipeline, as text.
    fn split(text: &str) -> Option<(String, String)> {
        let mut m = kiln_ir::parse_module("t.kir", text, kiln_ir::DefaultDType::F32).unwrap();
        PassManager::standard().run(&mut m).unwrap();
        let s = split_constants(m.entry().unwrap(), &m.ctx(), Limits::default()).unwrap()?;
        Some((s.constants.to_string(), s.main.to_string()))
    }

    #[test]
    fn a_table_of_cosines_is_kept_not_its_broadcast() {
        let (constants, main) = split(
            "func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
               %p = arange {end = 8, dtype = f32} : tensor<8xf32>
               %c = cos %p : tensor<8xf32>
               %u = unsqueeze %c {dim = 0} : tensor<1x8xf32>
               %e = expand %u {shape = [4, 8]} : tensor<4x8xf32>
               %y = mul %x, %e : tensor<4x8xf32>
               return %y
             }",
        )
        .expect("cos of a constant is worth keeping");
        assert!(constants.contains("cos"), "{constants}");
        assert!(
            !constants.contains("4x8") && !constants.contains("expand"),
            "the table, not its broadcast: {constants}"
        );
        // (The unsqueeze may end on either side of the cos: the optimizer
        // finds both orders cost the same.)
        assert!(
            main.contains("%c: tensor<8xf32") || main.contains("%u: tensor<1x8xf32"),
            "a parameter: {main}"
        );
        assert!(!main.contains("cos") && !main.contains("arange"), "{main}");
    }

    #[test]
    fn cheap_constants_returned_values_and_big_ones_stay() {
        // A causal mask: creation ops and comparisons, recomputed in place.
        assert!(
            split(
                "func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
               %i = arange {end = 8} : tensor<8xi64>
               %r = unsqueeze %i {dim = 1} : tensor<8x1xi64>
               %m = gt %i, %r : tensor<8x8xbool>
               %y = masked_fill %x, %m {value = -1.0} : tensor<8x8xf32>
               return %y
             }"
            )
            .is_none()
        );
        // A returned constant is a fresh tensor on every run.
        assert!(
            split(
                "func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
               %p = arange {end = 8, dtype = f32} : tensor<8xf32>
               %c = cos %p : tensor<8xf32>
               %y = add %x, 1.0 : tensor<8xf32>
               return %y, %c
             }"
            )
            .is_none()
        );
        // Past the element limit.
        assert!(
            split(
                "func @main(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
               %p = arange {end = 1048576, dtype = f32} : tensor<1048576xf32>
               %v = view %p {shape = [1024, 1024]} : tensor<1024x1024xf32>
               %c = cos %v : tensor<1024x1024xf32>
               %y = add %x, %c : tensor<1024x1024xf32>
               return %y
             }"
            )
            .is_none()
        );
    }

    #[test]
    fn a_constant_shared_with_what_stays_is_computed_in_both() {
        // %p is read by the kept %c's subgraph and by `add` with %x: the
        // main function computes it too (it is cheap, not worth keeping).
        let (constants, main) = split(
            "func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
               %p = arange {end = 8, dtype = f32} : tensor<8xf32>
               %c = exp %p : tensor<8xf32>
               %s = add %x, %p : tensor<8xf32>
               %y = mul %s, %c : tensor<8xf32>
               return %y
             }",
        )
        .expect("exp of a constant is kept");
        assert!(constants.contains("exp"), "{constants}");
        assert!(main.contains("arange") && !main.contains("exp"), "{main}");
    }

    #[test]
    fn an_instruction_of_several_results_is_kept_whole() {
        // Only sort's indices are read; the sort leaves the main function
        // with both of its results (found by the random programs: it was
        // copied back, defining the kept %i a second time).
        let (constants, main) = split(
            "func @main(%x: tensor<8xi64>) -> tensor<8xbool> {
               %p = arange {end = 8, dtype = f32} : tensor<8xf32>
               %c = cos %p : tensor<8xf32>
               %s, %i = sort %c {dim = -1} : (tensor<8xf32>, tensor<8xi64>)
               %y = eq %x, %i : tensor<8xbool>
               return %y
             }",
        )
        .expect("a sort of cosines is kept");
        assert!(constants.contains("sort"), "{constants}");
        assert!(!main.contains("sort"), "{main}");
    }

    #[test]
    fn an_instruction_with_a_returned_result_stays() {
        let kept = split(
            "func @main(%x: tensor<8xi64>) -> (tensor<8xf32>, tensor<8xbool>) {
               %p = arange {end = 8, dtype = f32} : tensor<8xf32>
               %c = cos %p : tensor<8xf32>
               %s, %i = sort %c {dim = -1} : (tensor<8xf32>, tensor<8xi64>)
               %y = eq %x, %i : tensor<8xbool>
               return %s, %y
             }",
        );
        // The cosines are kept (an operand of what stays); the sort stays.
        let (constants, main) = kept.expect("the cosines are kept");
        assert!(
            constants.contains("cos") && !constants.contains("sort"),
            "{constants}"
        );
        assert!(main.contains("sort"), "{main}");
    }
}
