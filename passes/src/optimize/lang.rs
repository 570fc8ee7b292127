//! Kiln's ops as an egg language, and the analysis that types every e-class.
//!
//! An e-node is a Kiln op (with its attributes, so `cast` to f16 and to f32
//! are different operators), a scalar literal operand, or a parameter of
//! the function. The analysis gives each e-class the type Kiln's inference
//! gives its nodes (shape, dtype, device: layouts are recomputed after
//! extraction) and, for literals and `full` tensors, the constant.

use std::fmt;
use std::hash::Hash;
use std::sync::Arc;

use egg::{Analysis, DidMerge, EGraph, Id, Language};
use kiln_ir::infer::{Arg, InferCtx, infer};
use kiln_ir::{DType, Op, Scalar, TensorType};

/// A Kiln op with its attributes and `out_dtype`: ops compare and hash by
/// their structure (float attributes by their bits).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpKey {
    /// The op.
    pub op: Arc<Op>,
    /// Its `out_dtype`.
    pub out_dtype: Option<DType>,
}

impl OpKey {
    /// The key of `op` written to `out_dtype`.
    pub fn new(op: Op, out_dtype: Option<DType>) -> OpKey {
        OpKey {
            op: Arc::new(op),
            out_dtype,
        }
    }
}

/// What an e-node is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeOp {
    /// Parameter `index` of the function (named for explanations).
    Param(u32, Arc<str>),
    /// A scalar literal operand.
    Lit(Scalar),
    /// An absent optional operand (`none`).
    Absent,
    /// An instruction. With several results, its e-class stands for all
    /// of them together, and [`NodeOp::Result`] picks one.
    Inst(OpKey),
    /// Result `index` of its one child, an instruction with several.
    Result(u32),
}

/// An e-node: an op and the e-classes of its operands.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KNode {
    pub op: NodeOp,
    pub children: Vec<Id>,
}

impl KNode {
    pub fn inst(op: Op, children: Vec<Id>) -> KNode {
        KNode {
            op: NodeOp::Inst(OpKey::new(op, None)),
            children,
        }
    }

    /// A literal node.
    pub fn lit(s: Scalar) -> KNode {
        KNode {
            op: NodeOp::Lit(s),
            children: vec![],
        }
    }

    /// An absent operand.
    pub fn absent() -> KNode {
        KNode {
            op: NodeOp::Absent,
            children: vec![],
        }
    }

    /// Result `index` of a several-result instruction's class.
    pub fn result(index: usize, of: Id) -> KNode {
        KNode {
            op: NodeOp::Result(index as u32),
            children: vec![of],
        }
    }

    /// The Kiln op, for instruction nodes.
    pub fn kiln_op(&self) -> Option<&Op> {
        match &self.op {
            NodeOp::Inst(k) => Some(&k.op),
            _ => None,
        }
    }
}

impl Language for KNode {
    type Discriminant = NodeOp;

    fn discriminant(&self) -> NodeOp {
        self.op.clone()
    }

    fn matches(&self, other: &Self) -> bool {
        self.op == other.op && self.children.len() == other.children.len()
    }

    fn children(&self) -> &[Id] {
        &self.children
    }

    fn children_mut(&mut self) -> &mut [Id] {
        &mut self.children
    }
}

impl fmt::Display for KNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.op {
            NodeOp::Param(_, name) => write!(f, "%{name}"),
            NodeOp::Lit(l) => write!(f, "{l}"),
            NodeOp::Absent => f.write_str("none"),
            NodeOp::Result(i) => write!(f, "result{i}"),
            NodeOp::Inst(k) => {
                f.write_str(k.op.name())?;
                let attrs = k.op.attrs();
                if !attrs.is_empty() || k.out_dtype.is_some() {
                    f.write_str("{")?;
                    for (i, (name, value)) in attrs.iter().enumerate() {
                        if i > 0 {
                            f.write_str(",")?;
                        }
                        write!(f, "{name}={}", value.to_string().replace(' ', ""))?;
                    }
                    if let Some(d) = k.out_dtype {
                        write!(
                            f,
                            "{}out_dtype={d}",
                            if attrs.is_empty() { "" } else { "," }
                        )?;
                    }
                    f.write_str("}")?;
                }
                Ok(())
            }
        }
    }
}

/// egg's explanations need a parser for the language they print; Kiln's
/// terms are printed for people and never parsed back.
#[derive(Debug)]
pub struct NotParsed;

impl fmt::Display for NotParsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Kiln e-nodes are not parsed from text")
    }
}

impl egg::FromOp for KNode {
    type Error = NotParsed;

    fn from_op(_op: &str, _children: Vec<Id>) -> Result<Self, NotParsed> {
        Err(NotParsed)
    }
}

/// What the analysis knows of an e-class.
#[derive(Clone, Debug, PartialEq)]
pub struct Data {
    /// The type of its tensors (`None` for literals, absent operands and
    /// instructions with several results).
    pub ty: Option<TensorType>,
    /// The types of an instruction's several results.
    pub results: Option<Vec<TensorType>>,
    /// An absent optional operand.
    pub absent: bool,
    /// A literal's value.
    pub literal: Option<Scalar>,
    /// The value every element has, for `full` tensors.
    pub splat: Option<Scalar>,
}

/// Types e-classes with Kiln's inference.
#[derive(Clone, Debug)]
pub struct Typing {
    pub ctx: InferCtx,
    pub params: Vec<TensorType>,
}

/// The inferred types of a node's results from its children's data
/// (`None` when inference rejects it: rules never add such nodes).
pub fn node_types(egraph: &EGraph<KNode, Typing>, node: &KNode) -> Option<Vec<TensorType>> {
    match &node.op {
        NodeOp::Param(i, _) => egraph
            .analysis
            .params
            .get(*i as usize)
            .cloned()
            .map(|t| vec![t]),
        NodeOp::Lit(_) | NodeOp::Absent => None,
        NodeOp::Result(i) => {
            let tuple = egraph[*node.children.first()?].data.results.as_ref()?;
            tuple.get(*i as usize).cloned().map(|t| vec![t])
        }
        NodeOp::Inst(k) => {
            let datas: Vec<&Data> = node.children.iter().map(|c| &egraph[*c].data).collect();
            let mut args = Vec::with_capacity(datas.len());
            for d in &datas {
                args.push(match (&d.ty, d.literal, d.absent) {
                    (Some(t), _, _) => Arg::Tensor(t),
                    (None, Some(s), _) => Arg::Scalar(s),
                    (None, None, true) => Arg::None,
                    _ => return None,
                });
            }
            infer(&k.op, &args, k.out_dtype, &egraph.analysis.ctx)
                .ok()
                .map(|i| i.results)
        }
    }
}

impl Analysis<KNode> for Typing {
    type Data = Data;

    fn make(egraph: &mut EGraph<KNode, Self>, enode: &KNode, _id: Id) -> Data {
        let literal = match &enode.op {
            NodeOp::Lit(l) => Some(*l),
            _ => None,
        };
        let splat = match enode.kiln_op() {
            Some(Op::Full { value, .. }) => Some(*value),
            _ => None,
        };
        let types = node_types(egraph, enode);
        let (ty, results) = match types {
            Some(mut t) if t.len() == 1 => (t.pop(), None),
            Some(t) => (None, Some(t)),
            None => (None, None),
        };
        Data {
            ty,
            results,
            absent: matches!(enode.op, NodeOp::Absent),
            literal,
            splat,
        }
    }

    fn merge(&mut self, a: &mut Data, b: Data) -> DidMerge {
        // Rules only union nodes of one type; keep what is known.
        let mut changed = false;
        if a.ty.is_none() && b.ty.is_some() {
            a.ty = b.ty;
            changed = true;
        }
        if a.results.is_none() && b.results.is_some() {
            a.results = b.results;
            changed = true;
        }
        if a.splat.is_none() && b.splat.is_some() {
            a.splat = b.splat;
            changed = true;
        }
        DidMerge(changed, true)
    }
}

pub type KGraph = EGraph<KNode, Typing>;
