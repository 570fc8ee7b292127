//! Choosing one e-node per e-class: the cost model, and extraction that
//! respects sharing.
//!
//! Costs are in bytes of memory traffic, the resource Kiln's fused kernels
//! are bound by. Pointwise work costs a fraction of its elements (it fuses
//! into whatever kernel consumes it); a view of data in memory is free; a
//! view of a computed value forces that value into memory (a kernel, a
//! write and a read); reductions read their input; matmul and cat are
//! their own kernels. A value shared by several users is paid once: the
//! extraction's cost is the sum over the distinct e-classes it uses.

use std::collections::{HashMap, HashSet};

use egg::Id;
use kiln_ir::ops::Cost;

use super::lang::{KGraph, KNode, NodeOp};

/// What one kernel launch and its loop set-up cost, in bytes of traffic.
const KERNEL: f64 = 4096.0;

fn bytes(g: &KGraph, id: Id) -> f64 {
    g[id]
        .data
        .ty
        .as_ref()
        .map_or(0.0, |t| (t.numel() as usize * t.dtype.itemsize()) as f64)
}

fn numel(g: &KGraph, id: Id) -> f64 {
    g[id].data.ty.as_ref().map_or(1.0, |t| t.numel() as f64)
}

fn in_memory(g: &KGraph, id: Id) -> bool {
    g[id]
        .nodes
        .iter()
        .any(|n| matches!(n.op, NodeOp::Param(..)))
}

/// The cost of one node, its operands not included, by its op's cost
/// class in the op table.
pub fn node_cost(g: &KGraph, class: Id, node: &KNode) -> f64 {
    let op = match &node.op {
        NodeOp::Param(..) | NodeOp::Lit(_) | NodeOp::Absent | NodeOp::Result(_) => return 0.0,
        NodeOp::Inst(k) => &*k.op,
    };
    let ch = &node.children;
    // Every op costs a little, so fewer ops win ties.
    1.0 + match op.cost() {
        Cost::Cheap => numel(g, class) * 0.25,
        Cost::Costly => numel(g, class),
        Cost::Creation => numel(g, class) * 0.1,
        Cost::Reduction => ch.first().map_or(0.0, |&c| numel(g, c)) * 0.25,
        Cost::Rows => numel(g, class) * 4.0,
        Cost::Kernel => KERNEL + ch.iter().map(|&c| bytes(g, c)).sum::<f64>() + bytes(g, class),
        Cost::Copy => bytes(g, class) * 0.5,
        Cost::View => match ch.first() {
            Some(&c) if in_memory(g, c) => 0.0,
            // A view of a computed value: it is written to memory and read back.
            Some(&c) => KERNEL + 2.0 * bytes(g, c),
            None => 0.0,
        },
    }
}

/// One node per e-class reachable from the roots, with the least total
/// cost found, counting each e-class once; `pinned` e-classes keep the
/// node given.
pub fn extract(g: &KGraph, roots: &[Id], pinned: &HashMap<Id, KNode>) -> HashMap<Id, KNode> {
    // A pin whose operands can only be built from itself (a view proven
    // to be the identity: the result is its operand) is dropped.
    let mut pinned = pinned.clone();
    let best = loop {
        let best = tree_costs(g, &pinned);
        let stuck: Vec<Id> = pinned
            .keys()
            .filter(|c| !best.contains_key(*c))
            .copied()
            .collect();
        if stuck.is_empty() {
            break best;
        }
        for c in stuck {
            pinned.remove(&c);
        }
    };
    let mut choice: HashMap<Id, KNode> = best.into_iter().map(|(id, (_, n))| (id, n)).collect();
    // Then improve the total of the DAG, one e-class at a time.
    let roots: Vec<Id> = roots.iter().map(|r| g.find(*r)).collect();
    let mut total = dag_cost(g, &choice, &roots);
    for _ in 0..2 {
        let mut improved = false;
        for class in reachable(g, &choice, &roots) {
            for node in &g[class].nodes {
                if choice.get(&class) == Some(node)
                    || pinned.contains_key(&class)
                    || !node
                        .children
                        .iter()
                        .all(|c| choice.contains_key(&g.find(*c)))
                {
                    continue;
                }
                let old = choice.insert(class, node.clone()).expect("a chosen node");
                let acyclic = !reaches(g, &choice, node, class);
                let cost = if acyclic {
                    dag_cost(g, &choice, &roots)
                } else {
                    f64::INFINITY
                };
                if cost < total {
                    total = cost;
                    improved = true;
                } else {
                    choice.insert(class, old);
                }
            }
        }
        if !improved {
            break;
        }
    }
    choice
}

/// The cheapest node of each e-class by tree cost (shared parts counted per
/// use), to a fixed point; pinned e-classes only consider their pin.
fn tree_costs(g: &KGraph, pinned: &HashMap<Id, KNode>) -> HashMap<Id, (f64, KNode)> {
    let mut best: HashMap<Id, (f64, KNode)> = HashMap::new();
    // E-classes in the order they were made (operands before their users,
    // but for merged classes), so that each sweep settles most of them.
    // (Ties go to the node found first: within a class, egg's order.)
    let mut classes: Vec<&egg::EClass<KNode, _>> = g.classes().collect();
    classes.sort_unstable_by_key(|c| c.id);
    loop {
        let mut changed = false;
        for class in &classes {
            for node in &class.nodes {
                let children: Option<f64> = node
                    .children
                    .iter()
                    .map(|c| best.get(&g.find(*c)).map(|(c, _)| *c))
                    .sum();
                let Some(children) = children else { continue };
                if pinned.get(&class.id).is_some_and(|p| p != node) {
                    continue;
                }
                let cost = node_cost(g, class.id, node) + children;
                if best.get(&class.id).is_none_or(|(old, _)| cost < *old) {
                    best.insert(class.id, (cost, node.clone()));
                    changed = true;
                }
            }
        }
        if !changed {
            return best;
        }
    }
}

/// The e-classes the chosen nodes use, from the roots.
fn reachable(g: &KGraph, choice: &HashMap<Id, KNode>, roots: &[Id]) -> Vec<Id> {
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    let mut stack: Vec<Id> = roots.to_vec();
    while let Some(c) = stack.pop() {
        let c = g.find(c);
        if seen.insert(c) {
            order.push(c);
            if let Some(n) = choice.get(&c) {
                stack.extend(n.children.iter().copied());
            }
        }
    }
    order
}

fn dag_cost(g: &KGraph, choice: &HashMap<Id, KNode>, roots: &[Id]) -> f64 {
    reachable(g, choice, roots)
        .into_iter()
        .map(|c| choice.get(&c).map_or(f64::INFINITY, |n| node_cost(g, c, n)))
        .sum()
}

/// Whether `class` is reachable from `node`'s operands under `choice`.
fn reaches(g: &KGraph, choice: &HashMap<Id, KNode>, node: &KNode, class: Id) -> bool {
    let mut seen = HashSet::new();
    let mut stack: Vec<Id> = node.children.clone();
    while let Some(c) = stack.pop() {
        let c = g.find(c);
        if c == class {
            return true;
        }
        if seen.insert(c) {
            if let Some(n) = choice.get(&c) {
                stack.extend(n.children.iter().copied());
            }
        }
    }
    false
}
