//! The optimizer's rewrites. Each says in its justification why it never
//! changes a result (bit for bit, NaN payloads aside), and which
//! look-alikes it refuses because they would: `x + 0` is not `x` (it turns
//! -0.0 into 0.0), `x * 0` is not `0` (NaN and inf), nothing reassociates
//! floats.
//!
//! A rule looks at one e-class and proposes terms equal to it. Every
//! proposed term is typed with Kiln's inference before it is added, and
//! must have the class's own type, so no rule can change a dtype, a shape
//! or a device.

use egg::Id;
use kiln_ir::{BinaryOp, DType, Op, Scalar, TensorType, UnaryOp};

use super::fold::{ConstantFolder, FoldArg};
use super::lang::{KGraph, KNode, NodeOp};

/// A term to build: an existing e-class, a literal, or an op over terms.
#[derive(Clone, Debug)]
pub enum Term {
    Class(Id),
    Lit(Scalar),
    Node(Op, Vec<Term>),
}

/// A rewrite rule.
pub struct Rule {
    pub name: &'static str,
    /// Why the rewrite never changes a result.
    pub justification: &'static str,
    pub find: fn(&Cx, Id) -> Vec<Term>,
}

/// What rules read: the e-graph, and the constant folder if there is one.
pub struct Cx<'a> {
    pub g: &'a KGraph,
    pub fold: Option<&'a dyn ConstantFolder>,
}

impl Cx<'_> {
    fn nodes(&self, id: Id) -> &[KNode] {
        &self.g[id].nodes
    }

    fn ty(&self, id: Id) -> Option<&TensorType> {
        self.g[id].data.ty.as_ref()
    }

    /// The constant a class holds: a literal, or a `full` tensor's value.
    fn constant(&self, id: Id) -> Option<Scalar> {
        let d = &self.g[id].data;
        d.literal.or(d.splat)
    }

    /// The nodes of `id` with op `op`-like (per `pick`), with their children.
    fn find<'s, T>(
        &'s self,
        id: Id,
        pick: impl Fn(&Op) -> Option<T> + 's,
    ) -> impl Iterator<Item = (T, &'s [Id])> + 's {
        self.nodes(id).iter().filter_map(move |n| {
            n.kiln_op()
                .and_then(&pick)
                .map(|t| (t, n.children.as_slice()))
        })
    }

    fn same_type(&self, a: Id, b: Id) -> bool {
        matches!((self.ty(a), self.ty(b)), (Some(x), Some(y)) if x == y)
    }

    fn dtype(&self, id: Id) -> Option<DType> {
        self.ty(id).map(|t| t.dtype)
    }
}

fn is_one(s: Scalar) -> bool {
    match s {
        Scalar::Bool(b) => b,
        Scalar::Int(i) => i == 1,
        Scalar::UInt(u) => u == 1,
        Scalar::Float(f) => f == 1.0,
        Scalar::Complex(re, im) => re == 1.0 && im == 0.0,
    }
}

/// A zero that, added to any float, gives it back: -0.0.
fn is_negative_zero(s: Scalar) -> bool {
    matches!(s, Scalar::Float(f) if f == 0.0 && f.is_sign_negative())
}

/// A zero that becomes +0.0 in a float computation (ints have one zero).
fn is_positive_zero(s: Scalar) -> bool {
    match s {
        Scalar::Bool(b) => !b,
        Scalar::Int(i) => i == 0,
        Scalar::UInt(u) => u == 0,
        Scalar::Float(f) => f == 0.0 && f.is_sign_positive(),
        Scalar::Complex(..) => false,
    }
}

fn binary(op: BinaryOp) -> impl Fn(&Op) -> Option<()> {
    move |o| matches!(o, Op::Binary { op: b } if *b == op).then_some(())
}

fn unary(op: UnaryOp) -> impl Fn(&Op) -> Option<()> {
    move |o| matches!(o, Op::Unary { op: u } if *u == op).then_some(())
}

/// `x op c → x` for each node `op(x, c)` (and `op(c, x)` when `commutes`)
/// where `c` passes `neutral` for `x`'s dtype and the result has `x`'s type.
fn neutral_operand(
    cx: &Cx,
    id: Id,
    op: BinaryOp,
    commutes: bool,
    neutral: fn(Scalar, DType) -> bool,
) -> Vec<Term> {
    let mut out = Vec::new();
    for ((), ch) in cx.find(id, binary(op)) {
        let pairs: &[(usize, usize)] = if commutes {
            &[(0, 1), (1, 0)]
        } else {
            &[(0, 1)]
        };
        for &(x, c) in pairs {
            let (x, c) = (ch[x], ch[c]);
            let ok = cx.same_type(x, id)
                && matches!((cx.constant(c), cx.dtype(x)), (Some(s), Some(d)) if neutral(s, d));
            if ok {
                out.push(Term::Class(x));
            }
        }
    }
    out
}

fn mul_one(cx: &Cx, id: Id) -> Vec<Term> {
    neutral_operand(cx, id, BinaryOp::Mul, true, |s, d| {
        is_one(s) && !d.is_complex()
    })
}

fn div_one(cx: &Cx, id: Id) -> Vec<Term> {
    neutral_operand(cx, id, BinaryOp::Div, false, |s, d| {
        is_one(s) && !d.is_complex()
    })
}

fn add_zero(cx: &Cx, id: Id) -> Vec<Term> {
    neutral_operand(cx, id, BinaryOp::Add, true, |s, d| {
        if d.is_floating_point() || d.is_complex() {
            is_negative_zero(s) && !d.is_complex()
        } else {
            is_positive_zero(s)
        }
    })
}

fn sub_zero(cx: &Cx, id: Id) -> Vec<Term> {
    neutral_operand(cx, id, BinaryOp::Sub, false, |s, d| {
        is_positive_zero(s) && !d.is_complex()
    })
}

fn neg_neg(cx: &Cx, id: Id) -> Vec<Term> {
    let mut out = Vec::new();
    for ((), ch) in cx.find(id, unary(UnaryOp::Neg)) {
        for ((), inner) in cx.find(ch[0], unary(UnaryOp::Neg)) {
            if cx.same_type(inner[0], id) {
                out.push(Term::Class(inner[0]));
            }
        }
    }
    out
}

/// `f(f(x, y), y) → f(x, y)` and `f(x, f(x, y)) → f(x, y)` for `f` maximum
/// or minimum.
fn min_max_absorb(cx: &Cx, id: Id) -> Vec<Term> {
    let same = |a: Id, b: Id| cx.g.find(a) == cx.g.find(b);
    let mut out = Vec::new();
    for op in [BinaryOp::Maximum, BinaryOp::Minimum] {
        for ((), ch) in cx.find(id, binary(op)) {
            let (x, y) = (ch[0], ch[1]);
            let inner_left = cx.find(x, binary(op)).any(|((), i)| same(i[1], y));
            let inner_right = cx.find(y, binary(op)).any(|((), i)| same(i[0], x));
            if inner_left && cx.same_type(x, id) {
                out.push(Term::Class(x));
            }
            if inner_right && cx.same_type(y, id) {
                out.push(Term::Class(y));
            }
        }
    }
    out
}

fn cast_dtype(o: &Op) -> Option<DType> {
    match o {
        Op::Cast { dtype } => Some(*dtype),
        _ => None,
    }
}

fn cast_same(cx: &Cx, id: Id) -> Vec<Term> {
    cx.find(id, cast_dtype)
        .filter(|(d, ch)| cx.dtype(ch[0]) == Some(*d))
        .map(|(_, ch)| Term::Class(ch[0]))
        .collect()
}

fn cast_chain(cx: &Cx, id: Id) -> Vec<Term> {
    let mut out = Vec::new();
    for (outer, ch) in cx.find(id, cast_dtype) {
        for (inner, x) in cx.find(ch[0], cast_dtype) {
            let Some(from) = cx.dtype(x[0]) else { continue };
            if from.cast_through_is_exact(inner, outer) {
                out.push(Term::Node(
                    Op::Cast { dtype: outer },
                    vec![Term::Class(x[0])],
                ));
            }
        }
    }
    out
}

/// The permutation a view op applies, for ops that only permute dims.
fn permutation(o: &Op, rank: usize) -> Option<Vec<i64>> {
    let wrap = |d: i64| if d < 0 { d + rank as i64 } else { d };
    match o {
        Op::Permute { dims } => Some(dims.iter().map(|&d| wrap(d)).collect()),
        Op::Transpose { dim0, dim1 } if rank > 0 => {
            let mut p: Vec<i64> = (0..rank as i64).collect();
            p.swap(wrap(*dim0) as usize, wrap(*dim1) as usize);
            Some(p)
        }
        Op::T if rank == 2 => Some(vec![1, 0]),
        Op::T => Some((0..rank as i64).collect()),
        _ => None,
    }
}

fn rank_of(cx: &Cx, id: Id) -> usize {
    cx.ty(id).map_or(0, |t| t.rank())
}

fn permute_chain(cx: &Cx, id: Id) -> Vec<Term> {
    let mut out = Vec::new();
    let rank = rank_of(cx, id);
    for (outer, ch) in cx.find(id, |o| permutation(o, rank)) {
        if outer.iter().enumerate().all(|(i, &d)| d == i as i64) {
            out.push(Term::Class(ch[0]));
            continue;
        }
        for (inner, x) in cx.find(ch[0], |o| permutation(o, rank)) {
            // y[i] = inner_out[outer[i]] = x[inner[outer[i]]].
            let dims: Vec<i64> = outer.iter().map(|&o| inner[o as usize]).collect();
            out.push(Term::Node(Op::Permute { dims }, vec![Term::Class(x[0])]));
        }
    }
    out
}

/// Ops that keep the logical order of elements and change only the shape.
fn reshapes(o: &Op) -> Option<()> {
    matches!(
        o,
        Op::Reshape { .. }
            | Op::View { .. }
            | Op::Flatten { .. }
            | Op::Squeeze { .. }
            | Op::Unsqueeze { .. }
    )
    .then_some(())
}

fn reshape_chain(cx: &Cx, id: Id) -> Vec<Term> {
    let Some(shape) = cx.ty(id).map(|t| t.shape.clone()) else {
        return vec![];
    };
    let mut out = Vec::new();
    for ((), ch) in cx.find(id, reshapes) {
        if cx.ty(ch[0]).is_some_and(|t| t.shape == shape) {
            out.push(Term::Class(ch[0]));
        }
        for ((), x) in cx.find(ch[0], reshapes) {
            out.push(Term::Node(
                Op::Reshape {
                    shape: shape.clone(),
                },
                vec![Term::Class(x[0])],
            ));
        }
    }
    out
}

fn expand_chain(cx: &Cx, id: Id) -> Vec<Term> {
    let Some(shape) = cx.ty(id).map(|t| t.shape.clone()) else {
        return vec![];
    };
    let is_expand = |o: &Op| matches!(o, Op::Expand { .. }).then_some(());
    let mut out = Vec::new();
    for ((), ch) in cx.find(id, is_expand) {
        if cx.ty(ch[0]).is_some_and(|t| t.shape == shape) {
            out.push(Term::Class(ch[0]));
        }
        for ((), x) in cx.find(ch[0], is_expand) {
            out.push(Term::Node(
                Op::Expand {
                    shape: shape.clone(),
                },
                vec![Term::Class(x[0])],
            ));
        }
    }
    out
}

/// Views that move elements around without computing: pointwise ops
/// commute with them.
fn is_view(o: &Op) -> bool {
    matches!(
        o,
        Op::Permute { .. }
            | Op::Transpose { .. }
            | Op::T
            | Op::Reshape { .. }
            | Op::View { .. }
            | Op::Flatten { .. }
            | Op::Squeeze { .. }
            | Op::Unsqueeze { .. }
            | Op::Expand { .. }
            | Op::Slice { .. }
            | Op::Select { .. }
    )
}

/// Pointwise ops of one tensor (and literals): they commute with views.
fn pointwise_of_one(cx: &Cx, op: &Op, ch: &[Id]) -> Option<usize> {
    let tensors: Vec<usize> = (0..ch.len()).filter(|&i| cx.ty(ch[i]).is_some()).collect();
    let pointwise = matches!(op, Op::Unary { .. } | Op::Cast { .. } | Op::Binary { .. });
    (pointwise && tensors.len() == 1).then(|| tensors[0])
}

fn rebuild_with(ch: &[Id], at: usize, term: Term) -> Vec<Term> {
    ch.iter()
        .enumerate()
        .map(|(i, &c)| {
            if i == at {
                term.clone()
            } else {
                Term::Class(c)
            }
        })
        .collect()
}

/// `f(view(x)) → view(f(x))` and back, for pointwise `f` of one tensor.
fn pointwise_through_view(cx: &Cx, id: Id) -> Vec<Term> {
    let mut out = Vec::new();
    for node in cx.nodes(id) {
        let Some(op) = node.kiln_op() else { continue };
        let ch = &node.children;
        if let Some(t) = pointwise_of_one(cx, op, ch) {
            for inner in cx.nodes(ch[t]) {
                let Some(view) = inner.kiln_op().filter(|o| is_view(o)) else {
                    continue;
                };
                let f = Term::Node(
                    op.clone(),
                    rebuild_with(ch, t, Term::Class(inner.children[0])),
                );
                out.push(Term::Node(view.clone(), vec![f]));
            }
        }
        if is_view(op) {
            for inner in cx.nodes(ch[0]) {
                let Some(f) = inner.kiln_op() else { continue };
                let Some(t) = pointwise_of_one(cx, f, &inner.children) else {
                    continue;
                };
                let v = Term::Node(op.clone(), vec![Term::Class(inner.children[t])]);
                out.push(Term::Node(f.clone(), rebuild_with(&inner.children, t, v)));
            }
        }
    }
    out
}

/// `expand(x) op y → x op y` when broadcasting gives the same result.
fn broadcast_expand(cx: &Cx, id: Id) -> Vec<Term> {
    let mut out = Vec::new();
    for node in cx.nodes(id) {
        let Some(op @ (Op::Binary { .. } | Op::Where)) = node.kiln_op() else {
            continue;
        };
        for (i, &c) in node.children.iter().enumerate() {
            for inner in cx.nodes(c) {
                if let Some(Op::Expand { .. }) = inner.kiln_op() {
                    out.push(Term::Node(
                        op.clone(),
                        rebuild_with(&node.children, i, Term::Class(inner.children[0])),
                    ));
                }
            }
        }
    }
    out
}

/// A pointwise op of constants is a constant, computed with the reference
/// interpreter's own arithmetic.
fn constant_fold(cx: &Cx, id: Id) -> Vec<Term> {
    let (Some(fold), Some(ty)) = (cx.fold, cx.ty(id)) else {
        return vec![];
    };
    if cx.g[id].data.splat.is_some() {
        return vec![];
    }
    for node in cx.nodes(id) {
        let Some(op) = node.kiln_op() else { continue };
        if !matches!(
            op,
            Op::Unary { .. } | Op::Binary { .. } | Op::Where | Op::Cast { .. }
        ) {
            continue;
        }
        let args: Option<Vec<FoldArg>> = node
            .children
            .iter()
            .map(|&c| {
                let d = &cx.g[c].data;
                match (d.literal, d.splat, &d.ty) {
                    (Some(s), _, _) => Some(FoldArg::Literal(s)),
                    (_, Some(s), Some(t)) => Some(FoldArg::Splat(s, t.dtype, t.rank())),
                    _ => None,
                }
            })
            .collect();
        let Some(args) = args else { continue };
        if let Some(value) = fold.fold(op, &args, ty) {
            return vec![Term::Node(
                Op::Full {
                    shape: ty.shape.clone(),
                    value,
                    dtype: Some(ty.dtype),
                    device: Some(ty.device),
                },
                vec![],
            )];
        }
    }
    vec![]
}

/// Every rule, in the order they are tried.
pub fn rules() -> Vec<Rule> {
    vec![
        Rule {
            name: "mul-one",
            justification: "x·1 = x exactly in IEEE arithmetic (and -0·1 = -0); \
                            not for complex x, where (a+bi)(1+0i) computes b·0",
            find: mul_one,
        },
        Rule {
            name: "div-one",
            justification: "x/1 = x exactly (IEEE); not for complex x",
            find: div_one,
        },
        Rule {
            name: "add-neg-zero",
            justification: "x + (-0.0) = x for every float x, -0.0 included; \
                            x + 0.0 is not (-0.0 + 0.0 = 0.0); integers have one zero",
            find: add_zero,
        },
        Rule {
            name: "sub-zero",
            justification: "x - 0.0 = x for every float x (-0.0 - 0.0 = -0.0)",
            find: sub_zero,
        },
        Rule {
            name: "neg-neg",
            justification: "negation flips the sign bit (floats) or wraps (integers): \
                            twice is the identity",
            find: neg_neg,
        },
        Rule {
            name: "min-max-absorb",
            justification: "maximum and minimum return one of their operands (or NaN): \
                            if m = f(x, y) is x, f(x, y) is x again; if it is y, f(y, y) = y. \
                            Not f(f(x, y), x): with -0.0 and 0.0, f(y, x) may differ",
            find: min_max_absorb,
        },
        Rule {
            name: "cast-same",
            justification: "a cast to a tensor's own dtype copies its values",
            find: cast_same,
        },
        Rule {
            name: "cast-chain",
            justification: "cast(cast(x, a), b) = cast(x, b) when a holds every value of \
                            x's dtype exactly and b converts them as from x's dtype \
                            (DType::cast_through_is_exact)",
            find: cast_chain,
        },
        Rule {
            name: "permute-chain",
            justification: "permutations (transpose, t) compose; the identity permutation \
                            is the tensor itself",
            find: permute_chain,
        },
        Rule {
            name: "reshape-chain",
            justification: "reshape, view, flatten, squeeze and unsqueeze keep logical \
                            order: a chain of them is one reshape, to its own shape none",
            find: reshape_chain,
        },
        Rule {
            name: "expand-chain",
            justification: "expanding an expansion is one expansion; to its own shape none",
            find: expand_chain,
        },
        Rule {
            name: "pointwise-through-view",
            justification: "a pointwise op of one tensor computes each element alone, so it \
                            commutes with any view (the extractor keeps the cheaper order)",
            find: pointwise_through_view,
        },
        Rule {
            name: "broadcast-expand",
            justification: "a pointwise op broadcasts its operands itself: an explicit expand \
                            that broadcasting would do gives the same elements",
            find: broadcast_expand,
        },
        Rule {
            name: "constant-fold",
            justification: "a pointwise op of constants, computed by the reference interpreter",
            find: constant_fold,
        },
    ]
}

/// Whether a node is a parameter (data in memory, not computed).
pub fn is_param(node: &KNode) -> bool {
    matches!(node.op, NodeOp::Param(..))
}
