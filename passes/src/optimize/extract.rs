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

use std::collections::HashMap;

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
    // Both phases work on a table of the e-classes (indexed by id: each
    // node's cost and its operands' classes computed once), so that the
    // second phase's many walks touch arrays only (GPT-2 small: over hash
    // maps, extraction was three quarters of the optimizer's 22 ms).
    let table = Table::new(g);
    // The pinned node's index in its class (one past the class's nodes,
    // which no node matches, if it is not among them).
    let mut pins: Vec<Option<usize>> = vec![None; table.nodes.len()];
    for (id, node) in pinned {
        let class = table.index(g, *id);
        let at = g[*id].nodes.iter().position(|n| n == node);
        pins[class] = Some(at.unwrap_or(table.nodes[class].len()));
    }
    // A pin whose operands can only be built from itself (a view proven
    // to be the identity: the result is its operand) is dropped.
    let best = loop {
        let best = table.tree_costs(&pins);
        let mut stuck = false;
        for (pin, best) in pins.iter_mut().zip(&best) {
            if pin.is_some() && best.is_none() {
                *pin = None;
                stuck = true;
            }
        }
        if !stuck {
            break best;
        }
    };
    // Then improve the total of the DAG, one e-class at a time.
    let mut choice: Vec<Option<usize>> = best.iter().map(|b| b.map(|(_, node)| node)).collect();
    let is_pinned: Vec<bool> = pins.iter().map(Option::is_some).collect();
    let roots: Vec<usize> = roots.iter().map(|r| table.index(g, *r)).collect();
    let mut walk = Walk::new(table.nodes.len());
    let mut total = table.dag_cost(&choice, &roots, &mut walk);
    for _ in 0..2 {
        let mut improved = false;
        for class in table.reachable(&choice, &roots, &mut walk) {
            for node in 0..table.nodes[class].len() {
                if choice[class] == Some(node)
                    || is_pinned[class]
                    || !table.nodes[class][node]
                        .1
                        .iter()
                        .all(|&c| choice[c].is_some())
                {
                    continue;
                }
                let old = choice[class].replace(node).expect("a chosen node");
                let acyclic = !table.reaches(&choice, class, node, &mut walk);
                let cost = if acyclic {
                    table.dag_cost(&choice, &roots, &mut walk)
                } else {
                    f64::INFINITY
                };
                if cost < total {
                    total = cost;
                    improved = true;
                } else {
                    choice[class] = Some(old);
                }
            }
        }
        if !improved {
            break;
        }
    }
    table
        .ids
        .iter()
        .zip(&choice)
        .filter_map(|(&id, &node)| Some((id?, g[id?].nodes[node?].clone())))
        .collect()
}

/// The e-classes by index (their canonical id): each node's cost and its
/// operands' classes.
struct Table {
    /// `nodes[class][i]`: node `i` of the class (egg's order).
    nodes: Vec<Vec<(f64, Vec<usize>)>>,
    /// The canonical id at each index (`None` for ids that are not).
    ids: Vec<Option<Id>>,
}

impl Table {
    fn new(g: &KGraph) -> Table {
        let len = g
            .classes()
            .map(|c| usize::from(c.id) + 1)
            .max()
            .unwrap_or(0);
        let mut nodes = vec![Vec::new(); len];
        let mut ids = vec![None; len];
        for class in g.classes() {
            let i = usize::from(class.id);
            ids[i] = Some(class.id);
            nodes[i] = class
                .nodes
                .iter()
                .map(|n| {
                    let children = n.children.iter().map(|&c| usize::from(g.find(c))).collect();
                    (node_cost(g, class.id, n), children)
                })
                .collect();
        }
        Table { nodes, ids }
    }

    fn index(&self, g: &KGraph, id: Id) -> usize {
        usize::from(g.find(id))
    }

    /// The cheapest node of each e-class by tree cost (shared parts
    /// counted per use), with that cost, to a fixed point; pinned
    /// e-classes only consider their pin.
    fn tree_costs(&self, pins: &[Option<usize>]) -> Vec<Option<(f64, usize)>> {
        let mut best: Vec<Option<(f64, usize)>> = vec![None; self.nodes.len()];
        // E-classes in the order they were made (operands before their
        // users, but for merged classes), so that each sweep settles most
        // of them. (Ties go to the node found first: within a class,
        // egg's order.)
        loop {
            let mut changed = false;
            for (class, nodes) in self.nodes.iter().enumerate() {
                for (node, (cost, children)) in nodes.iter().enumerate() {
                    let children: Option<f64> =
                        children.iter().map(|&c| best[c].map(|(c, _)| c)).sum();
                    let Some(children) = children else { continue };
                    if pins[class].is_some_and(|p| p != node) {
                        continue;
                    }
                    let cost = cost + children;
                    if best[class].is_none_or(|(old, _)| cost < old) {
                        best[class] = Some((cost, node));
                        changed = true;
                    }
                }
            }
            if !changed {
                return best;
            }
        }
    }

    /// The e-classes the chosen nodes use, from the roots, in the order a
    /// depth-first walk first meets them.
    fn reachable(&self, choice: &[Option<usize>], roots: &[usize], walk: &mut Walk) -> Vec<usize> {
        walk.start();
        let mut order = Vec::new();
        let mut stack: Vec<usize> = roots.to_vec();
        while let Some(c) = stack.pop() {
            if walk.visit(c) {
                order.push(c);
                if let Some(n) = choice[c] {
                    stack.extend(self.nodes[c][n].1.iter().copied());
                }
            }
        }
        order
    }

    /// The cost of the DAG the chosen nodes make: each class reached paid
    /// once, summed in the order of [`Table::reachable`] (infinite where a
    /// class reached has no choice).
    fn dag_cost(&self, choice: &[Option<usize>], roots: &[usize], walk: &mut Walk) -> f64 {
        walk.start();
        let mut total = 0.0;
        let mut stack: Vec<usize> = roots.to_vec();
        while let Some(c) = stack.pop() {
            if walk.visit(c) {
                match choice[c] {
                    Some(n) => {
                        let (cost, children) = &self.nodes[c][n];
                        total += cost;
                        stack.extend(children.iter().copied());
                    }
                    None => total += f64::INFINITY,
                }
            }
        }
        total
    }

    /// Whether `class` is reachable from the operands of its node `node`
    /// under `choice` (choosing `node` would make a cycle).
    fn reaches(
        &self,
        choice: &[Option<usize>],
        class: usize,
        node: usize,
        walk: &mut Walk,
    ) -> bool {
        walk.start();
        let mut stack: Vec<usize> = self.nodes[class][node].1.clone();
        while let Some(c) = stack.pop() {
            if c == class {
                return true;
            }
            if walk.visit(c) {
                if let Some(n) = choice[c] {
                    stack.extend(self.nodes[c][n].1.iter().copied());
                }
            }
        }
        false
    }
}

/// A visited set for repeated walks: a class is visited in the current
/// walk when its stamp is the walk's.
struct Walk {
    stamps: Vec<u32>,
    current: u32,
}

impl Walk {
    fn new(len: usize) -> Walk {
        Walk {
            stamps: vec![0; len],
            current: 0,
        }
    }

    fn start(&mut self) {
        self.current += 1;
        if self.current == u32::MAX {
            self.stamps.fill(0);
            self.current = 1;
        }
    }

    /// Marks `c`; whether it was not yet visited in this walk.
    fn visit(&mut self, c: usize) -> bool {
        let fresh = self.stamps[c] != self.current;
        self.stamps[c] = self.current;
        fresh
    }
}
