//! Splitting reductions that would run on one thread: few rows, each
//! long, as the target's policy says.

use std::collections::HashMap;

use kiln_ir::Result;
use kiln_ir::layout::contiguous_strides;
use kiln_ir::ops::Fold;
use kiln_ir::view::Geometry;

use super::target::SplitPolicy;
use super::{Access, Buffer, BufferId, BufferRole, Expr, Kernel, KernelPlan, NodeId, Step, Store};

/// Splits the plan's long reductions of few rows, as `policy` says, and
/// names every kernel after its step (`k0`, `k1`, ...).
pub fn run(plan: &mut KernelPlan, policy: Option<SplitPolicy>) -> Result<()> {
    if let Some(policy) = policy {
        let steps = std::mem::take(&mut plan.steps);
        for step in steps {
            match step {
                Step::Kernel(k) => match split_reduction(&mut plan.buffers, &k, policy)? {
                    Some((partial, last)) => {
                        plan.steps.push(Step::Kernel(partial));
                        plan.steps.push(Step::Kernel(last));
                    }
                    None => plan.steps.push(Step::Kernel(k)),
                },
                other => plan.steps.push(other),
            }
        }
    }
    for (i, step) in plan.steps.iter_mut().enumerate() {
        if let Step::Kernel(k) = step {
            k.name = format!("k{i}");
        }
    }
    Ok(())
}

/// A reduction with few outer iterations and a long reduced dim (the
/// sum of a whole tensor) would run on one thread. Split in two: the
/// first kernel folds `policy.parts` slices of the reduced dim in
/// parallel into partial results (kept at accumulation precision), the
/// second folds the partials and computes what follows the reduction.
fn split_reduction(
    buffers: &mut Vec<Buffer>,
    k: &Kernel,
    policy: SplitPolicy,
) -> Result<Option<(Kernel, Kernel)>> {
    let split = policy.parts;
    let o = k.outer_rank;
    let sched = k.schedule();
    let reductions: Vec<NodeId> = (0..k.nodes.len())
        .map(|i| NodeId(i as u32))
        .filter(|&n| k.node(n).is_reduction())
        .collect();
    let splittable = o < k.rank()
        && k.outer_count() < policy.rows_below
        && k.inner_count() >= policy.row_at_least
        && k.space[o] % split == 0
        && k.phase_count() == 1
        && !reductions.is_empty()
        && reductions
            .iter()
            .all(|&n| matches!(k.node(n).expr, Expr::Reduce { .. }))
        && k.stores
            .iter()
            .all(|st| k.store_phase(st, &sched).is_none());
    if !splittable {
        return Ok(None);
    }
    let slice = k.space[o] / split;
    // The partial kernel: the split dim joins the outer dims.
    let mut partial = k.clone();
    partial.space.splice(o..=o, [split, slice]);
    partial.outer_rank = o + 1;
    let split_strides = |strides: &mut Vec<i64>| {
        let s0 = strides[o];
        strides.splice(o..=o, [s0 * slice, s0]);
    };
    for a in &mut partial.accesses {
        split_strides(&mut a.strides);
    }
    for n in &mut partial.nodes {
        if let Expr::Iota { strides, .. } = &mut n.expr {
            split_strides(strides);
        }
    }
    partial.stores.clear();
    // The final kernel: the split dim is its reduced dim.
    let mut last = Kernel {
        name: String::new(),
        space: k.space[..o].iter().copied().chain([split]).collect(),
        outer_rank: o,
        args: k.args.clone(),
        accesses: Vec::new(),
        nodes: Vec::new(),
        stores: Vec::new(),
    };
    // Outer accesses keep their strides along the outer dims.
    let mut last_access: HashMap<usize, usize> = HashMap::new();
    let mut remap: HashMap<NodeId, NodeId> = HashMap::new();
    let outer_shape: Vec<i64> = k.space[..o].to_vec();
    let partial_strides = {
        let mut st = contiguous_strides(
            &outer_shape
                .iter()
                .copied()
                .chain([split])
                .collect::<Vec<_>>(),
        );
        st.truncate(o + 1);
        st
    };
    for (i, node) in k.nodes.iter().enumerate() {
        let id = NodeId(i as u32);
        let s = sched[i];
        if node.is_reduction() {
            let Expr::Reduce { op, .. } = node.expr else {
                unreachable!("checked above")
            };
            let acc = Fold::of(op, node.compute).accumulator(node.compute);
            let geometry = Geometry::new(
                outer_shape.iter().copied().chain([split]).collect(),
                partial_strides.clone(),
                0,
            );
            let bytes = geometry.storage_bytes(acc.itemsize())?;
            buffers.push(Buffer {
                role: BufferRole::Temp { slot: 0 },
                bytes,
                dtype: acc,
            });
            let buffer = BufferId(buffers.len() as u32 - 1);
            // Partial: the reduction at accumulation precision, stored.
            let pn = &mut partial.nodes[i];
            pn.dtype = acc;
            let mut strides = partial_strides.clone();
            strides.extend(std::iter::repeat_n(0, partial.rank() - o - 1));
            partial.args.push(buffer);
            partial.accesses.push(Access {
                arg: partial.args.len() - 1,
                dtype: acc,
                offset: 0,
                strides,
            });
            partial.stores.push(Store {
                node: id,
                access: partial.accesses.len() - 1,
            });
            // Last: fold the partials.
            last.args.push(buffer);
            last.accesses.push(Access {
                arg: last.args.len() - 1,
                dtype: acc,
                offset: 0,
                strides: partial_strides.clone(),
            });
            let access = last.accesses.len() - 1;
            let load = last.push_node(Expr::Load { access }, acc, acc);
            let folded = last.push_node(Expr::Reduce { op, x: load }, node.dtype, acc);
            remap.insert(id, folded);
            continue;
        }
        if s.inner {
            continue;
        }
        // Outer nodes: copied, with outer accesses re-created.
        let mut expr = node.expr.clone();
        match &mut expr {
            Expr::Load { access } => {
                let a = &k.accesses[*access];
                let new = *last_access.entry(*access).or_insert_with(|| {
                    let mut strides = a.strides[..o].to_vec();
                    strides.push(0);
                    last.accesses.push(Access {
                        strides,
                        ..a.clone()
                    });
                    last.accesses.len() - 1
                });
                *access = new;
            }
            Expr::Iota { strides, .. } => {
                strides.truncate(o);
                strides.push(0);
            }
            other => other.remap(&remap),
        }
        let n = last.push_node(expr, node.dtype, node.compute);
        remap.insert(id, n);
    }
    for st in &k.stores {
        let a = &k.accesses[st.access];
        let mut strides = a.strides[..o].to_vec();
        strides.push(0);
        last.accesses.push(Access {
            strides,
            ..a.clone()
        });
        last.stores.push(Store {
            node: remap[&st.node],
            access: last.accesses.len() - 1,
        });
    }
    partial.prune();
    last.prune();
    Ok(Some((partial, last)))
}
