//! Random well-typed Kiln programs for property tests.
//!
//! A [`Recipe`] is plain data (inputs and steps of small numbers), so
//! proptest can shrink it; [`Recipe::build`] turns it into a verified
//! module deterministically. Each step picks an op family, operands from the
//! values built so far, and attributes derived from its seed and the
//! operands' shapes; a step that PyTorch's rules reject (inference fails) is
//! skipped, so every built program is well typed and every kind of op,
//! dtype, shape and layout is reachable.

use kiln::graph::{FuncBuilder, Operand};
use kiln::infer::InferCtx;
use kiln::ops::attrs::ScatterReduce;
use kiln::ops::{Attrs, SlotKind};
use kiln::{
    ArgReduceOp, BinaryOp, DType, DefaultDType, F64, LossReduction, MemoryFormat, Module, Op,
    ReduceOp, Scalar, TensorType, TypeLayout, UnaryOp, ValueId,
};
use proptest::prelude::*;

/// How an input is laid out in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputLayout {
    Contiguous,
    /// channels_last for rank 4 (else contiguous).
    ChannelsLast,
    /// Dense, with the dims stored in reverse order (a transpose).
    Reversed,
    /// Every other element of a larger buffer along the last dim.
    Strided2,
    /// A broadcast (stride 0) along the first dim.
    Broadcast0,
}

#[derive(Clone, Debug, PartialEq)]
pub struct InputSpec {
    pub shape: Vec<i64>,
    pub dtype: DType,
    pub layout: InputLayout,
}

impl InputSpec {
    pub fn strides(&self) -> Vec<i64> {
        let rank = self.shape.len();
        let dense_in = |order: &[usize]| {
            let mut strides = vec![0; rank];
            let mut next = 1;
            for &d in order.iter().rev() {
                strides[d] = next;
                next *= self.shape[d].max(1);
            }
            strides
        };
        let row_major: Vec<usize> = (0..rank).collect();
        match self.layout {
            InputLayout::ChannelsLast if rank == 4 => {
                MemoryFormat::ChannelsLast.strides(&self.shape).unwrap()
            }
            InputLayout::Reversed => dense_in(&row_major.iter().rev().copied().collect::<Vec<_>>()),
            InputLayout::Strided2 if rank > 0 => {
                let mut s = dense_in(&row_major);
                for x in &mut s {
                    *x *= 2;
                }
                s
            }
            InputLayout::Broadcast0 if rank > 0 => {
                let mut s = dense_in(&row_major);
                s[0] = 0;
                s
            }
            _ => dense_in(&row_major),
        }
    }

    pub fn tensor_type(&self) -> TensorType {
        TensorType::new(self.shape.clone(), self.dtype)
            .with_layout(TypeLayout::Strided(self.strides()))
    }
}

/// One step: an op family, two operand picks and an attribute seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub family: u8,
    pub a: u8,
    pub b: u8,
    pub seed: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Recipe {
    pub inputs: Vec<InputSpec>,
    pub steps: Vec<Step>,
    pub outputs: u8,
    pub default_dtype: DefaultDType,
}

/// Which dtypes programs draw from.
#[derive(Clone, Copy, Debug)]
pub enum DTypes {
    /// Every dtype of IR.md's table.
    All,
    /// Those the interpreter and backends compute on (no shell dtypes).
    Computable,
}

fn dtype_strategy(which: DTypes) -> BoxedStrategy<DType> {
    let all: Vec<DType> = match which {
        DTypes::All => DType::ALL.to_vec(),
        DTypes::Computable => DType::ALL.into_iter().filter(|d| !d.is_shell()).collect(),
    };
    // Weight the common dtypes so most programs compute something.
    prop_oneof![
        3 => prop::sample::select(vec![DType::F32, DType::F64, DType::I32, DType::I64, DType::Bool]),
        2 => prop::sample::select(all),
    ]
    .boxed()
}

fn shape_strategy(max_rank: usize, max_dim: i64) -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(
        prop_oneof![6 => 1i64..max_dim + 1, 1 => Just(0i64), 2 => Just(1i64)],
        0..=max_rank,
    )
}

fn layout_strategy() -> impl Strategy<Value = InputLayout> {
    prop_oneof![
        6 => Just(InputLayout::Contiguous),
        2 => Just(InputLayout::ChannelsLast),
        1 => Just(InputLayout::Reversed),
        1 => Just(InputLayout::Strided2),
        1 => Just(InputLayout::Broadcast0),
    ]
}

/// Random recipes: up to `max_inputs` inputs and `max_steps` steps.
pub fn recipe_strategy(
    dtypes: DTypes,
    max_inputs: usize,
    max_steps: usize,
) -> impl Strategy<Value = Recipe> {
    sized_recipe_strategy(dtypes, max_inputs, max_steps, 4, 4)
}

/// Random recipes with inputs of rank up to `max_rank` and dims up to
/// `max_dim` (big enough dims exercise vector loops, their tails and
/// unrolled reductions).
pub fn sized_recipe_strategy(
    dtypes: DTypes,
    max_inputs: usize,
    max_steps: usize,
    max_rank: usize,
    max_dim: i64,
) -> impl Strategy<Value = Recipe> {
    let input = (
        shape_strategy(max_rank, max_dim),
        dtype_strategy(dtypes),
        layout_strategy(),
    )
        .prop_map(|(shape, dtype, layout)| InputSpec {
            shape,
            dtype,
            layout,
        });
    let step = (0u8..=INDEXING, any::<u8>(), any::<u8>(), any::<u32>())
        .prop_map(|(family, a, b, seed)| Step { family, a, b, seed });
    (
        prop::collection::vec(input, 1..=max_inputs),
        prop::collection::vec(step, 1..=max_steps),
        1u8..3,
        prop_oneof![3 => Just(DefaultDType::F32), 1 => Just(DefaultDType::F64)],
    )
        .prop_map(|(inputs, steps, outputs, default_dtype)| Recipe {
            inputs,
            steps,
            outputs,
            default_dtype,
        })
}

/// A deterministic stream of choices from a step's seed.
struct Seed(u32);

impl Seed {
    fn next(&mut self, n: usize) -> usize {
        // xorshift32
        let mut x = self.0.max(1);
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        (x as usize) % n.max(1)
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.next(items.len())]
    }

    fn pick_ref<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.next(items.len())]
    }

    fn scalar(&mut self) -> Scalar {
        match self.next(9) {
            0 => Scalar::Bool(self.next(2) == 1),
            1 => Scalar::Int(self.next(7) as i64 - 3),
            2 => Scalar::Int(1000),
            3 => Scalar::Float(self.pick(&[0.5, -2.25, 3.0, 1e-3])),
            4 => Scalar::Float(self.pick(&[-0.0, f64::INFINITY, f64::NAN])),
            5 => Scalar::Complex(1.0, -0.5),
            _ => Scalar::Float(self.pick(&[2.0, -1.5, 0.75])),
        }
    }
}

/// Every op of the op table that takes one tensor and has defaults for
/// all its attributes (the unary primitives, gelu, silu, sigmoid, ...):
/// a new op of that shape is generated without a change here.
fn single_tensor_ops() -> &'static [Op] {
    static OPS: std::sync::OnceLock<Vec<Op>> = std::sync::OnceLock::new();
    OPS.get_or_init(|| {
        let mut names = Op::names();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .filter_map(|name| Op::parse(name, Attrs::default()).ok())
            .filter(|op| {
                let slots = op.def().operands;
                slots.len() == 1 && slots[0].kind == SlotKind::Tensor
            })
            .collect()
    })
}

const ALL_DTYPES_NO_SHELL: [DType; 15] = [
    DType::F32,
    DType::F64,
    DType::F16,
    DType::BF16,
    DType::C64,
    DType::C128,
    DType::U8,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::Bool,
];

impl Recipe {
    /// Builds the program; steps that do not type-check are skipped.
    pub fn build(&self) -> Module {
        self.build_with(|_| true)
    }

    /// Builds the program, keeping only ops `keep` accepts.
    pub fn build_with(&self, keep: impl Fn(&Op) -> bool) -> Module {
        let ctx = InferCtx {
            default_dtype: self.default_dtype,
        };
        let mut b = FuncBuilder::new("main", ctx);
        let mut pool: Vec<ValueId> = Vec::new();
        for (i, input) in self.inputs.iter().enumerate() {
            pool.push(
                b.param(Some(&format!("in{i}")), input.tensor_type())
                    .expect("inputs are valid"),
            );
        }
        for step in &self.steps {
            let mut seed = Seed(step.seed);
            let x = pool[step.a as usize % pool.len()];
            let y = pool[step.b as usize % pool.len()];
            let shape = b.ty(x).shape.clone();
            let rank = shape.len() as i64;
            if step.family == INDEXING {
                if let Some(v) = indexing(&mut b, x, &mut seed, &keep) {
                    pool.push(v);
                }
                continue;
            }
            if step.family == ATTENTION && seed.next(2) == 0 {
                if let Some(vs) = multi_head_attention(&mut b, x, y, &mut seed, &keep) {
                    pool.extend(vs);
                    continue;
                }
            }
            let candidates = candidates(step.family, x, y, &shape, rank, &mut seed, b.ty(x).dtype);
            for (op, operands) in candidates {
                if !keep(&op) {
                    continue;
                }
                if let Ok(vs) = b.push_multi(op, operands, None) {
                    pool.extend(vs);
                    break;
                }
            }
        }
        let n = (self.outputs as usize).min(pool.len()).max(1);
        let returns: Vec<ValueId> = pool[pool.len() - n..].to_vec();
        let func = b
            .finish(returns, None)
            .expect("a generated program verifies");
        Module::single(func, self.default_dtype)
    }
}

/// The family of [`indexing`] steps (the last one).
const INDEXING: u8 = 40;

/// The family of attention steps (half of them
/// [`multi_head_attention`] where it fits).
const ATTENTION: u8 = 39;

/// `multi_head_attention_forward` of `x` (`[L, N, E]` or `[L, E]`, float)
/// attending to itself or to `y` (of `x`'s shape), with weights made from
/// the op's own shapes (`sin` of positions, so they vary), one or two
/// heads, and, at random, `y` as a float mask where it fits, a zero key,
/// bias keys, `need_weights` and head-averaged weights. `None` when
/// nothing type-checks.
fn multi_head_attention(
    b: &mut FuncBuilder,
    x: ValueId,
    y: ValueId,
    s: &mut Seed,
    keep: &impl Fn(&Op) -> bool,
) -> Option<Vec<ValueId>> {
    let v = Operand::Value;
    let ty = b.ty(x).clone();
    let rank = ty.shape.len();
    if !matches!(ty.dtype, DType::F32 | DType::F64) || !matches!(rank, 2 | 3) {
        return None;
    }
    let e = ty.shape[rank - 1];
    let heads = if e % 2 == 0 && s.next(2) == 0 { 2 } else { 1 };
    let push = |b: &mut FuncBuilder, op: Op, operands: Vec<Operand>| {
        keep(&op).then(|| b.push(op, operands, None).ok()).flatten()
    };
    let mut phase = 0.0;
    let mut weight = |b: &mut FuncBuilder, shape: Vec<i64>| -> Option<ValueId> {
        phase += 0.61;
        let n: i64 = shape.iter().product();
        let positions = push(
            b,
            Op::Arange {
                start: Scalar::Int(0),
                end: Scalar::Int(n),
                step: Scalar::Int(1),
                dtype: Some(ty.dtype),
                device: None,
            },
            vec![],
        )?;
        let turned = push(
            b,
            Op::Binary { op: BinaryOp::Mul },
            vec![v(positions), Operand::Scalar(Scalar::Float(0.37))],
        )?;
        let shifted = push(
            b,
            Op::Binary { op: BinaryOp::Add },
            vec![v(turned), Operand::Scalar(Scalar::Float(phase))],
        )?;
        let w = push(b, Op::Unary { op: UnaryOp::Sin }, vec![v(shifted)])?;
        push(b, Op::Reshape { shape }, vec![v(w)])
    };
    let in_w = weight(b, vec![3 * e, e])?;
    let in_b = weight(b, vec![3 * e])?;
    let out_w = weight(b, vec![e, e])?;
    let out_b = weight(b, vec![e])?;
    let (bias_k, bias_v) = if s.next(4) == 0 {
        (v(weight(b, vec![1, 1, e])?), v(weight(b, vec![1, 1, e])?))
    } else {
        (Operand::None, Operand::None)
    };
    let kv = if b.ty(y) == &ty && s.next(2) == 0 {
        y
    } else {
        x
    };
    let l = ty.shape[0];
    // y as an additive mask where it is [L, S] (self-attention: S = L).
    let mask = if b.ty(y).shape == [l, l] && b.ty(y).dtype == ty.dtype && kv == x {
        v(y)
    } else {
        Operand::None
    };
    let op = Op::MultiHeadAttentionForward {
        embed_dim_to_check: e,
        num_heads: heads,
        add_zero_attn: s.next(4) == 0,
        dropout_p: F64(0.0),
        training: false,
        need_weights: s.next(2) == 0,
        use_separate_proj_weight: false,
        average_attn_weights: s.next(2) == 0,
        is_causal: false,
    };
    let operands = vec![
        v(x),
        v(kv),
        v(kv),
        v(in_w),
        v(in_b),
        bias_k,
        bias_v,
        v(out_w),
        v(out_b),
        Operand::None,
        mask,
    ];
    if !keep(&op) {
        return None;
    }
    b.push_multi(op, operands, None).ok()
}

/// A gather, scatter or lookup of `x` at an index made from `x` itself, so
/// that its shape fits: `|x|·3.7` (or `x`) as i64, then, three times in
/// four, `remainder` by the size of the dim indexed (in range); else the
/// raw values, mostly out of range (PyTorch's error on every backend).
/// `None` when nothing type-checks (the ops' rules refuse the dtype or
/// shape).
fn indexing(
    b: &mut FuncBuilder,
    x: ValueId,
    s: &mut Seed,
    keep: &impl Fn(&Op) -> bool,
) -> Option<ValueId> {
    let v = Operand::Value;
    // The index's own ops obey `keep` too.
    let push = |b: &mut FuncBuilder, op: Op, operands: Vec<Operand>| {
        keep(&op).then(|| b.push(op, operands, None).ok()).flatten()
    };
    let ty = b.ty(x).clone();
    let rank = ty.shape.len();
    let d = if rank == 0 { 0 } else { s.next(rank) };
    let size = ty.shape.get(d).copied().unwrap_or(1);
    let mut ix = x;
    if ty.dtype.is_floating_point() {
        ix = push(b, Op::Unary { op: UnaryOp::Abs }, vec![v(ix)])?;
        let k = Operand::Scalar(Scalar::Float(3.7));
        ix = push(b, Op::Binary { op: BinaryOp::Mul }, vec![v(ix), k])?;
    }
    ix = push(b, Op::Cast { dtype: DType::I64 }, vec![v(ix)])?;
    if s.next(4) != 0 && size > 0 {
        let n = Operand::Scalar(Scalar::Int(size));
        ix = push(
            b,
            Op::Binary {
                op: BinaryOp::Remainder,
            },
            vec![v(ix), n],
        )?;
    }
    let d = d as i64;
    let flatten = Op::Flatten {
        start_dim: 0,
        end_dim: -1,
    };
    let flat = push(b, flatten, vec![v(ix)])?;
    let reduce = s.pick(&[
        ScatterReduce::Sum,
        ScatterReduce::Prod,
        ScatterReduce::Mean,
        ScatterReduce::Amax,
        ScatterReduce::Amin,
    ]);
    // Class indices for a loss over rows (x [N, C]): each row's largest
    // index, in range when taken along the classes.
    let classes = if rank == 2 {
        let amax = Op::Reduce {
            op: ReduceOp::Amax,
            dims: Some(vec![1]),
            keepdim: false,
            dtype: None,
        };
        push(b, amax, vec![v(ix)])
    } else {
        None
    };
    let loss = Op::CrossEntropy {
        reduction: s.pick(&[LossReduction::Mean, LossReduction::Sum, LossReduction::None]),
        ignore_index: if s.next(2) == 0 { -100 } else { 1 },
        label_smoothing: F64(0.0),
    };
    let mut candidates = vec![
        (
            Op::Gather {
                dim: d,
                sparse_grad: false,
            },
            vec![v(x), v(ix)],
        ),
        (Op::Scatter { dim: d }, vec![v(x), v(ix), v(x)]),
        (Op::ScatterAdd { dim: d }, vec![v(x), v(ix), v(x)]),
        (
            Op::ScatterReduce {
                dim: d,
                reduce,
                include_self: s.next(2) == 1,
            },
            vec![v(x), v(ix), v(x)],
        ),
        (Op::IndexSelect { dim: d }, vec![v(x), v(flat)]),
        (Op::Take, vec![v(x), v(ix)]),
        (
            Op::Embedding {
                padding_idx: -1,
                scale_grad_by_freq: false,
                sparse: false,
            },
            vec![v(x), v(ix)],
        ),
    ];
    // Half the time a loss comes first where it fits.
    let mut first = s.next(candidates.len());
    if let Some(t) = classes {
        candidates.push((loss, vec![v(x), v(t), Operand::None]));
        if s.next(2) == 0 {
            first = candidates.len() - 1;
        }
    }
    (0..candidates.len())
        .map(|k| &candidates[(first + k) % candidates.len()])
        .filter(|(op, _)| keep(op))
        .find_map(|(op, operands)| b.push(op.clone(), operands.clone(), None).ok())
}

/// Attention candidates: self-attention (which fits any float operand of
/// rank 2 or more), y as keys and values, or y as the mask.
fn attention(x: ValueId, y: ValueId, s: &mut Seed) -> Vec<(Op, Vec<Operand>)> {
    let v = Operand::Value;
    let sdpa = Op::ScaledDotProductAttention {
        dropout_p: F64(0.0),
        is_causal: s.next(2) == 1,
        scale: (s.next(3) == 0).then_some(F64(0.3)),
        enable_gqa: s.next(4) == 0,
    };
    vec![
        (sdpa.clone(), vec![v(x), v(y), v(y), Operand::None]),
        (sdpa.clone(), vec![v(x), v(x), v(x), v(y)]),
        (sdpa, vec![v(x), v(x), v(x), Operand::None]),
    ]
}

/// The ops a step tries, in order; the first that type-checks is kept.
fn candidates(
    family: u8,
    x: ValueId,
    y: ValueId,
    shape: &[i64],
    rank: i64,
    s: &mut Seed,
    dtype: DType,
) -> Vec<(Op, Vec<Operand>)> {
    let v = Operand::Value;
    let dim = |s: &mut Seed| {
        if rank == 0 {
            0
        } else {
            s.next(2 * rank as usize) as i64 - rank
        }
    };
    let one = |op: Op| vec![(op, vec![v(x)])];
    match family {
        0..=5 => one(s.pick_ref(single_tensor_ops()).clone()),
        6..=11 => {
            let op = Op::Binary {
                op: s.pick(BinaryOp::ALL),
            };
            match s.next(4) {
                0 => vec![(op, vec![v(x), Operand::Scalar(s.scalar())])],
                1 => vec![(op, vec![Operand::Scalar(s.scalar()), v(x)])],
                _ => vec![(op.clone(), vec![v(x), v(y)]), (op, vec![v(x), v(x)])],
            }
        }
        12 => {
            let cond_op = Op::Binary {
                op: s.pick(&[BinaryOp::Gt, BinaryOp::Lt, BinaryOp::Ne]),
            };
            // where needs a bool condition: use x itself when bool, else y.
            let other = if s.next(2) == 0 {
                v(y)
            } else {
                Operand::Scalar(s.scalar())
            };
            if dtype == DType::Bool {
                vec![
                    (Op::Where, vec![v(x), other, v(y)]),
                    (cond_op, vec![v(x), Operand::Scalar(Scalar::Int(0))]),
                ]
            } else {
                vec![(cond_op, vec![v(x), Operand::Scalar(Scalar::Int(0))])]
            }
        }
        13 => {
            let bound = |s: &mut Seed| match s.next(3) {
                0 => None,
                _ => Some(s.pick(&[
                    Scalar::Int(0),
                    Scalar::Float(-0.5),
                    Scalar::Float(1.5),
                    Scalar::Int(2),
                ])),
            };
            let (min, max) = (bound(s), bound(s));
            vec![
                (Op::Clamp { min, max }, vec![v(x)]),
                (
                    Op::Clamp {
                        min: None,
                        max: None,
                    },
                    vec![v(x), v(y)],
                ),
                (
                    Op::Clamp {
                        min: None,
                        max: None,
                    },
                    vec![v(x), Operand::None, v(y)],
                ),
            ]
        }
        14 | 15 => one(Op::Cast {
            dtype: s.pick(&ALL_DTYPES_NO_SHELL),
        }),
        16 | 17 => {
            let dims = match s.next(3) {
                0 => None,
                1 => Some(vec![dim(s)]),
                _ if rank >= 2 => Some(vec![0, rank - 1]),
                _ => Some(vec![]),
            };
            let dtype = (s.next(4) == 0).then(|| s.pick(&[DType::F64, DType::F32, DType::I64]));
            let keepdim = s.next(2) == 1;
            // A primitive reduction, or mean (a composite).
            match s.next(ReduceOp::ALL.len() + 1).checked_sub(1) {
                Some(k) => one(Op::Reduce {
                    op: ReduceOp::ALL[k],
                    dims,
                    keepdim,
                    dtype,
                }),
                None => one(Op::Mean {
                    dims,
                    keepdim,
                    dtype,
                }),
            }
        }
        18 => {
            let op = s.pick(ArgReduceOp::ALL);
            let d = (s.next(3) > 0).then(|| dim(s));
            one(Op::ArgReduce {
                op,
                dim: d,
                keepdim: s.next(2) == 1,
            })
        }
        19 => one(if s.next(2) == 1 {
            Op::LogSoftmax {
                dim: dim(s),
                dtype: None,
            }
        } else {
            Op::Softmax {
                dim: dim(s),
                dtype: None,
            }
        }),
        20 => {
            let last = shape.last().copied().unwrap_or(1);
            let op = Op::LayerNorm {
                normalized_shape: vec![last],
                eps: F64(1e-5),
            };
            // The parameters are y when its shape fits (or none).
            vec![
                (op.clone(), vec![v(x), Operand::None, v(y)]),
                (op.clone(), vec![v(x), v(y)]),
                (op, vec![v(x)]),
            ]
        }
        21 => {
            let numel: i64 = shape.iter().product();
            let new = match s.next(3) {
                0 => vec![numel],
                1 => vec![-1, 1],
                _ => vec![1, -1],
            };
            vec![
                (Op::Reshape { shape: new.clone() }, vec![v(x)]),
                (Op::View { shape: new }, vec![v(x)]),
            ]
        }
        22 => {
            let mut dims: Vec<i64> = (0..rank).collect();
            dims.reverse();
            if rank > 2 {
                dims.swap(0, 1);
            }
            one(Op::Permute { dims })
        }
        23 => vec![
            (
                Op::Transpose {
                    dim0: dim(s),
                    dim1: dim(s),
                },
                vec![v(x)],
            ),
            (Op::T, vec![v(x)]),
        ],
        24 => {
            let mut new = vec![2];
            new.extend(
                shape
                    .iter()
                    .map(|d| if *d == 1 && s.next(2) == 0 { 3 } else { -1 }),
            );
            one(Op::Expand { shape: new })
        }
        25 => vec![
            (Op::Unsqueeze { dim: dim(s) }, vec![v(x)]),
            (
                Op::Squeeze {
                    dims: (s.next(2) == 0).then(|| vec![dim(s)]),
                },
                vec![v(x)],
            ),
        ],
        26 => {
            let start = Some(s.next(3) as i64 - 1);
            let end = (s.next(2) == 0).then(|| s.next(6) as i64 - 2);
            vec![
                (
                    Op::Slice {
                        dim: dim(s),
                        start,
                        end,
                        step: 1 + s.next(3) as i64,
                    },
                    vec![v(x)],
                ),
                (
                    Op::Select {
                        dim: dim(s),
                        index: s.next(2) as i64,
                    },
                    vec![v(x)],
                ),
            ]
        }
        27 => vec![
            (
                Op::Flatten {
                    start_dim: 0,
                    end_dim: -1,
                },
                vec![v(x)],
            ),
            (
                Op::Contiguous {
                    memory_format: MemoryFormat::Contiguous,
                },
                vec![v(x)],
            ),
        ],
        28 => {
            let format = s.pick(&[
                MemoryFormat::Preserve,
                MemoryFormat::Contiguous,
                MemoryFormat::ChannelsLast,
            ]);
            // Dense strides with the dims in reverse order.
            let mut reversed = vec![0; shape.len()];
            let mut next = 1;
            for d in 0..shape.len() {
                reversed[d] = next;
                next *= shape[d].max(1);
            }
            vec![
                (
                    Op::Clone {
                        memory_format: format,
                        strides: None,
                    },
                    vec![v(x)],
                ),
                (
                    Op::Clone {
                        memory_format: MemoryFormat::Preserve,
                        strides: Some(reversed),
                    },
                    vec![v(x)],
                ),
                (
                    Op::To {
                        dtype: Some(s.pick(&ALL_DTYPES_NO_SHELL)),
                        device: None,
                        memory_format: MemoryFormat::Preserve,
                        copy: false,
                    },
                    vec![v(x)],
                ),
            ]
        }
        29 => vec![
            (Op::Cat { dim: dim(s) }, vec![v(x), v(y)]),
            (Op::Cat { dim: dim(s) }, vec![v(x), v(x)]),
        ],
        // Products: matmul, then attention where no matmul fits.
        30 => [
            vec![
                (Op::Matmul, vec![v(x), v(y)]),
                (Op::Matmul, vec![v(x), v(x)]),
            ],
            attention(x, y, s),
        ]
        .concat(),
        ATTENTION => attention(x, y, s),
        // Along one dim: values and positions, the two extremes, scans.
        35 => {
            let d = dim(s);
            vec![
                (
                    Op::Cumsum {
                        dim: d,
                        dtype: None,
                    },
                    vec![v(x)],
                ),
                (
                    Op::Cumprod {
                        dim: d,
                        dtype: None,
                    },
                    vec![v(x)],
                ),
                (
                    Op::Sort {
                        dim: d,
                        descending: s.next(2) == 1,
                        stable: true,
                    },
                    vec![v(x)],
                ),
                (
                    Op::Topk {
                        k: s.next(3) as i64,
                        dim: d,
                        largest: s.next(2) == 1,
                        sorted: true,
                    },
                    vec![v(x)],
                ),
                (
                    Op::Aminmax {
                        dim: (s.next(2) == 1).then_some(d),
                        keepdim: s.next(2) == 1,
                    },
                    vec![v(x)],
                ),
            ]
        }
        // As many results as the shapes give.
        36 => {
            let d = dim(s);
            vec![
                (
                    Op::Split {
                        split_size: 1 + s.next(3) as i64,
                        dim: d,
                    },
                    vec![v(x)],
                ),
                (
                    Op::Chunk {
                        chunks: 1 + s.next(3) as i64,
                        dim: d,
                    },
                    vec![v(x)],
                ),
                (Op::Unbind { dim: d }, vec![v(x)]),
            ]
        }
        // A list operand.
        37 => vec![
            (Op::Stack { dim: dim(s) }, vec![v(x), v(y)]),
            (Op::Stack { dim: dim(s) }, vec![v(x), v(x), v(x)]),
        ],
        // Near-identities: what the optimizer's rules (and traps) are about.
        32..=34 => {
            let (op, literal) = s.pick(&[
                (BinaryOp::Mul, Scalar::Int(1)),
                (BinaryOp::Mul, Scalar::Float(1.0)),
                (BinaryOp::Mul, Scalar::Float(0.0)),
                (BinaryOp::Div, Scalar::Float(1.0)),
                (BinaryOp::Add, Scalar::Float(0.0)),
                (BinaryOp::Add, Scalar::Float(-0.0)),
                (BinaryOp::Add, Scalar::Int(0)),
                (BinaryOp::Sub, Scalar::Float(0.0)),
                (BinaryOp::Sub, Scalar::Float(-0.0)),
            ]);
            let operands = if s.next(2) == 0 {
                vec![v(x), Operand::Scalar(literal)]
            } else {
                vec![Operand::Scalar(literal), v(x)]
            };
            vec![
                (Op::Binary { op }, operands),
                (Op::Unary { op: UnaryOp::Neg }, vec![v(x)]),
            ]
        }
        // Random ops: pure functions of their seed and positions, so every
        // backend and optimization level must give the same values.
        38 => {
            let seed = s.next(1000) as i64;
            let p = F64(0.25 * (1 + s.next(3)) as f64);
            let like = [
                Op::Uniform {
                    from: F64(-1.0),
                    to: F64(2.0),
                    seed,
                },
                Op::Exponential {
                    lambd: F64(1.5),
                    seed,
                },
                Op::Cauchy {
                    median: F64(0.0),
                    sigma: F64(1.0),
                    seed,
                },
                Op::LogNormal {
                    mean: F64(0.0),
                    std: F64(0.5),
                    seed,
                },
                Op::Geometric { p, seed },
                Op::Bernoulli { p: Some(p), seed },
                Op::Dropout {
                    p,
                    train: true,
                    seed,
                },
                Op::FeatureDropout {
                    p,
                    train: true,
                    seed,
                },
                Op::NativeDropout {
                    p,
                    train: Some(true),
                    seed,
                },
            ];
            let size = shape.to_vec();
            let created = [
                Op::Rand {
                    size: size.clone(),
                    seed,
                    dtype: None,
                    device: None,
                },
                Op::Randn {
                    size: size.clone(),
                    seed,
                    dtype: None,
                    device: None,
                },
                Op::Randint {
                    low: -3,
                    high: 9,
                    size,
                    seed,
                    dtype: None,
                    device: None,
                },
            ];
            let mut out = vec![(s.pick_ref(&like).clone(), vec![v(x)])];
            out.push((s.pick_ref(&created).clone(), vec![]));
            out
        }
        _ => {
            let dtype = (s.next(2) == 0).then(|| s.pick(&ALL_DTYPES_NO_SHELL));
            vec![
                (
                    Op::Full {
                        shape: shape.to_vec(),
                        value: s.scalar(),
                        dtype,
                        device: None,
                    },
                    vec![],
                ),
                (
                    Op::Arange {
                        start: Scalar::Int(0),
                        end: Scalar::Int(1 + s.next(5) as i64),
                        step: Scalar::Int(1),
                        dtype,
                        device: None,
                    },
                    vec![],
                ),
            ]
        }
    }
}
