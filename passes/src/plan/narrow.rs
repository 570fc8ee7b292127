//! Narrowing: 64-bit integer work whose values provably fit in 32 bits
//! computes in 32 bits, a step of the kernel plan.
//!
//! PyTorch's `arange` gives int64, so a causal mask built from positions
//! (`arange`, comparisons, `where`) puts i64 values in an f32 kernel, and
//! 64-bit integer lanes have no vector form for products, ordered
//! comparisons or conversions to f32 on the CPU: the whole kernel would
//! run one element at a time. But positions of a 128-token sequence fit in
//! i32, and so do their sums and products here. A node is narrowed when
//! interval arithmetic over the kernel's iteration space proves that its
//! value and its integer operands' values lie in i32 (so computing in i32
//! wraps nowhere and gives the same values), and every node that reads it
//! is narrowed too or converts it (a cast): stores and other consumers see
//! the dtype they expect. Comparisons of narrowed operands compare in i32.

use std::collections::HashSet;

use kiln_ir::{BinaryOp, DType, Scalar, UnaryOp};

use super::{Expr, Kernel, KernelPlan, NodeId, Step};

/// Narrows the kernels of a plan.
pub fn run(plan: &mut KernelPlan) {
    for step in &mut plan.steps {
        if let Step::Kernel(k) = step {
            narrow(k);
        }
    }
}

/// A closed interval of integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Range {
    lo: i128,
    hi: i128,
}

impl Range {
    fn of(lo: i128, hi: i128) -> Range {
        Range { lo, hi }
    }

    /// Every value of an integer dtype.
    fn dtype(d: DType) -> Option<Range> {
        Some(match d {
            DType::Bool => Range::of(0, 1),
            DType::U8 => Range::of(0, u8::MAX as i128),
            DType::I8 => Range::of(i8::MIN as i128, i8::MAX as i128),
            DType::I16 => Range::of(i16::MIN as i128, i16::MAX as i128),
            DType::U16 => Range::of(0, u16::MAX as i128),
            DType::I32 => Range::of(i32::MIN as i128, i32::MAX as i128),
            DType::U32 => Range::of(0, u32::MAX as i128),
            DType::I64 => Range::of(i64::MIN as i128, i64::MAX as i128),
            DType::U64 => Range::of(0, u64::MAX as i128),
            _ => return None,
        })
    }

    fn within(self, other: Range) -> bool {
        other.lo <= self.lo && self.hi <= other.hi
    }

    /// The interval of `f` over the corners (exact for +, −, ×).
    fn corners(a: Range, b: Range, f: impl Fn(i128, i128) -> Option<i128>) -> Option<Range> {
        let v = [
            f(a.lo, b.lo)?,
            f(a.lo, b.hi)?,
            f(a.hi, b.lo)?,
            f(a.hi, b.hi)?,
        ];
        Some(Range::of(*v.iter().min()?, *v.iter().max()?))
    }
}

/// The range of each node's value, where it is an integer one: what the
/// node computes, clipped to its dtype's range (wrap-around makes a value
/// that leaves it unknown within it).
fn ranges(k: &Kernel) -> Vec<Option<Range>> {
    let mut out: Vec<Option<Range>> = Vec::with_capacity(k.nodes.len());
    for n in &k.nodes {
        let full = Range::dtype(n.dtype);
        let get = |id: &NodeId, out: &[Option<Range>]| out[id.index()];
        let computed = match &n.expr {
            Expr::Const(s) => match s {
                Scalar::Bool(b) => Some(Range::of(*b as i128, *b as i128)),
                Scalar::Int(i) => Some(Range::of(*i as i128, *i as i128)),
                Scalar::UInt(u) => Some(Range::of(*u as i128, *u as i128)),
                _ => None,
            },
            Expr::Iota { offset, strides } => {
                let mut r = Range::of(*offset as i128, *offset as i128);
                for (&s, &n) in strides.iter().zip(&k.space) {
                    let span = s as i128 * (n.max(1) as i128 - 1);
                    if span < 0 {
                        r.lo += span;
                    } else {
                        r.hi += span;
                    }
                }
                Some(r)
            }
            Expr::Cast { x } => get(x, &out),
            Expr::Binary { op, a, b } if !n.compute.is_floating_point() => {
                match (get(a, &out), get(b, &out)) {
                    (Some(a), Some(b)) => match op {
                        BinaryOp::Add => Range::corners(a, b, i128::checked_add),
                        BinaryOp::Sub => Range::corners(a, b, i128::checked_sub),
                        BinaryOp::Mul => Range::corners(a, b, i128::checked_mul),
                        BinaryOp::Maximum | BinaryOp::Minimum => {
                            Some(Range::of(a.lo.min(b.lo), a.hi.max(b.hi)))
                        }
                        _ => None,
                    },
                    _ => None,
                }
            }
            Expr::Unary {
                op: UnaryOp::Neg,
                x,
            } if !n.compute.is_floating_point() => get(x, &out).map(|r| Range::of(-r.hi, -r.lo)),
            Expr::Where { a, b, .. } => match (get(a, &out), get(b, &out)) {
                (Some(a), Some(b)) => Some(Range::of(a.lo.min(b.lo), a.hi.max(b.hi))),
                _ => None,
            },
            _ => None,
        };
        out.push(match (computed, full) {
            (Some(c), Some(f)) if c.within(f) => Some(c),
            (_, full) => full,
        });
    }
    out
}

/// Whether a node computes in i64 with a result that could be i32.
fn arithmetic(k: &Kernel, id: NodeId) -> bool {
    let n = k.node(id);
    let int64 = |d: DType| d == DType::I64;
    match &n.expr {
        Expr::Const(_) | Expr::Iota { .. } => int64(n.dtype),
        Expr::Binary { op, .. } => {
            let comparison = matches!(
                op,
                BinaryOp::Eq
                    | BinaryOp::Ne
                    | BinaryOp::Lt
                    | BinaryOp::Le
                    | BinaryOp::Gt
                    | BinaryOp::Ge
            );
            let wraps_the_same = matches!(
                op,
                BinaryOp::Add
                    | BinaryOp::Sub
                    | BinaryOp::Mul
                    | BinaryOp::Maximum
                    | BinaryOp::Minimum
            );
            int64(n.compute) && (comparison || (wraps_the_same && int64(n.dtype)))
        }
        Expr::Unary {
            op: UnaryOp::Neg, ..
        } => int64(n.compute) && int64(n.dtype),
        Expr::Where { .. } | Expr::Cast { .. } => int64(n.dtype),
        _ => false,
    }
}

/// Whether a node's value must keep its dtype for this consumer: anything
/// but a cast (which converts from whatever it reads) and the condition of
/// a `where` (only its truth counts).
fn needs_dtype(consumer: &Expr, operand: NodeId) -> bool {
    match consumer {
        Expr::Cast { .. } => false,
        Expr::Where { cond, a, b } => *cond != operand || *a == operand || *b == operand,
        _ => true,
    }
}

fn narrow(k: &mut Kernel) {
    let ranges = ranges(k);
    let i32_range = Range::dtype(DType::I32).expect("an integer dtype");
    let fits = |id: NodeId| ranges[id.index()].is_some_and(|r| r.within(i32_range));
    // Candidates: i64 work whose value and integer operands fit in i32.
    let mut narrowed: HashSet<NodeId> = (0..k.nodes.len())
        .map(|i| NodeId(i as u32))
        .filter(|&id| {
            let n = k.node(id);
            let comparison = n.dtype == DType::Bool;
            arithmetic(k, id)
                && (comparison || fits(id))
                && operands(&n.expr).iter().all(|&o| fits(o))
        })
        .collect();
    // Keep only nodes all of whose readers are narrowed or convert, and
    // whose i64 operands are narrowed.
    let stored: HashSet<NodeId> = k.stores.iter().map(|s| s.node).collect();
    loop {
        let before = narrowed.len();
        let snapshot = narrowed.clone();
        narrowed.retain(|&id| {
            if stored.contains(&id) && k.node(id).dtype != DType::Bool {
                return false;
            }
            let readers_ok = k.nodes.iter().enumerate().all(|(j, n)| {
                let reads = operands(&n.expr).contains(&id);
                !reads || snapshot.contains(&NodeId(j as u32)) || !needs_dtype(&n.expr, id)
            });
            // A cast converts whatever it reads; other narrowed nodes
            // need their i64 operands narrowed too.
            let node = k.node(id);
            let operands_ok = matches!(node.expr, Expr::Cast { .. })
                || operands(&node.expr)
                    .iter()
                    .all(|o| k.node(*o).dtype != DType::I64 || snapshot.contains(o));
            readers_ok && operands_ok
        });
        if narrowed.len() == before {
            break;
        }
    }
    for &id in &narrowed {
        let n = &mut k.nodes[id.index()];
        if n.dtype == DType::I64 {
            n.dtype = DType::I32;
        }
        if n.compute == DType::I64 {
            n.compute = DType::I32;
        }
    }
    // A cast reading a narrowed value now converts from i32.
    for i in 0..k.nodes.len() {
        if let Expr::Cast { x } = k.nodes[i].expr {
            if narrowed.contains(&x) && k.nodes[i].compute == DType::I64 {
                k.nodes[i].compute = DType::I32;
            }
        }
    }
}

fn operands(e: &Expr) -> Vec<NodeId> {
    let mut e = e.clone();
    e.operands_mut().into_iter().map(|id| *id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Access, Node, Store};
    use kiln_ir::DType::*;

    fn node(expr: Expr, dtype: DType, compute: DType) -> Node {
        Node {
            expr,
            dtype,
            compute,
        }
    }

    /// A causal mask over [8, 128]: positions from iota, compared, and a
    /// `where` of f32 constants stored.
    fn mask_kernel(rows: i64) -> Kernel {
        Kernel {
            name: "k0".into(),
            space: vec![rows, 128],
            outer_rank: 2,
            args: vec![],
            accesses: vec![Access {
                arg: 0,
                dtype: F32,
                offset: 0,
                strides: vec![128, 1],
            }],
            nodes: vec![
                node(
                    Expr::Iota {
                        offset: 0,
                        strides: vec![0, 1],
                    },
                    I64,
                    I64,
                ),
                node(
                    Expr::Iota {
                        offset: 0,
                        strides: vec![1, 0],
                    },
                    I64,
                    I64,
                ),
                node(
                    Expr::Binary {
                        op: BinaryOp::Le,
                        a: NodeId(0),
                        b: NodeId(1),
                    },
                    Bool,
                    I64,
                ),
                node(Expr::Const(Scalar::Float(0.0)), F32, F32),
                node(Expr::Const(Scalar::Float(-1.0)), F32, F32),
                node(
                    Expr::Where {
                        cond: NodeId(2),
                        a: NodeId(3),
                        b: NodeId(4),
                    },
                    F32,
                    F32,
                ),
            ],
            stores: vec![Store {
                node: NodeId(5),
                access: 0,
            }],
        }
    }

    #[test]
    fn positions_of_a_sequence_compare_in_i32() {
        let mut k = mask_kernel(8);
        narrow(&mut k);
        assert_eq!(k.nodes[0].dtype, I32);
        assert_eq!(k.nodes[1].dtype, I32);
        assert_eq!((k.nodes[2].dtype, k.nodes[2].compute), (Bool, I32));
    }

    #[test]
    fn values_beyond_i32_stay_i64() {
        let mut k = mask_kernel(8);
        // Positions scaled past 2^31.
        k.nodes[1] = node(
            Expr::Iota {
                offset: 1 << 40,
                strides: vec![1, 0],
            },
            I64,
            I64,
        );
        narrow(&mut k);
        assert_eq!(k.nodes[1].dtype, I64);
        assert_eq!(k.nodes[2].compute, I64);
        assert_eq!(
            k.nodes[0].dtype, I64,
            "the comparison keeps its operands wide"
        );
    }

    #[test]
    fn stored_integers_keep_their_dtype() {
        let mut k = mask_kernel(8);
        k.accesses[0].dtype = I64;
        k.stores[0].node = NodeId(0);
        narrow(&mut k);
        assert_eq!(k.nodes[0].dtype, I64);
    }
}
