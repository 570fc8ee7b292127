//! The lazy [`Tensor`]: a value of the graph being traced, with a method for
//! every op of IR.md and `std::ops` overloading.
//!
//! Scalars written in Rust follow PyTorch's scalar-operand rule: `2.0` (or
//! `2.0f32`) is a floating scalar like a Python float, `2` an integral one,
//! `true` a bool; only their category takes part in type promotion.

use std::ops;

use kiln_ir::{
    ArgReduceOp, BinaryOp, DType, Device, F64, GeluApproximate, LossReduction, MemoryFormat, Op,
    ReduceOp, RoundingMode, Scalar, TensorType, UnaryOp,
};

use crate::defaults::default_device;

mod complex;
mod random;
mod spatial;
pub use complex::{complex, polar};
pub use random::{normal, normal_scalars, rand, randint, randn};
pub use spatial::{ConvOptions, Interpolate, InterpolateMode, PoolOptions};

/// A reduction's `dims` attribute: none (every dim) for an empty list.
fn opt_dims(dims: &[i64]) -> Option<Vec<i64>> {
    (!dims.is_empty()).then(|| dims.to_vec())
}
use crate::trace::{Input, record, record_all, type_of};

/// The options of [`Tensor::scaled_dot_product_attention`] (PyTorch's
/// keyword arguments; dropout is for training and has none).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AttentionOptions {
    /// Mask out keys after each query's position (`is_causal=True`).
    pub is_causal: bool,
    /// The factor of `q @ kᵀ`; `None` is `1/√E`.
    pub scale: Option<f64>,
    /// Key and value heads each serve `Hq / Hkv` query heads.
    pub enable_gqa: bool,
}

impl AttentionOptions {
    /// Causal attention.
    pub fn causal() -> AttentionOptions {
        AttentionOptions {
            is_causal: true,
            ..AttentionOptions::default()
        }
    }

    /// With this scale.
    pub fn scale(mut self, scale: f64) -> AttentionOptions {
        self.scale = Some(scale);
        self
    }

    /// With grouped-query heads.
    pub fn gqa(mut self) -> AttentionOptions {
        self.enable_gqa = true;
        self
    }
}

/// The weights, masks and options of
/// [`Tensor::multi_head_attention_forward`]: `F.multi_head_attention_forward`'s
/// arguments past query, key and value, as `nn.MultiheadAttention` passes
/// them (a packed input projection `[3E, E]` and an output projection
/// `[E, E]`), with the rest set by methods. Inference: no dropout.
#[derive(Clone, Debug)]
pub struct MultiHeadAttentionArgs<'a> {
    embed_dim: i64,
    num_heads: i64,
    in_proj_weight: Option<&'a Tensor>,
    in_proj_bias: Option<&'a Tensor>,
    bias_kv: Option<(&'a Tensor, &'a Tensor)>,
    out_proj_weight: &'a Tensor,
    out_proj_bias: Option<&'a Tensor>,
    key_padding_mask: Option<&'a Tensor>,
    attn_mask: Option<&'a Tensor>,
    separate: Option<[&'a Tensor; 3]>,
    static_kv: Option<(&'a Tensor, &'a Tensor)>,
    add_zero_attn: bool,
    need_weights: bool,
    average_attn_weights: bool,
    is_causal: bool,
}

impl<'a> MultiHeadAttentionArgs<'a> {
    /// `embed_dim` (checked against the query's last dim) split in
    /// `num_heads` heads, the packed input projection (`in_proj_weight`,
    /// `[3E, E]`) and the output projection's weight (`[E, E]`); PyTorch's
    /// defaults otherwise (`need_weights` and head-averaged weights).
    pub fn new(
        embed_dim: i64,
        num_heads: i64,
        in_proj_weight: &'a Tensor,
        out_proj_weight: &'a Tensor,
    ) -> Self {
        MultiHeadAttentionArgs {
            embed_dim,
            num_heads,
            in_proj_weight: Some(in_proj_weight),
            in_proj_bias: None,
            bias_kv: None,
            out_proj_weight,
            out_proj_bias: None,
            key_padding_mask: None,
            attn_mask: None,
            separate: None,
            static_kv: None,
            add_zero_attn: false,
            need_weights: true,
            average_attn_weights: true,
            is_causal: false,
        }
    }

    /// Separate query, key and value projections (`q_proj_weight`,
    /// `k_proj_weight`, `v_proj_weight`: `use_separate_proj_weight=True`)
    /// in place of the packed one.
    pub fn separate_projections(mut self, q: &'a Tensor, k: &'a Tensor, v: &'a Tensor) -> Self {
        self.in_proj_weight = None;
        self.separate = Some([q, k, v]);
        self
    }

    /// The input projections' bias (`[3E]`).
    pub fn in_proj_bias(mut self, bias: &'a Tensor) -> Self {
        self.in_proj_bias = Some(bias);
        self
    }

    /// The output projection's bias (`[E]`).
    pub fn out_proj_bias(mut self, bias: &'a Tensor) -> Self {
        self.out_proj_bias = Some(bias);
        self
    }

    /// `bias_k` and `bias_v`, appended as one more key and value.
    pub fn bias_kv(mut self, bias_k: &'a Tensor, bias_v: &'a Tensor) -> Self {
        self.bias_kv = Some((bias_k, bias_v));
        self
    }

    /// `static_k` and `static_v` (`[N·H, S, E/H]`) in place of the
    /// projected keys and values.
    pub fn static_kv(mut self, static_k: &'a Tensor, static_v: &'a Tensor) -> Self {
        self.static_kv = Some((static_k, static_v));
        self
    }

    /// `key_padding_mask` (`[N, S]`: bool, True hides a key, or additive).
    pub fn key_padding_mask(mut self, mask: &'a Tensor) -> Self {
        self.key_padding_mask = Some(mask);
        self
    }

    /// `attn_mask` (`[L, S]` or `[N·H, L, S]`: bool, True hides a key, or
    /// additive); with `is_causal`, the hint that it is the causal mask.
    pub fn attn_mask(mut self, mask: &'a Tensor, is_causal: bool) -> Self {
        self.attn_mask = Some(mask);
        self.is_causal = is_causal;
        self
    }

    /// A zero key and value appended (`add_zero_attn`).
    pub fn add_zero_attn(mut self) -> Self {
        self.add_zero_attn = true;
        self
    }

    /// Whether the attention weights are returned (`need_weights`), and
    /// averaged over the heads (`average_attn_weights`).
    pub fn weights(mut self, need_weights: bool, average_attn_weights: bool) -> Self {
        self.need_weights = need_weights;
        self.average_attn_weights = average_attn_weights;
        self
    }
}

/// A lazy tensor: a value of the function being traced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub(crate) trace: u64,
    /// `None` when an earlier op failed (the trace reports that error).
    pub(crate) value: Option<kiln_ir::ValueId>,
}

fn t(x: &Tensor) -> Input {
    Input::Tensor(x.clone())
}

impl Tensor {
    pub(crate) fn poisoned(trace: u64) -> Tensor {
        Tensor { trace, value: None }
    }

    /// The inferred type, when the tensor is valid in the running trace.
    pub fn tensor_type(&self) -> Option<TensorType> {
        type_of(self)
    }

    /// The inferred shape, when the tensor is valid in the running trace.
    pub fn shape(&self) -> Option<Vec<i64>> {
        self.tensor_type().map(|t| t.shape)
    }

    /// The inferred dtype, when the tensor is valid in the running trace.
    pub fn dtype(&self) -> Option<DType> {
        self.tensor_type().map(|t| t.dtype)
    }

    /// The inferred device, when the tensor is valid in the running trace.
    pub fn device(&self) -> Option<Device> {
        self.tensor_type().map(|t| t.device)
    }

    fn unary(&self, op: UnaryOp) -> Tensor {
        record(Op::Unary { op }, vec![t(self)], None)
    }

    fn binary(&self, op: BinaryOp, other: impl Into<Input>) -> Tensor {
        record(Op::Binary { op }, vec![t(self), other.into()], None)
    }

    /// A binary op written in place (`a.add_(b)`): the result keeps `self`'s
    /// dtype under PyTorch's casting rule.
    fn binary_in_place(&self, op: BinaryOp, other: impl Into<Input>) -> Tensor {
        let out = self.dtype();
        record(Op::Binary { op }, vec![t(self), other.into()], out)
    }

    fn reduce(&self, op: ReduceOp, dims: &[i64], keepdim: bool, dtype: Option<DType>) -> Tensor {
        let dims = opt_dims(dims);
        record(
            Op::Reduce {
                op,
                dims,
                keepdim,
                dtype,
            },
            vec![t(self)],
            None,
        )
    }
}

/// One method per primitive unary op of the op table, named as the op.
macro_rules! unary_methods {
    (
        $(#[doc = $edoc:literal])*
        $kind:ident : $def:ident {
            $( $(#[doc = $doc:literal])* $variant:ident ( $name:ident ) => $value:expr ),* $(,)?
        }
    ) => {
        impl Tensor {
            $( $(#[doc = $doc])* pub fn $name(&self) -> Tensor { self.unary(UnaryOp::$variant) } )*
        }
    };
}

kiln_ir::unary_ops!(unary_methods);

/// One method per primitive binary op of the op table, named as the op
/// (div's rounding modes are [`Tensor::div_rounding`]).
macro_rules! binary_methods {
    (
        $(#[doc = $edoc:literal])*
        $kind:ident : $def:ident {
            $( $(#[doc = $doc:literal])* $variant:ident ( $name:ident $([$sel:ident = $selv:literal])? ) => $value:expr ),* $(,)?
        }
    ) => {
        $( binary_methods!(@one $(#[doc = $doc])* $variant $name $([$sel])?); )*
    };
    (@one $(#[doc = $doc:literal])* $variant:ident $name:ident [$sel:ident]) => {};
    (@one $(#[doc = $doc:literal])* $variant:ident $name:ident) => {
        impl Tensor {
            $(#[doc = $doc])*
            pub fn $name(&self, other: impl Into<Input>) -> Tensor {
                self.binary(BinaryOp::$variant, other)
            }
        }
    };
}

kiln_ir::binary_ops!(binary_methods);

impl Tensor {
    /// `torch.sigmoid`.
    pub fn sigmoid(&self) -> Tensor {
        record(Op::Sigmoid, vec![t(self)], None)
    }

    /// `torch.nn.functional.silu`.
    pub fn silu(&self) -> Tensor {
        record(Op::Silu, vec![t(self)], None)
    }

    /// `torch.nn.functional.softplus(x, beta, threshold)`.
    pub fn softplus(&self, beta: impl Into<Scalar>, threshold: impl Into<Scalar>) -> Tensor {
        let (beta, threshold) = (beta.into(), threshold.into());
        record(Op::Softplus { beta, threshold }, vec![t(self)], None)
    }

    /// `torch.nn.functional.hardswish`.
    pub fn hardswish(&self) -> Tensor {
        record(Op::Hardswish, vec![t(self)], None)
    }

    /// `torch.nn.functional.elu(x, alpha)`.
    pub fn elu(&self, alpha: f64) -> Tensor {
        let op = Op::Elu {
            alpha: F64(alpha),
            scale: F64(1.0),
            input_scale: F64(1.0),
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.nn.functional.selu`.
    pub fn selu(&self) -> Tensor {
        record(Op::Selu, vec![t(self)], None)
    }

    /// `torch.nn.functional.celu(x, alpha)`.
    pub fn celu(&self, alpha: f64) -> Tensor {
        record(Op::Celu { alpha: F64(alpha) }, vec![t(self)], None)
    }

    /// `torch.nn.functional.leaky_relu(x, negative_slope)`.
    pub fn leaky_relu(&self, negative_slope: f64) -> Tensor {
        let op = Op::LeakyRelu {
            negative_slope: F64(negative_slope),
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.nn.functional.hardtanh(x, min_val, max_val)`.
    pub fn hardtanh(&self, min_val: impl Into<Scalar>, max_val: impl Into<Scalar>) -> Tensor {
        let op = Op::Hardtanh {
            min_val: min_val.into(),
            max_val: max_val.into(),
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.nn.functional.relu6`.
    pub fn relu6(&self) -> Tensor {
        record(Op::Relu6, vec![t(self)], None)
    }

    /// `torch.nn.functional.hardsigmoid`.
    pub fn hardsigmoid(&self) -> Tensor {
        record(Op::Hardsigmoid, vec![t(self)], None)
    }

    /// `torch.nn.functional.mish`.
    pub fn mish(&self) -> Tensor {
        record(Op::Mish, vec![t(self)], None)
    }

    /// `torch.nn.functional.softsign`.
    pub fn softsign(&self) -> Tensor {
        record(Op::Softsign, vec![t(self)], None)
    }

    /// `torch.nn.functional.tanhshrink`.
    pub fn tanhshrink(&self) -> Tensor {
        record(Op::Tanhshrink, vec![t(self)], None)
    }

    /// `torch.nn.functional.softshrink(x, lambd)`.
    pub fn softshrink(&self, lambd: f64) -> Tensor {
        record(Op::Softshrink { lambd: F64(lambd) }, vec![t(self)], None)
    }

    /// `torch.nn.functional.hardshrink(x, lambd)`.
    pub fn hardshrink(&self, lambd: f64) -> Tensor {
        record(Op::Hardshrink { lambd: F64(lambd) }, vec![t(self)], None)
    }

    /// `torch.nn.functional.threshold(x, threshold, value)`.
    pub fn threshold(&self, threshold: impl Into<Scalar>, value: impl Into<Scalar>) -> Tensor {
        let op = Op::Threshold {
            threshold: threshold.into(),
            value: value.into(),
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.nn.functional.logsigmoid`.
    pub fn logsigmoid(&self) -> Tensor {
        record(Op::Logsigmoid, vec![t(self)], None)
    }

    /// `torch.nn.functional.softmin(x, dim)`.
    pub fn softmin(&self, dim: i64) -> Tensor {
        record(Op::Softmin { dim, dtype: None }, vec![t(self)], None)
    }

    /// `torch.nn.functional.glu(x, dim)`.
    pub fn glu(&self, dim: i64) -> Tensor {
        record(Op::Glu { dim }, vec![t(self)], None)
    }

    /// `torch.var(x, dims, correction=correction, keepdim=keepdim)` (all
    /// dims when `dims` is empty; `correction` 1 is Bessel's).
    pub fn var(&self, dims: &[i64], correction: f64, keepdim: bool) -> Tensor {
        let op = Op::Var {
            dims: opt_dims(dims),
            correction: Scalar::Float(correction),
            keepdim,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.std(x, dims, correction=correction, keepdim=keepdim)`.
    pub fn std(&self, dims: &[i64], correction: f64, keepdim: bool) -> Tensor {
        let op = Op::Std {
            dims: opt_dims(dims),
            correction: Scalar::Float(correction),
            keepdim,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.var_mean`: `(var, mean)`.
    pub fn var_mean(&self, dims: &[i64], correction: f64, keepdim: bool) -> (Tensor, Tensor) {
        let op = Op::VarMean {
            dims: opt_dims(dims),
            correction: Scalar::Float(correction),
            keepdim,
        };
        pair(record_all(op, vec![t(self)], None, Some(2)))
    }

    /// `torch.std_mean`: `(std, mean)`.
    pub fn std_mean(&self, dims: &[i64], correction: f64, keepdim: bool) -> (Tensor, Tensor) {
        let op = Op::StdMean {
            dims: opt_dims(dims),
            correction: Scalar::Float(correction),
            keepdim,
        };
        pair(record_all(op, vec![t(self)], None, Some(2)))
    }

    /// `torch.logsumexp(x, dims, keepdim)`.
    pub fn logsumexp(&self, dims: &[i64], keepdim: bool) -> Tensor {
        let op = Op::Logsumexp {
            dims: dims.to_vec(),
            keepdim,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.nansum(x, dims, keepdim)`.
    pub fn nansum(&self, dims: &[i64], keepdim: bool) -> Tensor {
        let op = Op::Nansum {
            dims: opt_dims(dims),
            keepdim,
            dtype: None,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.nanmean(x, dims, keepdim)`.
    pub fn nanmean(&self, dims: &[i64], keepdim: bool) -> Tensor {
        let op = Op::Nanmean {
            dims: opt_dims(dims),
            keepdim,
            dtype: None,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.count_nonzero(x, dims)`.
    pub fn count_nonzero(&self, dims: &[i64]) -> Tensor {
        let op = Op::CountNonzero {
            dims: opt_dims(dims),
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.linalg.vector_norm(x, ord, dims, keepdim)`.
    pub fn vector_norm(&self, ord: f64, dims: &[i64], keepdim: bool) -> Tensor {
        let op = Op::LinalgVectorNorm {
            ord: Scalar::Float(ord),
            dims: opt_dims(dims),
            keepdim,
            dtype: None,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.cumsum(x, dim)`.
    pub fn cumsum(&self, dim: i64) -> Tensor {
        record(Op::Cumsum { dim, dtype: None }, vec![t(self)], None)
    }

    /// `torch.cumprod(x, dim)`.
    pub fn cumprod(&self, dim: i64) -> Tensor {
        record(Op::Cumprod { dim, dtype: None }, vec![t(self)], None)
    }

    /// `torch.logcumsumexp(x, dim)`.
    pub fn logcumsumexp(&self, dim: i64) -> Tensor {
        record(Op::Logcumsumexp { dim }, vec![t(self)], None)
    }

    /// `torch.cummax(x, dim)`: `(values, indices)`.
    pub fn cummax(&self, dim: i64) -> (Tensor, Tensor) {
        pair(record_all(Op::Cummax { dim }, vec![t(self)], None, Some(2)))
    }

    /// `torch.cummin(x, dim)`: `(values, indices)`.
    pub fn cummin(&self, dim: i64) -> (Tensor, Tensor) {
        pair(record_all(Op::Cummin { dim }, vec![t(self)], None, Some(2)))
    }

    /// `torch.xlogy(self, other)`.
    pub fn xlogy(&self, other: impl Into<Input>) -> Tensor {
        record(Op::Xlogy, vec![t(self), other.into()], None)
    }

    /// `torch.special.xlog1py(self, other)`.
    pub fn xlog1py(&self, other: impl Into<Input>) -> Tensor {
        record(Op::SpecialXlog1py, vec![t(self), other.into()], None)
    }

    /// `torch.sgn`: `sign` of real tensors, `z/|z|` of complex ones.
    pub fn sgn(&self) -> Tensor {
        record(Op::Sgn, vec![t(self)], None)
    }

    /// `torch.round(self, decimals=decimals)`.
    pub fn round_decimals(&self, decimals: i64) -> Tensor {
        record(Op::RoundDecimals { decimals }, vec![t(self)], None)
    }

    /// `torch.polygamma(n, self)`.
    pub fn polygamma(&self, n: i64) -> Tensor {
        record(Op::Polygamma { n }, vec![t(self)], None)
    }

    /// `torch.fmax`.
    pub fn fmax(&self, other: &Tensor) -> Tensor {
        record(Op::Fmax, vec![t(self), t(other)], None)
    }

    /// `torch.fmin`.
    pub fn fmin(&self, other: &Tensor) -> Tensor {
        record(Op::Fmin, vec![t(self), t(other)], None)
    }

    /// `torch.heaviside(self, values)`.
    pub fn heaviside(&self, values: &Tensor) -> Tensor {
        record(Op::Heaviside, vec![t(self), t(values)], None)
    }

    /// `torch.logaddexp`.
    pub fn logaddexp(&self, other: &Tensor) -> Tensor {
        record(Op::Logaddexp, vec![t(self), t(other)], None)
    }

    /// `torch.logaddexp2`.
    pub fn logaddexp2(&self, other: &Tensor) -> Tensor {
        record(Op::Logaddexp2, vec![t(self), t(other)], None)
    }

    /// `torch.hypot`.
    pub fn hypot(&self, other: &Tensor) -> Tensor {
        record(Op::Hypot, vec![t(self), t(other)], None)
    }

    /// `torch.copysign(self, other)` (a tensor or a scalar `other`).
    pub fn copysign(&self, other: impl Into<Input>) -> Tensor {
        record(Op::Copysign, vec![t(self), other.into()], None)
    }

    /// `torch.ldexp(self, other)`: `self · 2^other`.
    pub fn ldexp(&self, other: &Tensor) -> Tensor {
        record(Op::Ldexp, vec![t(self), t(other)], None)
    }

    /// `torch.lerp(self, end, weight)` (a scalar or a tensor weight).
    pub fn lerp(&self, end: &Tensor, weight: impl Into<Input>) -> Tensor {
        record(Op::Lerp, vec![t(self), t(end), weight.into()], None)
    }

    /// `torch.addcmul(self, tensor1, tensor2, value=value)`.
    pub fn addcmul(&self, tensor1: &Tensor, tensor2: &Tensor, value: impl Into<Scalar>) -> Tensor {
        let op = Op::Addcmul {
            value: value.into(),
        };
        record(op, vec![t(self), t(tensor1), t(tensor2)], None)
    }

    /// `torch.addcdiv(self, tensor1, tensor2, value=value)`.
    pub fn addcdiv(&self, tensor1: &Tensor, tensor2: &Tensor, value: impl Into<Scalar>) -> Tensor {
        let op = Op::Addcdiv {
            value: value.into(),
        };
        record(op, vec![t(self), t(tensor1), t(tensor2)], None)
    }

    /// `torch.clamp_min(self, min)`.
    pub fn clamp_min(&self, min: impl Into<Scalar>) -> Tensor {
        record(Op::ClampMin { min: min.into() }, vec![t(self)], None)
    }

    /// `torch.clamp_max(self, max)`.
    pub fn clamp_max(&self, max: impl Into<Scalar>) -> Tensor {
        record(Op::ClampMax { max: max.into() }, vec![t(self)], None)
    }

    /// `torch.float_power(self, exponent)`.
    pub fn float_power(&self, exponent: impl Into<Input>) -> Tensor {
        record(Op::FloatPower, vec![t(self), exponent.into()], None)
    }

    /// `torch.true_divide(self, other)`.
    pub fn true_divide(&self, other: impl Into<Input>) -> Tensor {
        record(Op::TrueDivide, vec![t(self), other.into()], None)
    }

    /// `torch.floor_divide(self, other)`.
    pub fn floor_divide(&self, other: impl Into<Input>) -> Tensor {
        record(Op::FloorDivide, vec![t(self), other.into()], None)
    }

    /// `torch.narrow(self, dim, start, length)`: a view.
    pub fn narrow(&self, dim: i64, start: i64, length: i64) -> Tensor {
        record(Op::Narrow { dim, start, length }, vec![t(self)], None)
    }

    /// `torch.movedim(self, source, destination)`: a view.
    pub fn movedim(&self, source: &[i64], destination: &[i64]) -> Tensor {
        let op = Op::Movedim {
            source: source.to_vec(),
            destination: destination.to_vec(),
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.broadcast_to(self, size)`: a view.
    pub fn broadcast_to(&self, size: &[i64]) -> Tensor {
        record(
            Op::BroadcastTo {
                size: size.to_vec(),
            },
            vec![t(self)],
            None,
        )
    }

    /// `torch.unflatten(self, dim, sizes)`: a view.
    pub fn unflatten(&self, dim: i64, sizes: &[i64]) -> Tensor {
        let op = Op::Unflatten {
            dim,
            sizes: sizes.to_vec(),
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.atleast_1d`, `atleast_2d`, `atleast_3d` (`n` = 1, 2 or 3).
    pub fn atleast(&self, n: usize) -> Tensor {
        let op = match n {
            0 | 1 => Op::Atleast1d,
            2 => Op::Atleast2d,
            _ => Op::Atleast3d,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.roll(self, shifts, dims)` (the flattened tensor when `dims`
    /// is empty).
    pub fn roll(&self, shifts: &[i64], dims: &[i64]) -> Tensor {
        let op = Op::Roll {
            shifts: shifts.to_vec(),
            dims: dims.to_vec(),
        };
        record(op, vec![t(self)], None)
    }

    /// `Tensor.repeat(*repeats)`.
    pub fn repeat(&self, repeats: &[i64]) -> Tensor {
        let op = Op::Repeat {
            repeats: repeats.to_vec(),
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.tile(self, dims)`.
    pub fn tile(&self, dims: &[i64]) -> Tensor {
        record(
            Op::Tile {
                dims: dims.to_vec(),
            },
            vec![t(self)],
            None,
        )
    }

    /// `torch.tril(self, diagonal)`.
    pub fn tril(&self, diagonal: i64) -> Tensor {
        record(Op::Tril { diagonal }, vec![t(self)], None)
    }

    /// `torch.triu(self, diagonal)`.
    pub fn triu(&self, diagonal: i64) -> Tensor {
        record(Op::Triu { diagonal }, vec![t(self)], None)
    }

    /// `torch.flip(self, dims)`.
    pub fn flip(&self, dims: &[i64]) -> Tensor {
        record(
            Op::Flip {
                dims: dims.to_vec(),
            },
            vec![t(self)],
            None,
        )
    }

    /// `torch.constant_pad_nd(self, pad, value)`, which `F.pad` with mode
    /// "constant" calls.
    pub fn constant_pad_nd(&self, pad: &[i64], value: impl Into<Scalar>) -> Tensor {
        let op = Op::ConstantPadNd {
            pad: pad.to_vec(),
            value: value.into(),
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.gather(self, dim, index)`.
    pub fn gather(&self, dim: i64, index: &Tensor) -> Tensor {
        let op = Op::Gather {
            dim,
            sparse_grad: false,
        };
        record(op, vec![t(self), t(index)], None)
    }

    /// `torch.scatter(self, dim, index, src)` (`src` a tensor or a value).
    pub fn scatter(&self, dim: i64, index: &Tensor, src: impl Into<Input>) -> Tensor {
        record(
            Op::Scatter { dim },
            vec![t(self), t(index), src.into()],
            None,
        )
    }

    /// `torch.scatter_add(self, dim, index, src)`.
    pub fn scatter_add(&self, dim: i64, index: &Tensor, src: &Tensor) -> Tensor {
        record(
            Op::ScatterAdd { dim },
            vec![t(self), t(index), t(src)],
            None,
        )
    }

    /// `torch.scatter_reduce(self, dim, index, src, reduce, include_self)`.
    pub fn scatter_reduce(
        &self,
        dim: i64,
        index: &Tensor,
        src: &Tensor,
        reduce: kiln_ir::ops::attrs::ScatterReduce,
        include_self: bool,
    ) -> Tensor {
        let op = Op::ScatterReduce {
            dim,
            reduce,
            include_self,
        };
        record(op, vec![t(self), t(index), t(src)], None)
    }

    /// `torch.index_add(self, dim, index, source, alpha=alpha)`.
    pub fn index_add(
        &self,
        dim: i64,
        index: &Tensor,
        source: &Tensor,
        alpha: impl Into<Scalar>,
    ) -> Tensor {
        let op = Op::IndexAdd {
            dim,
            alpha: alpha.into(),
        };
        record(op, vec![t(self), t(index), t(source)], None)
    }

    /// `torch.take(self, index)`.
    pub fn take(&self, index: &Tensor) -> Tensor {
        record(Op::Take, vec![t(self), t(index)], None)
    }

    /// `torch.tan`.
    pub fn tan(&self) -> Tensor {
        record(Op::Tan, vec![t(self)], None)
    }

    /// `torch.arctan`: [`Tensor::atan`].
    pub fn arctan(&self) -> Tensor {
        self.atan()
    }

    /// `torch.arcsin`: [`Tensor::asin`].
    pub fn arcsin(&self) -> Tensor {
        self.asin()
    }

    /// `torch.arccos`: [`Tensor::acos`].
    pub fn arccos(&self) -> Tensor {
        self.acos()
    }

    /// `torch.arctan2`: [`Tensor::atan2`] (`self` is y, `other` x).
    pub fn arctan2(&self, other: impl Into<Input>) -> Tensor {
        self.atan2(other)
    }

    /// `torch.sinh`.
    pub fn sinh(&self) -> Tensor {
        record(Op::Sinh, vec![t(self)], None)
    }

    /// `torch.cosh`.
    pub fn cosh(&self) -> Tensor {
        record(Op::Cosh, vec![t(self)], None)
    }

    /// `torch.asinh`.
    pub fn asinh(&self) -> Tensor {
        record(Op::Asinh, vec![t(self)], None)
    }

    /// `torch.acosh`.
    pub fn acosh(&self) -> Tensor {
        record(Op::Acosh, vec![t(self)], None)
    }

    /// `torch.atanh`.
    pub fn atanh(&self) -> Tensor {
        record(Op::Atanh, vec![t(self)], None)
    }

    /// `torch.log10`.
    pub fn log10(&self) -> Tensor {
        record(Op::Log10, vec![t(self)], None)
    }

    /// `torch.exp2`.
    pub fn exp2(&self) -> Tensor {
        record(Op::Exp2, vec![t(self)], None)
    }

    /// `torch.max(self, dim, keepdim)`: `(values, indices)`.
    pub fn max_dim(&self, dim: i64, keepdim: bool) -> (Tensor, Tensor) {
        pair(record_all(
            Op::MaxDim { dim, keepdim },
            vec![t(self)],
            None,
            Some(2),
        ))
    }

    /// `torch.min(self, dim, keepdim)`: `(values, indices)`.
    pub fn min_dim(&self, dim: i64, keepdim: bool) -> (Tensor, Tensor) {
        pair(record_all(
            Op::MinDim { dim, keepdim },
            vec![t(self)],
            None,
            Some(2),
        ))
    }

    /// `torch.argsort(self, dim, descending, stable)`.
    pub fn argsort(&self, dim: i64, descending: bool, stable: bool) -> Tensor {
        let op = Op::Argsort {
            dim,
            descending,
            stable,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.repeat_interleave(self, repeats, dim)` with a static count.
    pub fn repeat_interleave(&self, repeats: i64, dim: Option<i64>) -> Tensor {
        record(Op::RepeatInterleave { repeats, dim }, vec![t(self)], None)
    }

    /// `torch.square`.
    pub fn square(&self) -> Tensor {
        record(Op::Square, vec![t(self)], None)
    }

    /// `torch.positive`.
    pub fn positive(&self) -> Tensor {
        record(Op::Positive, vec![t(self)], None)
    }

    /// `torch.isinf`.
    pub fn isinf(&self) -> Tensor {
        record(Op::Isinf, vec![t(self)], None)
    }

    /// `torch.isfinite`.
    pub fn isfinite(&self) -> Tensor {
        record(Op::Isfinite, vec![t(self)], None)
    }

    /// `torch.isposinf`.
    pub fn isposinf(&self) -> Tensor {
        record(Op::Isposinf, vec![t(self)], None)
    }

    /// `torch.isneginf`.
    pub fn isneginf(&self) -> Tensor {
        record(Op::Isneginf, vec![t(self)], None)
    }

    /// `torch.frac`.
    pub fn frac(&self) -> Tensor {
        record(Op::Frac, vec![t(self)], None)
    }

    /// `torch.deg2rad`.
    pub fn deg2rad(&self) -> Tensor {
        record(Op::Deg2rad, vec![t(self)], None)
    }

    /// `torch.rad2deg`.
    pub fn rad2deg(&self) -> Tensor {
        record(Op::Rad2deg, vec![t(self)], None)
    }

    /// `torch.logit(x, eps)`.
    pub fn logit(&self, eps: Option<f64>) -> Tensor {
        record(Op::Logit { eps: eps.map(F64) }, vec![t(self)], None)
    }

    /// `torch.nan_to_num(x)` with PyTorch's defaults (0, and the dtype's
    /// largest and lowest finite values).
    pub fn nan_to_num(&self) -> Tensor {
        let op = Op::NanToNum {
            nan: None,
            posinf: None,
            neginf: None,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.sinc`.
    pub fn sinc(&self) -> Tensor {
        record(Op::Sinc, vec![t(self)], None)
    }

    /// Exact gelu.
    pub fn gelu(&self) -> Tensor {
        record(
            Op::Gelu {
                approximate: GeluApproximate::None,
            },
            vec![t(self)],
            None,
        )
    }

    /// gelu with `approximate = "tanh"`.
    pub fn gelu_tanh(&self) -> Tensor {
        record(
            Op::Gelu {
                approximate: GeluApproximate::Tanh,
            },
            vec![t(self)],
            None,
        )
    }
}

impl Tensor {
    /// `torch.div(self, other, rounding_mode=...)`.
    pub fn div_rounding(&self, other: impl Into<Input>, mode: RoundingMode) -> Tensor {
        let op = match mode {
            RoundingMode::Trunc => BinaryOp::DivTrunc,
            RoundingMode::Floor => BinaryOp::DivFloor,
        };
        self.binary(op, other)
    }

    /// `a.add_(b)`: add, written into `a`'s dtype.
    pub fn add_(&self, other: impl Into<Input>) -> Tensor {
        self.binary_in_place(BinaryOp::Add, other)
    }

    /// `a.sub_(b)`: subtract, written into `a`'s dtype.
    pub fn sub_(&self, other: impl Into<Input>) -> Tensor {
        self.binary_in_place(BinaryOp::Sub, other)
    }

    /// `a.mul_(b)`: multiply, written into `a`'s dtype.
    pub fn mul_(&self, other: impl Into<Input>) -> Tensor {
        self.binary_in_place(BinaryOp::Mul, other)
    }

    /// `a.div_(b)`: true division, written into `a`'s dtype (an error for
    /// an integral or bool `a`, as in PyTorch).
    pub fn div_(&self, other: impl Into<Input>) -> Tensor {
        self.binary_in_place(BinaryOp::Div, other)
    }

    /// `torch.clamp(self, min, max)` with scalar bounds.
    pub fn clamp(&self, min: Option<impl Into<Scalar>>, max: Option<impl Into<Scalar>>) -> Tensor {
        let op = Op::Clamp {
            min: min.map(Into::into),
            max: max.map(Into::into),
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.clamp(self, min, max)` with tensor bounds.
    pub fn clamp_tensor(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Tensor {
        let op = Op::Clamp {
            min: None,
            max: None,
        };
        record(op, vec![t(self), Input::from(min), Input::from(max)], None)
    }

    /// `x.to(dtype)`.
    pub fn to_dtype(&self, dtype: DType) -> Tensor {
        record(Op::Cast { dtype }, vec![t(self)], None)
    }

    /// `x.to(device)`.
    pub fn to_device(&self, device: Device) -> Tensor {
        let op = Op::To {
            dtype: None,
            device: Some(device),
            memory_format: MemoryFormat::Preserve,
            copy: false,
        };
        record(op, vec![t(self)], None)
    }

    /// `x.to(memory_format=...)`.
    pub fn to_memory_format(&self, memory_format: MemoryFormat) -> Tensor {
        let op = Op::To {
            dtype: None,
            device: None,
            memory_format,
            copy: false,
        };
        record(op, vec![t(self)], None)
    }

    /// `x.sum(dims, keepdim)`; empty `dims` reduces every dim.
    pub fn sum(&self, dims: &[i64], keepdim: bool) -> Tensor {
        self.reduce(ReduceOp::Sum, dims, keepdim, None)
    }

    /// `x.sum(dims, keepdim, dtype=...)`.
    pub fn sum_dtype(&self, dims: &[i64], keepdim: bool, dtype: DType) -> Tensor {
        self.reduce(ReduceOp::Sum, dims, keepdim, Some(dtype))
    }

    /// `x.prod(dims, keepdim)`; empty `dims` reduces every dim.
    pub fn prod(&self, dims: &[i64], keepdim: bool) -> Tensor {
        self.reduce(ReduceOp::Prod, dims, keepdim, None)
    }

    /// `x.mean(dims, keepdim)`; empty `dims` reduces every dim.
    pub fn mean(&self, dims: &[i64], keepdim: bool) -> Tensor {
        self.mean_with(dims, keepdim, None)
    }

    /// `x.mean(dims, keepdim, dtype=...)`.
    pub fn mean_dtype(&self, dims: &[i64], keepdim: bool, dtype: DType) -> Tensor {
        self.mean_with(dims, keepdim, Some(dtype))
    }

    fn mean_with(&self, dims: &[i64], keepdim: bool, dtype: Option<DType>) -> Tensor {
        let dims = (!dims.is_empty()).then(|| dims.to_vec());
        record(
            Op::Mean {
                dims,
                keepdim,
                dtype,
            },
            vec![t(self)],
            None,
        )
    }

    /// `x.amax(dims, keepdim)`; empty `dims` reduces every dim. NaN
    /// propagates.
    pub fn amax(&self, dims: &[i64], keepdim: bool) -> Tensor {
        self.reduce(ReduceOp::Amax, dims, keepdim, None)
    }

    /// `x.amin(dims, keepdim)`; empty `dims` reduces every dim. NaN
    /// propagates.
    pub fn amin(&self, dims: &[i64], keepdim: bool) -> Tensor {
        self.reduce(ReduceOp::Amin, dims, keepdim, None)
    }

    /// `x.argmax(dim, keepdim)`; `None` flattens.
    pub fn argmax(&self, dim: Option<i64>, keepdim: bool) -> Tensor {
        record(
            Op::ArgReduce {
                op: ArgReduceOp::Argmax,
                dim,
                keepdim,
            },
            vec![t(self)],
            None,
        )
    }

    /// `x.argmin(dim, keepdim)`; `None` flattens.
    pub fn argmin(&self, dim: Option<i64>, keepdim: bool) -> Tensor {
        record(
            Op::ArgReduce {
                op: ArgReduceOp::Argmin,
                dim,
                keepdim,
            },
            vec![t(self)],
            None,
        )
    }

    /// `torch.softmax(x, dim)`.
    pub fn softmax(&self, dim: i64) -> Tensor {
        record(Op::Softmax { dim, dtype: None }, vec![t(self)], None)
    }

    /// `torch.log_softmax(x, dim)`.
    pub fn log_softmax(&self, dim: i64) -> Tensor {
        record(Op::LogSoftmax { dim, dtype: None }, vec![t(self)], None)
    }

    /// `F.softmax(x, dim, dtype=...)`.
    pub fn softmax_dtype(&self, dim: i64, dtype: DType) -> Tensor {
        record(
            Op::Softmax {
                dim,
                dtype: Some(dtype),
            },
            vec![t(self)],
            None,
        )
    }

    /// `F.layer_norm(x, normalized_shape, weight, bias, eps)`.
    pub fn layer_norm(
        &self,
        normalized_shape: &[i64],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Tensor {
        let operands = vec![t(self), Input::from(weight), Input::from(bias)];
        let op = Op::LayerNorm {
            normalized_shape: normalized_shape.to_vec(),
            eps: F64(eps),
        };
        record(op, operands, None)
    }

    /// `x.reshape(shape)`: a view where the strides allow one, else a
    /// copy; one dim may be `-1`.
    pub fn reshape(&self, shape: &[i64]) -> Tensor {
        record(
            Op::Reshape {
                shape: shape.to_vec(),
            },
            vec![t(self)],
            None,
        )
    }

    /// `x.view(shape)`: an error where the strides allow no view; one dim
    /// may be `-1`.
    pub fn view(&self, shape: &[i64]) -> Tensor {
        record(
            Op::View {
                shape: shape.to_vec(),
            },
            vec![t(self)],
            None,
        )
    }

    /// `x.permute(dims)`: a view with its dims in the order `dims` lists.
    pub fn permute(&self, dims: &[i64]) -> Tensor {
        record(
            Op::Permute {
                dims: dims.to_vec(),
            },
            vec![t(self)],
            None,
        )
    }

    /// `x.transpose(dim0, dim1)`: a view with two dims swapped.
    pub fn transpose(&self, dim0: i64, dim1: i64) -> Tensor {
        record(Op::Transpose { dim0, dim1 }, vec![t(self)], None)
    }

    /// `x.t()`: a matrix transposed (a view); 0-d and 1-d tensors as they
    /// are, more dims an error.
    pub fn t(&self) -> Tensor {
        record(Op::T, vec![t(self)], None)
    }

    /// `x.expand(shape)`: a view that broadcasts size-1 dims (stride 0)
    /// and adds leading dims; `-1` keeps a size.
    pub fn expand(&self, shape: &[i64]) -> Tensor {
        record(
            Op::Expand {
                shape: shape.to_vec(),
            },
            vec![t(self)],
            None,
        )
    }

    /// `x.squeeze()` (`None`: every size-1 dim) or `x.squeeze(dims)`.
    pub fn squeeze(&self, dims: Option<&[i64]>) -> Tensor {
        record(
            Op::Squeeze {
                dims: dims.map(<[i64]>::to_vec),
            },
            vec![t(self)],
            None,
        )
    }

    /// `x.unsqueeze(dim)`: a view with a size-1 dim inserted at `dim`.
    pub fn unsqueeze(&self, dim: i64) -> Tensor {
        record(Op::Unsqueeze { dim }, vec![t(self)], None)
    }

    /// `x[start:end:step]` along `dim`; start and end clamp like PyTorch.
    pub fn slice(&self, dim: i64, start: Option<i64>, end: Option<i64>, step: i64) -> Tensor {
        record(
            Op::Slice {
                dim,
                start,
                end,
                step,
            },
            vec![t(self)],
            None,
        )
    }

    /// `x.select(dim, index)`: the slice at `index` along `dim`, as a view
    /// without that dim (a negative `index` counts from the end).
    pub fn select(&self, dim: i64, index: i64) -> Tensor {
        record(Op::Select { dim, index }, vec![t(self)], None)
    }

    /// `x.flatten(start_dim, end_dim)`: the dims from `start_dim` to
    /// `end_dim` (inclusive) as one; a view where the strides allow one,
    /// else a copy.
    pub fn flatten(&self, start_dim: i64, end_dim: i64) -> Tensor {
        record(Op::Flatten { start_dim, end_dim }, vec![t(self)], None)
    }

    /// `x.contiguous()`: the tensor itself when it is row-major, else a
    /// row-major copy.
    pub fn contiguous(&self) -> Tensor {
        self.contiguous_in(MemoryFormat::Contiguous)
    }

    /// `x.contiguous(memory_format=...)`: the tensor itself when it is
    /// already laid out in that format, else a copy laid out in it.
    pub fn contiguous_in(&self, memory_format: MemoryFormat) -> Tensor {
        record(Op::Contiguous { memory_format }, vec![t(self)], None)
    }

    /// `x.clone(memory_format=...)`; PyTorch's default is preserve.
    pub fn clone_as(&self, memory_format: MemoryFormat) -> Tensor {
        record(
            Op::Clone {
                memory_format,
                strides: None,
            },
            vec![t(self)],
            None,
        )
    }

    /// `torch.matmul`.
    pub fn matmul(&self, other: &Tensor) -> Tensor {
        record(Op::Matmul, vec![t(self), t(other)], None)
    }

    /// `F.linear(x, weight, bias)`: `x @ weightᵀ + bias`, with `weight`
    /// stored `[out_features, in_features]` as nn.Linear stores it.
    pub fn linear(&self, weight: &Tensor, bias: Option<&Tensor>) -> Tensor {
        record(
            Op::Linear,
            vec![t(self), t(weight), Input::from(bias)],
            None,
        )
    }

    /// `F.scaled_dot_product_attention(self, key, value, attn_mask, ...)`
    /// with `self` the query (`[..., L, E]`); the options say whether the
    /// mask is causal, the scale (default `1/√E`) and grouped-query heads.
    pub fn scaled_dot_product_attention(
        &self,
        key: &Tensor,
        value: &Tensor,
        attn_mask: Option<&Tensor>,
        options: AttentionOptions,
    ) -> Tensor {
        let op = Op::ScaledDotProductAttention {
            dropout_p: F64(0.0),
            is_causal: options.is_causal,
            scale: options.scale.map(F64),
            enable_gqa: options.enable_gqa,
        };
        record(
            op,
            vec![t(self), t(key), t(value), Input::from(attn_mask)],
            None,
        )
    }

    /// `F.multi_head_attention_forward(self, key, value, ...)` in
    /// inference, sequence-first (`self`: `[L, N, E]`, or `[L, E]`
    /// unbatched): the output and, when `args` ask for them, the attention
    /// weights. Without them the attention is one
    /// `scaled_dot_product_attention`, which the backends fuse.
    pub fn multi_head_attention_forward(
        &self,
        key: &Tensor,
        value: &Tensor,
        args: &MultiHeadAttentionArgs<'_>,
    ) -> (Tensor, Option<Tensor>) {
        let op = Op::MultiHeadAttentionForward {
            embed_dim_to_check: args.embed_dim,
            num_heads: args.num_heads,
            add_zero_attn: args.add_zero_attn,
            dropout_p: F64(0.0),
            training: false,
            need_weights: args.need_weights,
            use_separate_proj_weight: args.separate.is_some(),
            average_attn_weights: args.average_attn_weights,
            is_causal: args.is_causal,
        };
        let [q_proj, k_proj, v_proj] = args.separate.map_or([None; 3], |w| w.map(Some));
        let operands = vec![
            t(self),
            t(key),
            t(value),
            Input::from(args.in_proj_weight),
            Input::from(args.in_proj_bias),
            Input::from(args.bias_kv.map(|b| b.0)),
            Input::from(args.bias_kv.map(|b| b.1)),
            t(args.out_proj_weight),
            Input::from(args.out_proj_bias),
            Input::from(args.key_padding_mask),
            Input::from(args.attn_mask),
            Input::from(q_proj),
            Input::from(k_proj),
            Input::from(v_proj),
            Input::from(args.static_kv.map(|s| s.0)),
            Input::from(args.static_kv.map(|s| s.1)),
        ];
        let count = if args.need_weights { 2 } else { 1 };
        let mut results = record_all(op, operands, None, Some(count)).into_iter();
        let output = results
            .next()
            .unwrap_or_else(|| Tensor::poisoned(self.trace));
        (output, results.next())
    }

    /// `torch.index_select(x, dim, index)`: the entries at `index` (int32
    /// or int64) along `dim`.
    pub fn index_select(&self, dim: i64, index: &Tensor) -> Tensor {
        record(Op::IndexSelect { dim }, vec![t(self), t(index)], None)
    }

    /// `torch.index_copy(self, dim, index, source)`: `source`'s slices
    /// written at the positions `index` (int64) lists along `dim`.
    pub fn index_copy(&self, dim: i64, index: &Tensor, source: &Tensor) -> Tensor {
        record(
            Op::IndexCopy { dim },
            vec![t(self), t(index), t(source)],
            None,
        )
    }

    /// `torch.index_fill(self, dim, index, value)`: the slices at the
    /// positions `index` (int64, negative from the end) lists along `dim`
    /// set to `value` (a number or a 0-D tensor).
    pub fn index_fill(&self, dim: i64, index: &Tensor, value: impl Into<Input>) -> Tensor {
        record(
            Op::IndexFill { dim },
            vec![t(self), t(index), value.into()],
            None,
        )
    }

    /// `torch.take_along_dim(self, indices, dim)`: `gather` with the input
    /// and the indices broadcast against each other away from `dim`; with
    /// `None`, of the flattened input.
    pub fn take_along_dim(&self, indices: &Tensor, dim: Option<i64>) -> Tensor {
        record(Op::TakeAlongDim { dim }, vec![t(self), t(indices)], None)
    }

    /// `F.pad(self, padding, mode="reflect")`: `padding` lists left and
    /// right of the last dim first, for one, two or three trailing dims
    /// (`reflection_pad1d/2d/3d`).
    pub fn reflection_pad(&self, padding: &[i64]) -> Tensor {
        let padding = padding.to_vec();
        let op = match padding.len() {
            4 => Op::ReflectionPad2d { padding },
            6 => Op::ReflectionPad3d { padding },
            // Other lengths: reflection_pad1d's error names the length.
            _ => Op::ReflectionPad1d { padding },
        };
        record(op, vec![t(self)], None)
    }

    /// `F.pad(self, padding, mode="replicate")` (`replication_pad1d/2d/3d`).
    pub fn replication_pad(&self, padding: &[i64]) -> Tensor {
        let padding = padding.to_vec();
        let op = match padding.len() {
            4 => Op::ReplicationPad2d { padding },
            6 => Op::ReplicationPad3d { padding },
            _ => Op::ReplicationPad1d { padding },
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.slice_scatter(self, src, dim, start, end, step)`: `src`
    /// written over `self[start:end:step]` along `dim`.
    pub fn slice_scatter(
        &self,
        src: &Tensor,
        dim: i64,
        start: Option<i64>,
        end: Option<i64>,
        step: i64,
    ) -> Tensor {
        let op = Op::SliceScatter {
            dim,
            start,
            end,
            step,
        };
        record(op, vec![t(self), t(src)], None)
    }

    /// `torch.select_scatter(self, src, dim, index)`: `src` written over
    /// `self.select(dim, index)`.
    pub fn select_scatter(&self, src: &Tensor, dim: i64, index: i64) -> Tensor {
        record(
            Op::SelectScatter { dim, index },
            vec![t(self), t(src)],
            None,
        )
    }

    /// `F.pixel_shuffle(self, upscale_factor)`.
    pub fn pixel_shuffle(&self, upscale_factor: i64) -> Tensor {
        record(Op::PixelShuffle { upscale_factor }, vec![t(self)], None)
    }

    /// `F.pixel_unshuffle(self, downscale_factor)`.
    pub fn pixel_unshuffle(&self, downscale_factor: i64) -> Tensor {
        record(Op::PixelUnshuffle { downscale_factor }, vec![t(self)], None)
    }

    /// `F.channel_shuffle(self, groups)`.
    pub fn channel_shuffle(&self, groups: i64) -> Tensor {
        record(Op::ChannelShuffle { groups }, vec![t(self)], None)
    }

    /// `torch.rot90(self, k, dims)`: `k` quarter turns in the plane of
    /// `dims` (two dims).
    pub fn rot90(&self, k: i64, dims: &[i64]) -> Tensor {
        let op = Op::Rot90 {
            k,
            dims: dims.to_vec(),
        };
        record(op, vec![t(self)], None)
    }

    /// `self[indices]` with tensors (ATen's `index.Tensor`): `None` keeps
    /// a dim whole, as `:` does (`x[:, i]` is `x.index(&[None, Some(&i)])`).
    pub fn index(&self, indices: &[Option<&Tensor>]) -> Tensor {
        let mut operands = vec![t(self)];
        operands.extend(indices.iter().map(|i| Input::from(*i)));
        record(Op::Index, operands, None)
    }

    /// `torch.index_put(self, indices, values, accumulate)`: the
    /// functional `self[indices] = values` (`+=` with `accumulate`).
    pub fn index_put(
        &self,
        indices: &[Option<&Tensor>],
        values: &Tensor,
        accumulate: bool,
    ) -> Tensor {
        let mut operands = vec![t(self)];
        operands.extend(indices.iter().map(|i| Input::from(*i)));
        operands.push(t(values));
        record(Op::IndexPut { accumulate }, operands, None)
    }

    /// `F.embedding(self, weight)`: for indices `self`, the rows of
    /// `weight` (`[num_embeddings, dim]`), in the indices' shape plus `dim`.
    pub fn embedding(&self, weight: &Tensor) -> Tensor {
        let op = Op::Embedding {
            padding_idx: -1,
            scale_grad_by_freq: false,
            sparse: false,
        };
        record(op, vec![t(weight), t(self)], None)
    }

    /// `torch.topk(x, k, dim, largest, sorted)`: the values and their
    /// positions.
    pub fn topk(&self, k: i64, dim: i64, largest: bool, sorted: bool) -> (Tensor, Tensor) {
        let op = Op::Topk {
            k,
            dim,
            largest,
            sorted,
        };
        pair(record_all(op, vec![t(self)], None, Some(2)))
    }

    /// `torch.sort(x, dim, descending, stable=True)`: the values and their
    /// positions (Kiln's sort is always stable).
    pub fn sort(&self, dim: i64, descending: bool) -> (Tensor, Tensor) {
        let op = Op::Sort {
            dim,
            descending,
            stable: true,
        };
        pair(record_all(op, vec![t(self)], None, Some(2)))
    }

    /// `torch.aminmax(x, dim=..., keepdim=...)`: the smallest and the
    /// largest values.
    pub fn aminmax(&self, dim: Option<i64>, keepdim: bool) -> (Tensor, Tensor) {
        let op = Op::Aminmax { dim, keepdim };
        pair(record_all(op, vec![t(self)], None, Some(2)))
    }

    /// `torch.unbind(x, dim)`: one tensor per position along `dim`.
    pub fn unbind(&self, dim: i64) -> Vec<Tensor> {
        record_all(Op::Unbind { dim }, vec![t(self)], None, None)
    }

    /// `torch.split(x, split_size, dim)`.
    pub fn split(&self, split_size: i64, dim: i64) -> Vec<Tensor> {
        record_all(Op::Split { split_size, dim }, vec![t(self)], None, None)
    }

    /// `torch.split(x, [sizes...], dim)` (`split_with_sizes`).
    pub fn split_with_sizes(&self, split_sizes: &[i64], dim: i64) -> Vec<Tensor> {
        let op = Op::SplitWithSizes {
            split_sizes: split_sizes.to_vec(),
            dim,
        };
        record_all(op, vec![t(self)], None, None)
    }

    /// `torch.chunk(x, chunks, dim)`.
    pub fn chunk(&self, chunks: i64, dim: i64) -> Vec<Tensor> {
        record_all(Op::Chunk { chunks, dim }, vec![t(self)], None, None)
    }

    /// `torch.tensor_split(self, sections, dim)`: `sections` views of
    /// nearly equal size along `dim`.
    pub fn tensor_split(&self, sections: i64, dim: i64) -> Vec<Tensor> {
        let op = Op::TensorSplit {
            sections: Some(sections),
            indices: None,
            dim,
        };
        record_all(op, vec![t(self)], None, None)
    }

    /// `torch.tensor_split(self, indices, dim)`: the views between the
    /// positions `indices` lists along `dim`.
    pub fn tensor_split_at(&self, indices: &[i64], dim: i64) -> Vec<Tensor> {
        let op = Op::TensorSplit {
            sections: None,
            indices: Some(indices.to_vec()),
            dim,
        };
        record_all(op, vec![t(self)], None, None)
    }

    /// `torch.hsplit(self, sections)`: along dim 1 (0 for vectors).
    pub fn hsplit(&self, sections: i64) -> Vec<Tensor> {
        let op = Op::Hsplit {
            sections: Some(sections),
            indices: None,
        };
        record_all(op, vec![t(self)], None, None)
    }

    /// `torch.vsplit(self, sections)`: along dim 0.
    pub fn vsplit(&self, sections: i64) -> Vec<Tensor> {
        let op = Op::Vsplit {
            sections: Some(sections),
            indices: None,
        };
        record_all(op, vec![t(self)], None, None)
    }

    /// `torch.dsplit(self, sections)`: along dim 2.
    pub fn dsplit(&self, sections: i64) -> Vec<Tensor> {
        let op = Op::Dsplit {
            sections: Some(sections),
            indices: None,
        };
        record_all(op, vec![t(self)], None, None)
    }

    /// `torch.diagonal(self, offset, dim1, dim2)`: a view of the
    /// `offset`-th diagonal of the plane of `dim1` and `dim2`, as a last
    /// dim.
    pub fn diagonal(&self, offset: i64, dim1: i64, dim2: i64) -> Tensor {
        record(Op::Diagonal { offset, dim1, dim2 }, vec![t(self)], None)
    }

    /// `torch.diag(self, diagonal)`: a vector on a diagonal of a square
    /// matrix of zeros, or a copy of a matrix's diagonal.
    pub fn diag(&self, diagonal: i64) -> Tensor {
        record(Op::Diag { diagonal }, vec![t(self)], None)
    }

    /// `torch.diag_embed(self, offset, dim1, dim2)`: the last dim on the
    /// diagonals of two new dims.
    pub fn diag_embed(&self, offset: i64, dim1: i64, dim2: i64) -> Tensor {
        record(Op::DiagEmbed { offset, dim1, dim2 }, vec![t(self)], None)
    }

    /// `torch.diagflat(self, offset)`: the flattened tensor on a diagonal.
    pub fn diagflat(&self, offset: i64) -> Tensor {
        record(Op::Diagflat { offset }, vec![t(self)], None)
    }

    /// `torch.diagonal_scatter(self, src, offset, dim1, dim2)`: a copy
    /// with `src` written over the diagonal.
    pub fn diagonal_scatter(&self, src: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Tensor {
        let op = Op::DiagonalScatter { offset, dim1, dim2 };
        record(op, vec![t(self), t(src)], None)
    }

    /// `Tensor.unfold(dimension, size, step)`: a view of the windows of
    /// `size` elements every `step` along `dimension`.
    pub fn unfold(&self, dimension: i64, size: i64, step: i64) -> Tensor {
        let op = Op::Unfold {
            dimension,
            size,
            step,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.zeros_like(self, dtype)`: zeros laid out as `self`
    /// (preserve format).
    pub fn zeros_like(&self, dtype: Option<DType>) -> Tensor {
        let op = Op::ZerosLike {
            dtype,
            memory_format: MemoryFormat::Preserve,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.ones_like(self, dtype)`.
    pub fn ones_like(&self, dtype: Option<DType>) -> Tensor {
        let op = Op::OnesLike {
            dtype,
            memory_format: MemoryFormat::Preserve,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.full_like(self, fill_value, dtype)`.
    pub fn full_like(&self, fill_value: impl Into<Scalar>, dtype: Option<DType>) -> Tensor {
        let op = Op::FullLike {
            fill_value: fill_value.into(),
            dtype,
            memory_format: MemoryFormat::Preserve,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.empty_like(self, dtype)` (zero-filled in Kiln).
    pub fn empty_like(&self, dtype: Option<DType>) -> Tensor {
        let op = Op::EmptyLike {
            dtype,
            memory_format: MemoryFormat::Preserve,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.kthvalue(self, k, dim, keepdim)`: the `k`-th smallest values
    /// along `dim` and their positions.
    pub fn kthvalue(&self, k: i64, dim: i64, keepdim: bool) -> (Tensor, Tensor) {
        let op = Op::Kthvalue { k, dim, keepdim };
        pair(record_all(op, vec![t(self)], None, Some(2)))
    }

    /// `torch.median(self)`: the lower median of every element (NaN if
    /// any is).
    pub fn median(&self) -> Tensor {
        let op = Op::Median {
            dim: None,
            keepdim: false,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.median(self, dim, keepdim)`: the lower medians along `dim`
    /// and their positions.
    pub fn median_dim(&self, dim: i64, keepdim: bool) -> (Tensor, Tensor) {
        let op = Op::Median {
            dim: Some(dim),
            keepdim,
        };
        pair(record_all(op, vec![t(self)], None, Some(2)))
    }

    /// `torch.nanmedian(self)`: the median of the elements that are not NaN.
    pub fn nanmedian(&self) -> Tensor {
        let op = Op::Nanmedian {
            dim: None,
            keepdim: false,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.nanmedian(self, dim, keepdim)`: along `dim`, with positions.
    pub fn nanmedian_dim(&self, dim: i64, keepdim: bool) -> (Tensor, Tensor) {
        let op = Op::Nanmedian {
            dim: Some(dim),
            keepdim,
        };
        pair(record_all(op, vec![t(self)], None, Some(2)))
    }

    /// `torch.mode(self, dim, keepdim)`: the most frequent values along
    /// `dim` and their positions.
    pub fn mode(&self, dim: i64, keepdim: bool) -> (Tensor, Tensor) {
        let op = Op::Mode { dim, keepdim };
        pair(record_all(op, vec![t(self)], None, Some(2)))
    }

    /// `torch.as_strided(self, size, stride, storage_offset)`: a view of
    /// the storage with these sizes and strides.
    pub fn as_strided(&self, size: &[i64], stride: &[i64], storage_offset: Option<i64>) -> Tensor {
        let op = Op::AsStrided {
            size: size.to_vec(),
            stride: stride.to_vec(),
            storage_offset,
        };
        record(op, vec![t(self)], None)
    }
}

/// The two results of an op that has two (`record_all` gives as many as
/// it is asked for, poisoned when the op failed).
fn pair(results: Vec<Tensor>) -> (Tensor, Tensor) {
    let mut results = results.into_iter();
    match (results.next(), results.next()) {
        (Some(a), Some(b)) => (a, b),
        (Some(a), None) => (a.clone(), a),
        _ => (Tensor::poisoned(0), Tensor::poisoned(0)),
    }
}

/// `torch.stack(tensors, dim)`.
pub fn stack(tensors: &[&Tensor], dim: i64) -> Tensor {
    record(
        Op::Stack { dim },
        tensors.iter().map(|x| t(x)).collect(),
        None,
    )
}

/// `torch.where(cond, a, b)`.
pub fn where_(cond: &Tensor, a: impl Into<Input>, b: impl Into<Input>) -> Tensor {
    record(Op::Where, vec![t(cond), a.into(), b.into()], None)
}

/// `torch.einsum(equation, tensors)`: products of the operands summed
/// over the subscripts the output drops (`"bhqd,bhkd->bhqk"`).
pub fn einsum(equation: &str, tensors: &[&Tensor]) -> Tensor {
    let op = Op::Einsum {
        equation: equation.to_string(),
        path: None,
    };
    record(op, tensors.iter().map(|x| t(x)).collect(), None)
}

/// `torch.hstack(tensors)`: side by side (`cat` along dim 1, or 0 for
/// vectors).
pub fn hstack(tensors: &[&Tensor]) -> Tensor {
    record(Op::Hstack, tensors.iter().map(|x| t(x)).collect(), None)
}

/// `torch.vstack(tensors)`: rows on rows (at least 2-D, `cat` along dim 0).
pub fn vstack(tensors: &[&Tensor]) -> Tensor {
    record(Op::Vstack, tensors.iter().map(|x| t(x)).collect(), None)
}

/// `torch.dstack(tensors)`: along the third dim (at least 3-D).
pub fn dstack(tensors: &[&Tensor]) -> Tensor {
    record(Op::Dstack, tensors.iter().map(|x| t(x)).collect(), None)
}

/// `torch.column_stack(tensors)`: vectors as columns, side by side.
pub fn column_stack(tensors: &[&Tensor]) -> Tensor {
    record(
        Op::ColumnStack,
        tensors.iter().map(|x| t(x)).collect(),
        None,
    )
}

/// `torch.linalg.multi_dot(tensors)`: the chain of matrix products in
/// PyTorch's order (a 1-D first or last tensor a row or a column).
pub fn linalg_multi_dot(tensors: &[&Tensor]) -> Tensor {
    record(
        Op::LinalgMultiDot,
        tensors.iter().map(|x| t(x)).collect(),
        None,
    )
}

/// `torch.cat(tensors, dim)`.
pub fn cat(tensors: &[&Tensor], dim: i64) -> Tensor {
    record(
        Op::Cat { dim },
        tensors.iter().map(|x| t(x)).collect(),
        None,
    )
}

fn creation_device(device: Option<Device>) -> Option<Device> {
    // An explicit device wins; otherwise the scoped default, written out so
    // the graph does not depend on when it is compiled.
    Some(device.unwrap_or_else(default_device)).filter(|d| !d.is_cpu())
}

/// `torch.full(shape, value, dtype)` on the default device.
pub fn full(shape: &[i64], value: impl Into<Scalar>, dtype: Option<DType>) -> Tensor {
    let op = Op::Full {
        shape: shape.to_vec(),
        value: value.into(),
        dtype,
        device: creation_device(None),
    };
    record(op, vec![], None)
}

/// `torch.zeros(shape, dtype)`.
pub fn zeros(shape: &[i64], dtype: Option<DType>) -> Tensor {
    full(shape, 0.0, dtype)
}

/// `torch.ones(shape, dtype)`.
pub fn ones(shape: &[i64], dtype: Option<DType>) -> Tensor {
    full(shape, 1.0, dtype)
}

/// `torch.arange(start, end, step, dtype)`.
pub fn arange(
    start: impl Into<Scalar>,
    end: impl Into<Scalar>,
    step: impl Into<Scalar>,
    dtype: Option<DType>,
) -> Tensor {
    let op = Op::Arange {
        start: start.into(),
        end: end.into(),
        step: step.into(),
        dtype,
        device: creation_device(None),
    };
    record(op, vec![], None)
}

/// `torch.eye(n, m, dtype=...)`: the `n`×`m` identity (`m` defaults to
/// `n`; the default dtype when `dtype` is `None`).
pub fn eye(n: i64, m: Option<i64>, dtype: Option<DType>) -> Tensor {
    let op = Op::Eye {
        n,
        m,
        dtype,
        device: creation_device(None),
    };
    record(op, vec![], None)
}

/// `torch.linspace(start, end, steps, dtype=...)`: `steps` evenly spaced
/// values from `start` to `end`, as PyTorch computes them.
pub fn linspace(
    start: impl Into<Scalar>,
    end: impl Into<Scalar>,
    steps: i64,
    dtype: Option<DType>,
) -> Tensor {
    let op = Op::Linspace {
        start: start.into(),
        end: end.into(),
        steps,
        dtype,
        device: creation_device(None),
    };
    record(op, vec![], None)
}

/// `torch.broadcast_tensors(*tensors)`: each expanded to their common
/// shape (views).
pub fn broadcast_tensors(tensors: &[&Tensor]) -> Vec<Tensor> {
    let operands = tensors.iter().map(|x| t(x)).collect();
    record_all(Op::BroadcastTensors, operands, None, Some(tensors.len()))
}

/// `torch.meshgrid(*tensors, indexing)`: 0-D or 1-D tensors each laid
/// along its dim of their grid (`"ij"`, or `"xy"`: the first two swapped);
/// views.
pub fn meshgrid(tensors: &[&Tensor], indexing: &str) -> Vec<Tensor> {
    let op = Op::Meshgrid {
        indexing: indexing.to_string(),
    };
    let operands = tensors.iter().map(|x| t(x)).collect();
    record_all(op, operands, None, Some(tensors.len()))
}

/// `torch.logspace(start, end, steps, base, dtype=...)`: `base` to the
/// powers of `steps` evenly spaced exponents, as PyTorch computes them.
pub fn logspace(
    start: impl Into<Scalar>,
    end: impl Into<Scalar>,
    steps: i64,
    base: f64,
    dtype: Option<DType>,
) -> Tensor {
    let op = Op::Logspace {
        start: start.into(),
        end: end.into(),
        steps,
        base: F64(base),
        dtype,
        device: creation_device(None),
    };
    record(op, vec![], None)
}

/// `torch.tril_indices(row, col, offset)`: the int64 positions (rows,
/// then columns) on and below a diagonal.
pub fn tril_indices(row: i64, col: i64, offset: i64) -> Tensor {
    let op = Op::TrilIndices {
        row,
        col,
        offset,
        dtype: None,
        device: creation_device(None),
    };
    record(op, vec![], None)
}

/// `torch.triu_indices(row, col, offset)`: the positions on and above a
/// diagonal.
pub fn triu_indices(row: i64, col: i64, offset: i64) -> Tensor {
    let op = Op::TriuIndices {
        row,
        col,
        offset,
        dtype: None,
        device: creation_device(None),
    };
    record(op, vec![], None)
}

/// `torch.empty(size, dtype)` (zero-filled in Kiln).
pub fn empty(size: &[i64], dtype: Option<DType>) -> Tensor {
    let op = Op::Empty {
        size: size.to_vec(),
        dtype,
        device: creation_device(None),
        memory_format: MemoryFormat::Contiguous,
    };
    record(op, vec![], None)
}

/// `torch.empty_strided(size, stride, dtype)` (zero-filled; dense strides).
pub fn empty_strided(size: &[i64], stride: &[i64], dtype: Option<DType>) -> Tensor {
    let op = Op::EmptyStrided {
        size: size.to_vec(),
        stride: stride.to_vec(),
        dtype,
        device: creation_device(None),
    };
    record(op, vec![], None)
}

/// `torch.searchsorted(sorted_sequence, input, out_int32=..., right=...,
/// sorter=...)`: each value's insertion position in the last dim of
/// `sorted_sequence` (`input` a tensor or a number; `right` is
/// `side="right"`).
pub fn searchsorted(
    sorted_sequence: &Tensor,
    input: impl Into<Input>,
    out_int32: bool,
    right: bool,
    sorter: Option<&Tensor>,
) -> Tensor {
    let op = Op::Searchsorted {
        out_int32,
        right,
        side: None,
    };
    record(
        op,
        vec![t(sorted_sequence), input.into(), Input::from(sorter)],
        None,
    )
}

/// `torch.bucketize(input, boundaries, out_int32=..., right=...)`: each
/// value's bucket among the 1-D `boundaries`.
pub fn bucketize(
    input: impl Into<Input>,
    boundaries: &Tensor,
    out_int32: bool,
    right: bool,
) -> Tensor {
    let op = Op::Bucketize { out_int32, right };
    record(op, vec![input.into(), t(boundaries)], None)
}

/// The options of [`Tensor::triplet_margin_loss`] (PyTorch's keyword
/// arguments; `Default` is PyTorch's defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TripletMargin {
    /// The margin (positive).
    pub margin: f64,
    /// The norm of the pairwise distances.
    pub p: f64,
    /// Added to the differences before their norm.
    pub eps: f64,
    /// Use the smaller of the anchor's and the positive's distance to the
    /// negative.
    pub swap: bool,
}

impl Default for TripletMargin {
    fn default() -> Self {
        TripletMargin {
            margin: 1.0,
            p: 2.0,
            eps: 1e-6,
            swap: false,
        }
    }
}

/// The three results of a native normalization (a traced error gives one
/// result carrying it, as [`pair`]).
fn triple(results: Vec<Tensor>) -> (Tensor, Tensor, Tensor) {
    let mut results = results.into_iter();
    match (results.next(), results.next(), results.next()) {
        (Some(a), Some(b), Some(c)) => (a, b, c),
        (Some(a), _, _) => (a.clone(), a.clone(), a),
        _ => (
            Tensor::poisoned(0),
            Tensor::poisoned(0),
            Tensor::poisoned(0),
        ),
    }
}

/// Issue 16's remaining methods.
impl Tensor {
    /// `self.masked_scatter(mask, source)`: `source`'s elements, in order,
    /// where `mask` (broadcast with `self`) is true.
    pub fn masked_scatter(&self, mask: &Tensor, source: &Tensor) -> Tensor {
        record(Op::MaskedScatter, vec![t(self), t(mask), t(source)], None)
    }

    /// `F.prelu(self, weight)`: `x > 0 ? x : weight · x`, one weight or one
    /// per channel (dim 1).
    pub fn prelu(&self, weight: &Tensor) -> Tensor {
        record(Op::Prelu, vec![t(self), t(weight)], None)
    }

    /// `F.gaussian_nll_loss(self, target, var, full, eps, reduction)`:
    /// `var` a tensor or a non-negative number.
    pub fn gaussian_nll_loss(
        &self,
        target: &Tensor,
        var: impl Into<Input>,
        full: bool,
        eps: f64,
        reduction: LossReduction,
    ) -> Tensor {
        let op = Op::GaussianNllLoss {
            full,
            eps: F64(eps),
            reduction,
        };
        record(op, vec![t(self), t(target), var.into()], None)
    }

    /// `F.cosine_embedding_loss(self, input2, target, margin, reduction)`.
    pub fn cosine_embedding_loss(
        &self,
        input2: &Tensor,
        target: &Tensor,
        margin: f64,
        reduction: LossReduction,
    ) -> Tensor {
        let op = Op::CosineEmbeddingLoss {
            margin: F64(margin),
            reduction,
        };
        record(op, vec![t(self), t(input2), t(target)], None)
    }

    /// `F.multilabel_soft_margin_loss(self, target, weight, reduction)`.
    pub fn multilabel_soft_margin_loss(
        &self,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: LossReduction,
    ) -> Tensor {
        let op = Op::MultilabelSoftMarginLoss { reduction };
        record(op, vec![t(self), t(target), Input::from(weight)], None)
    }

    /// `F.triplet_margin_loss(self, positive, negative, margin, p, eps,
    /// swap, reduction)`, the options in [`TripletMargin`].
    pub fn triplet_margin_loss(
        &self,
        positive: &Tensor,
        negative: &Tensor,
        options: TripletMargin,
        reduction: LossReduction,
    ) -> Tensor {
        let op = Op::TripletMarginLoss {
            margin: F64(options.margin),
            p: F64(options.p),
            eps: F64(options.eps),
            swap: options.swap,
            reduction,
        };
        record(op, vec![t(self), t(positive), t(negative)], None)
    }

    /// `torch.embedding_bag(weight=self, indices, offsets, mode=...,
    /// per_sample_weights=..., include_last_offset=..., padding_idx=...)`
    /// (ATen's, with 1-D indices): the bags' reductions (`mode` 0 sum,
    /// 1 mean, 2 max) and ATen's `offset2bag`, `bag_size`, `max_indices`.
    pub fn embedding_bag(
        &self,
        indices: &Tensor,
        offsets: &Tensor,
        mode: i64,
        per_sample_weights: Option<&Tensor>,
        include_last_offset: bool,
        padding_idx: Option<i64>,
    ) -> (Tensor, Tensor, Tensor, Tensor) {
        let op = Op::EmbeddingBag {
            scale_grad_by_freq: false,
            mode,
            sparse: false,
            include_last_offset,
            padding_idx,
        };
        let operands = vec![
            t(self),
            t(indices),
            t(offsets),
            Input::from(per_sample_weights),
        ];
        let mut r = record_all(op, operands, None, Some(4)).into_iter();
        match (r.next(), r.next(), r.next(), r.next()) {
            (Some(a), Some(b), Some(c), Some(d)) => (a, b, c, d),
            (Some(a), ..) => (a.clone(), a.clone(), a.clone(), a),
            _ => (
                Tensor::poisoned(0),
                Tensor::poisoned(0),
                Tensor::poisoned(0),
                Tensor::poisoned(0),
            ),
        }
    }

    /// `F.local_response_norm(self, size, alpha, beta, k)`.
    pub fn local_response_norm(&self, size: i64, alpha: f64, beta: f64, k: f64) -> Tensor {
        let op = Op::LocalResponseNorm {
            size,
            alpha: F64(alpha),
            beta: F64(beta),
            k: F64(k),
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.native_layer_norm(self, normalized_shape, weight, bias,
    /// eps)`: the result, the mean and the reciprocal standard deviation.
    pub fn native_layer_norm(
        &self,
        normalized_shape: &[i64],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> (Tensor, Tensor, Tensor) {
        let op = Op::NativeLayerNorm {
            normalized_shape: normalized_shape.to_vec(),
            eps: F64(eps),
        };
        let operands = vec![t(self), Input::from(weight), Input::from(bias)];
        triple(record_all(op, operands, None, Some(3)))
    }

    /// `torch.native_batch_norm(self, weight, bias, running_mean,
    /// running_var, training, momentum, eps)`: the result, and the batch's
    /// mean and reciprocal standard deviation in training (empty in
    /// evaluation).
    pub fn native_batch_norm(
        &self,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        running: Option<(&Tensor, &Tensor)>,
        training: bool,
        momentum: f64,
        eps: f64,
    ) -> (Tensor, Tensor, Tensor) {
        let op = Op::NativeBatchNorm {
            training,
            momentum: F64(momentum),
            eps: F64(eps),
        };
        let operands = vec![
            t(self),
            Input::from(weight),
            Input::from(bias),
            Input::from(running.map(|r| r.0)),
            Input::from(running.map(|r| r.1)),
        ];
        triple(record_all(op, operands, None, Some(3)))
    }

    /// `torch.native_group_norm(self, weight, bias, N, C, HxW, group,
    /// eps)` with `N`, `C`, `HxW` read from the input's shape: the result,
    /// and each sample's groups' mean and reciprocal standard deviation.
    pub fn native_group_norm(
        &self,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        group: i64,
        eps: f64,
    ) -> (Tensor, Tensor, Tensor) {
        let shape = type_of(self).map(|ty| ty.shape).unwrap_or_default();
        let n = shape.first().copied().unwrap_or(1);
        let c = shape.get(1).copied().unwrap_or(1);
        let op = Op::NativeGroupNorm {
            n,
            c,
            hxw: shape.iter().skip(2).product(),
            group,
            eps: F64(eps),
        };
        let operands = vec![t(self), Input::from(weight), Input::from(bias)];
        triple(record_all(op, operands, None, Some(3)))
    }
}

macro_rules! overload {
    ($trait:ident, $method:ident, $op:ident) => {
        impl ops::$trait<&Tensor> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                self.binary(BinaryOp::$op, rhs)
            }
        }
        impl ops::$trait<Tensor> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                self.binary(BinaryOp::$op, rhs)
            }
        }
        impl ops::$trait<&Tensor> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                self.binary(BinaryOp::$op, rhs)
            }
        }
        impl ops::$trait<Tensor> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                self.binary(BinaryOp::$op, rhs)
            }
        }
        // One type per literal kind, so `x * 2.0` and `x * 2` infer without
        // annotations; methods such as `x.mul(2.0f32)` take any number type.
        overload!(@scalars $trait, $method, $op, bool, i64, f64);
    };
    (@scalars $trait:ident, $method:ident, $op:ident, $($s:ty),*) => {$(
        impl ops::$trait<$s> for &Tensor {
            type Output = Tensor;
            fn $method(self, rhs: $s) -> Tensor {
                self.binary(BinaryOp::$op, rhs)
            }
        }
        impl ops::$trait<$s> for Tensor {
            type Output = Tensor;
            fn $method(self, rhs: $s) -> Tensor {
                self.binary(BinaryOp::$op, rhs)
            }
        }
        /// A scalar on the left, as Python's reflected operators: the scalar
        /// stays the first operand.
        impl ops::$trait<&Tensor> for $s {
            type Output = Tensor;
            fn $method(self, rhs: &Tensor) -> Tensor {
                record(Op::Binary { op: BinaryOp::$op }, vec![Input::from(self), t(rhs)], None)
            }
        }
        impl ops::$trait<Tensor> for $s {
            type Output = Tensor;
            fn $method(self, rhs: Tensor) -> Tensor {
                record(Op::Binary { op: BinaryOp::$op }, vec![Input::from(self), t(&rhs)], None)
            }
        }
    )*};
}

overload!(Add, add, Add);
overload!(Sub, sub, Sub);
overload!(Mul, mul, Mul);
overload!(Div, div, Div);
overload!(Rem, rem, Remainder);
overload!(BitAnd, bitand, BitwiseAnd);
overload!(BitOr, bitor, BitwiseOr);
overload!(BitXor, bitxor, BitwiseXor);

impl ops::Neg for &Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        Tensor::neg(self)
    }
}

impl ops::Neg for Tensor {
    type Output = Tensor;
    fn neg(self) -> Tensor {
        Tensor::neg(&self)
    }
}

impl ops::Not for &Tensor {
    type Output = Tensor;
    /// `~x`: bitwise not (logical not for bool), as PyTorch.
    fn not(self) -> Tensor {
        self.bitwise_not()
    }
}

impl ops::Not for Tensor {
    type Output = Tensor;
    fn not(self) -> Tensor {
        self.bitwise_not()
    }
}

/// The products and normalizations of issue 16 (composites: each expands
/// into `matmul`, reductions and pointwise ops).
impl Tensor {
    /// `torch.mm(self, mat2)`.
    pub fn mm(&self, mat2: &Tensor) -> Tensor {
        record(Op::Mm, vec![t(self), t(mat2)], None)
    }

    /// `torch.bmm(self, mat2)`.
    pub fn bmm(&self, mat2: &Tensor) -> Tensor {
        record(Op::Bmm, vec![t(self), t(mat2)], None)
    }

    /// `torch.mv(self, vec)`.
    pub fn mv(&self, vec: &Tensor) -> Tensor {
        record(Op::Mv, vec![t(self), t(vec)], None)
    }

    /// `torch.dot(self, other)`.
    pub fn dot(&self, other: &Tensor) -> Tensor {
        record(Op::Dot, vec![t(self), t(other)], None)
    }

    /// `torch.outer(self, vec2)`.
    pub fn outer(&self, vec2: &Tensor) -> Tensor {
        record(Op::Outer, vec![t(self), t(vec2)], None)
    }

    /// `torch.inner(self, other)`.
    pub fn inner(&self, other: &Tensor) -> Tensor {
        record(Op::Inner, vec![t(self), t(other)], None)
    }

    /// `torch.addmm(self, mat1, mat2, beta=beta, alpha=alpha)`.
    pub fn addmm(
        &self,
        mat1: &Tensor,
        mat2: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Tensor {
        let op = Op::Addmm {
            beta: beta.into(),
            alpha: alpha.into(),
        };
        record(op, vec![t(self), t(mat1), t(mat2)], None)
    }

    /// `torch.addmv(self, mat, vec, beta=beta, alpha=alpha)`.
    pub fn addmv(
        &self,
        mat: &Tensor,
        vec: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Tensor {
        let op = Op::Addmv {
            beta: beta.into(),
            alpha: alpha.into(),
        };
        record(op, vec![t(self), t(mat), t(vec)], None)
    }

    /// `torch.addr(self, vec1, vec2, beta=beta, alpha=alpha)`.
    pub fn addr(
        &self,
        vec1: &Tensor,
        vec2: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Tensor {
        let op = Op::Addr {
            beta: beta.into(),
            alpha: alpha.into(),
        };
        record(op, vec![t(self), t(vec1), t(vec2)], None)
    }

    /// `torch.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)`.
    pub fn baddbmm(
        &self,
        batch1: &Tensor,
        batch2: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Tensor {
        let op = Op::Baddbmm {
            beta: beta.into(),
            alpha: alpha.into(),
        };
        record(op, vec![t(self), t(batch1), t(batch2)], None)
    }

    /// `torch.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)`.
    pub fn addbmm(
        &self,
        batch1: &Tensor,
        batch2: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Tensor {
        let op = Op::Addbmm {
            beta: beta.into(),
            alpha: alpha.into(),
        };
        record(op, vec![t(self), t(batch1), t(batch2)], None)
    }

    /// `torch.trace(self)`: the sum of a matrix's diagonal.
    pub fn trace(&self) -> Tensor {
        record(Op::Trace, vec![t(self)], None)
    }

    /// `torch.linalg.vecdot(self, y, dim=dim)`.
    pub fn linalg_vecdot(&self, y: &Tensor, dim: i64) -> Tensor {
        record(Op::LinalgVecdot { dim }, vec![t(self), t(y)], None)
    }

    /// `torch.kron(self, other)`.
    pub fn kron(&self, other: &Tensor) -> Tensor {
        record(Op::Kron, vec![t(self), t(other)], None)
    }

    /// `torch.tensordot(self, other, dims=(dims_self, dims_other))`.
    pub fn tensordot(&self, other: &Tensor, dims_self: &[i64], dims_other: &[i64]) -> Tensor {
        let op = Op::Tensordot {
            dims_self: dims_self.to_vec(),
            dims_other: dims_other.to_vec(),
        };
        record(op, vec![t(self), t(other)], None)
    }

    /// `torch.vdot(self, other)` (real dtypes: `dot`).
    pub fn vdot(&self, other: &Tensor) -> Tensor {
        record(Op::Vdot, vec![t(self), t(other)], None)
    }

    /// `F.bilinear(self, input2, weight, bias)`.
    pub fn bilinear(&self, input2: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Tensor {
        record(
            Op::Bilinear,
            vec![t(self), t(input2), t(weight), Input::from(bias)],
            None,
        )
    }

    /// `torch.linalg.cross(self, other, dim=dim)`.
    pub fn linalg_cross(&self, other: &Tensor, dim: i64) -> Tensor {
        record(Op::LinalgCross { dim }, vec![t(self), t(other)], None)
    }

    /// `torch.cross(self, other, dim)`; `None` is the first dim of size 3.
    pub fn cross(&self, other: &Tensor, dim: Option<i64>) -> Tensor {
        record(Op::Cross { dim }, vec![t(self), t(other)], None)
    }

    /// `torch.cdist(self, x2, p, compute_mode)` (`compute_mode` as ATen's
    /// integer: 0, 1 or 2; distances are computed directly whatever it is).
    pub fn cdist(&self, x2: &Tensor, p: f64, compute_mode: Option<i64>) -> Tensor {
        let op = Op::Cdist {
            p: F64(p),
            compute_mode,
        };
        record(op, vec![t(self), t(x2)], None)
    }

    /// `F.rms_norm(self, normalized_shape, weight, eps)`; `eps = None` is
    /// the machine epsilon of the dtype it computes in.
    pub fn rms_norm(
        &self,
        normalized_shape: &[i64],
        weight: Option<&Tensor>,
        eps: Option<f64>,
    ) -> Tensor {
        let op = Op::RmsNorm {
            normalized_shape: normalized_shape.to_vec(),
            eps: eps.map(F64),
        };
        record(op, vec![t(self), Input::from(weight)], None)
    }

    /// `F.group_norm(self, num_groups, weight, bias, eps)`.
    pub fn group_norm(
        &self,
        num_groups: i64,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Tensor {
        let op = Op::GroupNorm {
            num_groups,
            eps: F64(eps),
            cudnn_enabled: true,
        };
        let operands = vec![t(self), Input::from(weight), Input::from(bias)];
        record(op, operands, None)
    }

    /// `F.batch_norm(self, running_mean, running_var, weight, bias,
    /// training, eps=eps)`: with `training`, the batch's own statistics
    /// (the running statistics are not updated).
    pub fn batch_norm(
        &self,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        training: bool,
        eps: f64,
    ) -> Tensor {
        let op = Op::BatchNorm {
            training,
            momentum: F64(0.1),
            eps: F64(eps),
            cudnn_enabled: true,
        };
        let operands = vec![
            t(self),
            Input::from(weight),
            Input::from(bias),
            Input::from(running_mean),
            Input::from(running_var),
        ];
        record(op, operands, None)
    }

    /// `F.instance_norm(self, weight=weight, bias=bias, eps=eps)`: each
    /// sample's channels normalized by their own statistics.
    pub fn instance_norm(
        &self,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Tensor {
        let op = Op::InstanceNorm {
            use_input_stats: true,
            momentum: F64(0.1),
            eps: F64(eps),
            cudnn_enabled: true,
        };
        let operands = vec![
            t(self),
            Input::from(weight),
            Input::from(bias),
            Input::None,
            Input::None,
        ];
        record(op, operands, None)
    }

    /// `F.normalize(self, p, dim, eps)`.
    pub fn normalize(&self, p: f64, dim: i64, eps: f64) -> Tensor {
        let op = Op::Normalize {
            p: F64(p),
            dim,
            eps: F64(eps),
        };
        record(op, vec![t(self)], None)
    }
}

/// The losses and distances of issue 16, `masked_fill` and `one_hot`
/// (composites); `self` is the input, `reduction` PyTorch's.
impl Tensor {
    /// `F.mse_loss(self, target, reduction=...)`.
    pub fn mse_loss(&self, target: &Tensor, reduction: LossReduction) -> Tensor {
        record(Op::MseLoss { reduction }, vec![t(self), t(target)], None)
    }

    /// `F.l1_loss(self, target, reduction=...)`.
    pub fn l1_loss(&self, target: &Tensor, reduction: LossReduction) -> Tensor {
        record(Op::L1Loss { reduction }, vec![t(self), t(target)], None)
    }

    /// `F.smooth_l1_loss(self, target, reduction=..., beta=...)`.
    pub fn smooth_l1_loss(&self, target: &Tensor, reduction: LossReduction, beta: f64) -> Tensor {
        let op = Op::SmoothL1Loss {
            reduction,
            beta: F64(beta),
        };
        record(op, vec![t(self), t(target)], None)
    }

    /// `F.huber_loss(self, target, reduction=..., delta=...)`.
    pub fn huber_loss(&self, target: &Tensor, reduction: LossReduction, delta: f64) -> Tensor {
        let op = Op::HuberLoss {
            reduction,
            delta: F64(delta),
        };
        record(op, vec![t(self), t(target)], None)
    }

    /// `F.binary_cross_entropy(self, target, weight, reduction=...)`.
    pub fn binary_cross_entropy(
        &self,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: LossReduction,
    ) -> Tensor {
        let operands = vec![t(self), t(target), Input::from(weight)];
        record(Op::BinaryCrossEntropy { reduction }, operands, None)
    }

    /// `F.binary_cross_entropy_with_logits(self, target, weight,
    /// reduction=..., pos_weight=...)`.
    pub fn binary_cross_entropy_with_logits(
        &self,
        target: &Tensor,
        weight: Option<&Tensor>,
        pos_weight: Option<&Tensor>,
        reduction: LossReduction,
    ) -> Tensor {
        let operands = vec![
            t(self),
            t(target),
            Input::from(weight),
            Input::from(pos_weight),
        ];
        record(
            Op::BinaryCrossEntropyWithLogits { reduction },
            operands,
            None,
        )
    }

    /// `F.kl_div(self, target, reduction=..., log_target=...)`.
    pub fn kl_div(&self, target: &Tensor, reduction: LossReduction, log_target: bool) -> Tensor {
        let op = Op::KlDiv {
            reduction,
            log_target,
        };
        record(op, vec![t(self), t(target)], None)
    }

    /// `F.soft_margin_loss(self, target, reduction=...)`.
    pub fn soft_margin_loss(&self, target: &Tensor, reduction: LossReduction) -> Tensor {
        record(
            Op::SoftMarginLoss { reduction },
            vec![t(self), t(target)],
            None,
        )
    }

    /// `F.margin_ranking_loss(self, input2, target, margin, reduction=...)`.
    pub fn margin_ranking_loss(
        &self,
        input2: &Tensor,
        target: &Tensor,
        margin: f64,
        reduction: LossReduction,
    ) -> Tensor {
        let op = Op::MarginRankingLoss {
            margin: F64(margin),
            reduction,
        };
        record(op, vec![t(self), t(input2), t(target)], None)
    }

    /// `F.hinge_embedding_loss(self, target, margin, reduction=...)`.
    pub fn hinge_embedding_loss(
        &self,
        target: &Tensor,
        margin: f64,
        reduction: LossReduction,
    ) -> Tensor {
        let op = Op::HingeEmbeddingLoss {
            margin: F64(margin),
            reduction,
        };
        record(op, vec![t(self), t(target)], None)
    }

    /// `F.poisson_nll_loss(self, target, log_input, full, eps=eps,
    /// reduction=...)`.
    pub fn poisson_nll_loss(
        &self,
        target: &Tensor,
        log_input: bool,
        full: bool,
        eps: f64,
        reduction: LossReduction,
    ) -> Tensor {
        let op = Op::PoissonNllLoss {
            log_input,
            full,
            eps: F64(eps),
            reduction,
        };
        record(op, vec![t(self), t(target)], None)
    }

    /// `F.cosine_similarity(self, x2, dim, eps)`.
    pub fn cosine_similarity(&self, x2: &Tensor, dim: i64, eps: f64) -> Tensor {
        let op = Op::CosineSimilarity { dim, eps: F64(eps) };
        record(op, vec![t(self), t(x2)], None)
    }

    /// `F.pairwise_distance(self, x2, p, eps, keepdim)`.
    pub fn pairwise_distance(&self, x2: &Tensor, p: f64, eps: f64, keepdim: bool) -> Tensor {
        let op = Op::PairwiseDistance {
            p: F64(p),
            eps: F64(eps),
            keepdim,
        };
        record(op, vec![t(self), t(x2)], None)
    }

    /// `F.nll_loss(self, target, weight, ignore_index=..., reduction=...)`
    /// with class-index targets.
    pub fn nll_loss(
        &self,
        target: &Tensor,
        weight: Option<&Tensor>,
        ignore_index: i64,
        reduction: LossReduction,
    ) -> Tensor {
        let op = Op::NllLoss {
            reduction,
            ignore_index,
        };
        record(op, vec![t(self), t(target), Input::from(weight)], None)
    }

    /// `F.cross_entropy(self, target, weight, ignore_index=...,
    /// reduction=..., label_smoothing=...)`: class indices (int64) or
    /// class probabilities (a float target of the input's shape).
    pub fn cross_entropy(
        &self,
        target: &Tensor,
        weight: Option<&Tensor>,
        ignore_index: i64,
        reduction: LossReduction,
        label_smoothing: f64,
    ) -> Tensor {
        let op = Op::CrossEntropy {
            reduction,
            ignore_index,
            label_smoothing: F64(label_smoothing),
        };
        record(op, vec![t(self), t(target), Input::from(weight)], None)
    }

    /// `self.masked_fill(mask, value)`.
    pub fn masked_fill(&self, mask: &Tensor, value: impl Into<Scalar>) -> Tensor {
        let op = Op::MaskedFill {
            value: value.into(),
        };
        record(op, vec![t(self), t(mask)], None)
    }

    /// `F.one_hot(self, num_classes)` (int64).
    pub fn one_hot(&self, num_classes: i64) -> Tensor {
        record(Op::OneHot { num_classes }, vec![t(self)], None)
    }
}
