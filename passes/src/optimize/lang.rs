//! Kiln's ops as an egg language, and the analysis that types every e-class.
//!
//! An e-node is a Kiln op (with its attributes, so `cast` to f16 and to f32
//! are different operators), a scalar literal operand, or a parameter of
//! the function. The analysis gives each e-class the type Kiln's inference
//! gives its nodes (shape, dtype, device: layouts are recomputed after
//! extraction) and, for literals and `full` tensors, the constant.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use egg::{Analysis, DidMerge, EGraph, Id, Language};
use kiln_ir::infer::{Arg, InferCtx, infer};
use kiln_ir::{DType, Op, Scalar, TensorType};

/// A Kiln op with its attributes and `out_dtype`, compared by a canonical
/// text (ops hold floats, which have no `Eq`).
#[derive(Clone, Debug)]
pub struct OpKey {
    key: Arc<str>,
    pub op: Arc<Op>,
    pub out_dtype: Option<DType>,
}

impl OpKey {
    pub fn new(op: Op, out_dtype: Option<DType>) -> OpKey {
        OpKey {
            key: format!("{op:?}/{out_dtype:?}").into(),
            op: Arc::new(op),
            out_dtype,
        }
    }
}

impl PartialEq for OpKey {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for OpKey {}

impl Hash for OpKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key.hash(state)
    }
}

impl PartialOrd for OpKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OpKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

/// A scalar literal, compared by its bits (so -0.0 and 0.0 differ).
#[derive(Clone, Copy, Debug)]
pub struct Lit(pub Scalar);

impl Lit {
    fn bits(&self) -> (u8, u64, u64) {
        match self.0 {
            Scalar::Bool(b) => (0, b as u64, 0),
            Scalar::Int(i) => (1, i as u64, 0),
            Scalar::UInt(u) => (2, u, 0),
            Scalar::Float(f) => (3, f.to_bits(), 0),
            Scalar::Complex(re, im) => (4, re.to_bits(), im.to_bits()),
        }
    }
}

impl PartialEq for Lit {
    fn eq(&self, other: &Self) -> bool {
        self.bits() == other.bits()
    }
}

impl Eq for Lit {}

impl Hash for Lit {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.bits().hash(state)
    }
}

impl PartialOrd for Lit {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Lit {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.bits().cmp(&other.bits())
    }
}

/// What an e-node is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeOp {
    /// Parameter `index` of the function (named for explanations).
    Param(u32, Arc<str>),
    Lit(Lit),
    Inst(OpKey),
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

    pub fn lit(s: Scalar) -> KNode {
        KNode {
            op: NodeOp::Lit(Lit(s)),
            children: vec![],
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
            NodeOp::Lit(l) => write!(f, "{}", l.0),
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
    /// The type of its tensors (`None` for literals).
    pub ty: Option<TensorType>,
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

/// The inferred type of a node from its children's data (`None` when
/// inference rejects it: rules never add such nodes).
pub fn node_type(egraph: &EGraph<KNode, Typing>, node: &KNode) -> Option<TensorType> {
    match &node.op {
        NodeOp::Param(i, _) => egraph.analysis.params.get(*i as usize).cloned(),
        NodeOp::Lit(_) => None,
        NodeOp::Inst(k) => {
            let datas: Vec<&Data> = node.children.iter().map(|c| &egraph[*c].data).collect();
            let mut args = Vec::with_capacity(datas.len());
            for d in &datas {
                args.push(match (&d.ty, d.literal) {
                    (Some(t), _) => Arg::Tensor(t),
                    (None, Some(s)) => Arg::Scalar(s),
                    _ => return None,
                });
            }
            infer(&k.op, &args, k.out_dtype, &egraph.analysis.ctx)
                .ok()
                .map(|i| i.ty)
        }
    }
}

impl Analysis<KNode> for Typing {
    type Data = Data;

    fn make(egraph: &mut EGraph<KNode, Self>, enode: &KNode, _id: Id) -> Data {
        let literal = match &enode.op {
            NodeOp::Lit(l) => Some(l.0),
            _ => None,
        };
        let splat = match enode.kiln_op() {
            Some(Op::Full { value, .. }) => Some(*value),
            _ => None,
        };
        Data {
            ty: node_type(egraph, enode),
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
        if a.splat.is_none() && b.splat.is_some() {
            a.splat = b.splat;
            changed = true;
        }
        DidMerge(changed, true)
    }
}

pub type KGraph = EGraph<KNode, Typing>;
