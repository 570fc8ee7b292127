//! Loop order: each kernel's loops ordered so the innermost one walks
//! memory contiguously (outer dims first, reduced dims last), size-1 dims
//! dropped, and dims that are contiguous in every access merged into one
//! long loop.

use super::{Expr, Kernel, KernelPlan, Step};

/// Normalizes every kernel of the plan.
pub fn run(plan: &mut KernelPlan) {
    for step in &mut plan.steps {
        if let Step::Kernel(k) = step {
            normalize(k);
        }
    }
}

/// Every stride vector of a kernel: its accesses' and its iotas'.
fn for_each_strides(k: &mut Kernel, mut f: impl FnMut(&mut Vec<i64>)) {
    for a in &mut k.accesses {
        f(&mut a.strides);
    }
    for n in &mut k.nodes {
        if let Expr::Iota { strides, .. } = &mut n.expr {
            f(strides);
        }
    }
}

fn all_strides(k: &Kernel) -> Vec<&Vec<i64>> {
    let mut out: Vec<&Vec<i64>> = k.accesses.iter().map(|a| &a.strides).collect();
    for n in &k.nodes {
        if let Expr::Iota { strides, .. } = &n.expr {
            out.push(strides);
        }
    }
    out
}

/// Orders loops (outer dims first; within each group, the dim the primary
/// access walks contiguously innermost), drops size-1 dims, and merges dims
/// that are contiguous in every access.
fn normalize(k: &mut Kernel) {
    let rank = k.space.len();
    let reduced: Vec<bool> = (0..rank).map(|d| d >= k.outer_rank).collect();
    // Index reductions find the first extreme: their inner loops keep
    // logical order.
    let keep_inner_order = k
        .nodes
        .iter()
        .any(|n| matches!(n.expr, Expr::ArgReduce { .. }));
    // The primary accesses: the first store for outer dims, the first load
    // varying along reduced dims for inner ones.
    let store_strides = k
        .stores
        .first()
        .map(|s| k.accesses[s.access].strides.clone())
        .unwrap_or_else(|| vec![0; rank]);
    let inner_load = k
        .nodes
        .iter()
        .filter_map(|n| match n.expr {
            Expr::Load { access } => Some(&k.accesses[access].strides),
            _ => None,
        })
        .find(|s| (0..rank).any(|d| reduced[d] && s[d] != 0))
        .cloned()
        .unwrap_or_else(|| vec![0; rank]);
    let order = |dims: Vec<usize>, strides: &[i64], keep: bool| -> Vec<usize> {
        let mut dims = dims;
        if !keep {
            // Stable: equal strides keep logical order.
            dims.sort_by_key(|&d| std::cmp::Reverse(strides[d].abs()));
        }
        dims
    };
    let outer: Vec<usize> = order(
        (0..rank).filter(|&d| !reduced[d]).collect(),
        &store_strides,
        false,
    );
    let inner: Vec<usize> = order(
        (0..rank).filter(|&d| reduced[d]).collect(),
        &inner_load,
        keep_inner_order,
    );
    let perm: Vec<usize> = outer.iter().chain(&inner).copied().collect();
    let space = k.space.clone();
    // Drop size-1 dims (their index is always 0), unless the space is empty.
    let empty = space.contains(&0);
    let keep: Vec<usize> = perm
        .iter()
        .copied()
        .filter(|&d| space[d] != 1 || empty)
        .collect();
    let outer_kept = keep.iter().filter(|&&d| !reduced[d]).count();
    k.space = keep.iter().map(|&d| space[d]).collect();
    for_each_strides(k, |s| *s = keep.iter().map(|&d| s[d]).collect());
    k.outer_rank = outer_kept;
    // Merge dim i into dim i+1 when every stride vector allows it.
    let mut i = 0;
    while i + 1 < k.space.len() {
        let same_group = (i + 1 < k.outer_rank) || (i >= k.outer_rank);
        let mergeable = same_group
            && all_strides(k)
                .iter()
                .all(|s| s[i] == s[i + 1] * k.space[i + 1]);
        if mergeable {
            let size = k.space[i] * k.space[i + 1];
            k.space[i + 1] = size;
            k.space.remove(i);
            for_each_strides(k, |s| {
                s.remove(i);
            });
            if i < k.outer_rank {
                k.outer_rank -= 1;
            }
        } else {
            i += 1;
        }
    }
}
