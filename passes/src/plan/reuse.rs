//! Values worth storing and loading back rather than computing twice.

use kiln_ir::Traits;

use super::{Expr, Kernel, KernelPlan, Node, NodeId, Step, Store};

/// Applies [`reuse_stored_values`] to every kernel of the plan.
pub fn run(plan: &mut KernelPlan) {
    for step in &mut plan.steps {
        if let Step::Kernel(k) = step {
            reuse_stored_values(k);
        }
    }
}

/// A transcendental computed in one pass over the reduced dims and needed
/// again in a later pass (softmax's `exp`, by the sum and then the
/// quotient) is stored into the output in the first pass and loaded back in
/// the later one, instead of computed twice: the row is still in cache.
/// Only where the output holds the value exactly (same dtype) and is
/// written by that later pass at every element.
fn reuse_stored_values(k: &mut Kernel) {
    if k.outer_rank == k.rank() {
        return;
    }
    let sched = k.schedule();
    let mut used_outputs: Vec<usize> = Vec::new();
    let mut reuses: Vec<(NodeId, usize, usize)> = Vec::new();
    for store in &k.stores {
        let Some(q) = k.store_phase(store, &sched) else {
            continue;
        };
        if used_outputs.contains(&store.access) {
            continue;
        }
        let access = &k.accesses[store.access];
        let candidate = (0..k.nodes.len()).map(|i| NodeId(i as u32)).find(|&n| {
            let node = k.node(n);
            let s = sched[n.index()];
            // The op table's approximate functions (exp, log, tanh, ...).
            let transcendental = matches!(
                node.expr,
                Expr::Unary { op, .. } if op.def().traits.contains(Traits::APPROXIMATE)
            );
            transcendental
                && s.inner
                && s.phase < q
                && node.dtype == access.dtype
                && k.nodes.iter().enumerate().any(|(c, user)| {
                    user.operands().contains(&n) && sched[c].inner && sched[c].phase > s.phase
                })
        });
        if let Some(n) = candidate {
            used_outputs.push(store.access);
            reuses.push((n, store.access, sched[n.index()].phase));
        }
    }
    for (n, access, phase) in reuses {
        // The reload goes right after `n` (nodes stay in dependency order).
        let at = n.index() + 1;
        let shift = |id: NodeId| {
            if id.index() >= at {
                NodeId(id.0 + 1)
            } else {
                id
            }
        };
        let dtype = k.accesses[access].dtype;
        let sched = k.schedule();
        for (c, node) in k.nodes.iter_mut().enumerate() {
            let later = sched[c].inner && sched[c].phase > phase;
            let remap = |id: &mut NodeId| {
                *id = if *id == n && later {
                    NodeId(at as u32)
                } else {
                    shift(*id)
                }
            };
            for id in node.expr.operands_mut() {
                remap(id);
            }
        }
        for st in &mut k.stores {
            st.node = shift(st.node);
        }
        k.nodes.insert(
            at,
            Node {
                expr: Expr::Load { access },
                dtype,
                compute: dtype,
            },
        );
        k.stores.insert(0, Store { node: n, access });
    }
}
