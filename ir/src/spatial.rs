//! Convolution, pooling and resampling: the geometry PyTorch gives these
//! ops, read once from each op's attributes into a [`Spatial`]
//! description that inference, layout, the expansions and the interpreter
//! share.
//!
//! Every op here works on `[N, C, *spatial]` tensors with one, two or
//! three spatial dims (the `1d`/`2d`/`3d` ops of ATen's schemas). This
//! file owns PyTorch's output-size formulas (`conv_output_size`,
//! `pooling_output_shape`, the adaptive windows, the source index of a
//! resampled position), its parameter checks with their messages, and
//! which memory format each result takes.

use crate::dtype::DType;
use crate::error::{Error, ErrorKind, Result};
use crate::infer::{Arg, InferCtx, Inferred};
use crate::layout::{LayoutArg, MemoryFormat, ResultLayout, suggest_memory_format};
use crate::ops::Op;
use crate::ops::attrs::ConvPadding;
use crate::types::TensorType;

fn err(kind: ErrorKind, message: impl Into<String>) -> Error {
    Error::new(kind, message)
}

fn shape_err(message: impl Into<String>) -> Error {
    err(ErrorKind::Shape, message)
}

/// `[a, b]` as PyTorch prints an `IntArrayRef`.
fn list(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// A parameter given once or per spatial dim, as `dims` values
/// (ATen's `expand_param_if_needed`).
pub fn per_dim(name: &str, values: &[i64], dims: usize) -> Result<Vec<i64>> {
    match values.len() {
        1 => Ok(vec![values[0]; dims]),
        n if n == dims => Ok(values.to_vec()),
        _ => Err(shape_err(format!(
            "expected {name} to be a single integer value or a list of {dims} values to match the convolution dimensions, but got {name}={}",
            list(values)
        ))),
    }
}

/// A convolution as ATen's `convolution` takes it: every parameter per
/// spatial dim, padding symmetric.
#[derive(Clone, Debug, PartialEq)]
pub struct Conv {
    /// Spatial dims (1, 2 or 3).
    pub dims: usize,
    /// Step between windows.
    pub stride: Vec<i64>,
    /// Zeros on each side (for a transposed convolution, taken off each side).
    pub padding: Vec<i64>,
    /// Step between kernel taps.
    pub dilation: Vec<i64>,
    /// A transposed convolution (the gradient of a convolution).
    pub transposed: bool,
    /// Extra size on the far side of a transposed convolution's output.
    pub output_padding: Vec<i64>,
    /// Channel groups: group `g` of the output sees group `g` of the input.
    pub groups: i64,
}

/// `conv1d`..`conv_transpose3d` as written: what their expansions into
/// `convolution` need to settle from the operand shapes.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvCall {
    /// The ATen op name, for messages.
    pub name: &'static str,
    /// Spatial dims.
    pub dims: usize,
    /// The convolution, with `padding` as written.
    pub conv: Conv,
    /// `"same"`, `"valid"` or sizes.
    pub padding: ConvPadding,
}

/// A pooling window's reduction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Window {
    /// The largest value (NaN wins), and optionally where it is.
    Max,
    /// The mean: over the window inside the padded input
    /// (`count_include_pad`) or the real input, or divided by
    /// `divisor_override`.
    Avg {
        /// Padding zeros count in the divisor.
        count_include_pad: bool,
        /// A fixed divisor.
        divisor_override: Option<i64>,
    },
}

/// `max_pool*` and `avg_pool*`: a window slid over the spatial dims.
#[derive(Clone, Debug, PartialEq)]
pub struct Pool {
    /// Spatial dims.
    pub dims: usize,
    /// Window size per dim.
    pub kernel: Vec<i64>,
    /// Step per dim.
    pub stride: Vec<i64>,
    /// Implicit padding (−inf for max, zeros for avg) per side.
    pub padding: Vec<i64>,
    /// Step between taps (1 for avg).
    pub dilation: Vec<i64>,
    /// Rounds the output size up: a last window may start in the padding-free
    /// input and run past its end.
    pub ceil_mode: bool,
    /// What the window computes.
    pub window: Window,
}

/// `adaptive_*_pool*`: windows chosen to give `output_size` exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct Adaptive {
    /// Spatial dims.
    pub dims: usize,
    /// The spatial output size.
    pub output_size: Vec<i64>,
    /// Max (with positions) rather than mean.
    pub max: bool,
}

/// How a resampled position reads its source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// `floor(dst · scale)`.
    Nearest,
    /// `floor((dst + 0.5) · scale)`.
    NearestExact,
    /// (Bi/tri)linear between the two nearest sources.
    Linear,
    /// Bicubic over four sources (Keys, a = −0.75), clamped at the border.
    Cubic,
}

/// `upsample_*`: resampling to `output_size`.
#[derive(Clone, Debug, PartialEq)]
pub struct Resample {
    /// Spatial dims.
    pub dims: usize,
    /// The spatial output size.
    pub output_size: Vec<i64>,
    /// How sources are read.
    pub sampling: Sampling,
    /// Corner pixels' centres align (linear and cubic).
    pub align_corners: bool,
    /// The scale factors the caller gave (`interpolate(scale_factor=)`),
    /// which PyTorch uses instead of `in / out` where given and positive.
    pub scales: Vec<Option<f64>>,
}

/// What a spatial op computes.
#[derive(Clone, Debug, PartialEq)]
pub enum Spatial {
    /// ATen's `convolution`.
    Conv(Conv),
    /// `conv1d`..`conv_transpose3d`.
    ConvCall(ConvCall),
    /// A sliding window; `indices`: the max positions are a second result.
    Pool {
        /// The window.
        pool: Pool,
        /// A second result holds the flat spatial positions of the maxima.
        indices: bool,
    },
    /// Adaptive pooling.
    Adaptive(Adaptive),
    /// Resampling.
    Resample(Resample),
}

/// The spatial description of `op`; `None` for other ops.
pub fn spatial(op: &Op) -> Option<Spatial> {
    use Op::*;
    let conv_call = |name,
                     dims,
                     transposed,
                     stride: &Vec<i64>,
                     padding: &ConvPadding,
                     dilation: &Vec<i64>,
                     output_padding: &[i64],
                     groups: i64| {
        Spatial::ConvCall(ConvCall {
            name,
            dims,
            conv: Conv {
                dims,
                stride: stride.clone(),
                padding: match padding {
                    ConvPadding::Sizes(p) => p.clone(),
                    _ => vec![0],
                },
                dilation: dilation.clone(),
                transposed,
                output_padding: output_padding.to_vec(),
                groups,
            },
            padding: padding.clone(),
        })
    };
    let pool = |dims,
                kernel: &Vec<i64>,
                stride: &Vec<i64>,
                padding: &Vec<i64>,
                dilation: &[i64],
                ceil_mode: bool,
                window| Pool {
        dims,
        kernel: kernel.clone(),
        stride: stride.clone(),
        padding: padding.clone(),
        dilation: dilation.to_vec(),
        ceil_mode,
        window,
    };
    let max_pool = |dims, k, s, p, d: &Vec<i64>, c, indices| Spatial::Pool {
        pool: pool(dims, k, s, p, d, c, Window::Max),
        indices,
    };
    let avg = |count_include_pad, divisor_override| Window::Avg {
        count_include_pad,
        divisor_override,
    };
    let resample = |dims,
                    output_size: &Vec<i64>,
                    sampling,
                    align_corners,
                    scales: Vec<Option<crate::scalar::F64>>| {
        Spatial::Resample(Resample {
            dims,
            output_size: output_size.clone(),
            sampling,
            align_corners,
            scales: scales.into_iter().map(|s| s.map(|s| s.0)).collect(),
        })
    };
    Some(match op {
        Convolution {
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
        } => Spatial::Conv(Conv {
            dims: stride.len().max(padding.len()).max(dilation.len()).max(1),
            stride: stride.clone(),
            padding: padding.clone(),
            dilation: dilation.clone(),
            transposed: *transposed,
            output_padding: output_padding.clone(),
            groups: *groups,
        }),
        Conv1d {
            stride,
            padding,
            dilation,
            groups,
        } => conv_call("conv1d", 1, false, stride, padding, dilation, &[0], *groups),
        Conv2d {
            stride,
            padding,
            dilation,
            groups,
        } => conv_call("conv2d", 2, false, stride, padding, dilation, &[0], *groups),
        Conv3d {
            stride,
            padding,
            dilation,
            groups,
        } => conv_call("conv3d", 3, false, stride, padding, dilation, &[0], *groups),
        ConvTranspose1d {
            stride,
            padding,
            output_padding,
            groups,
            dilation,
        } => conv_call(
            "conv_transpose1d",
            1,
            true,
            stride,
            &ConvPadding::Sizes(padding.clone()),
            dilation,
            output_padding,
            *groups,
        ),
        ConvTranspose2d {
            stride,
            padding,
            output_padding,
            groups,
            dilation,
        } => conv_call(
            "conv_transpose2d",
            2,
            true,
            stride,
            &ConvPadding::Sizes(padding.clone()),
            dilation,
            output_padding,
            *groups,
        ),
        ConvTranspose3d {
            stride,
            padding,
            output_padding,
            groups,
            dilation,
        } => conv_call(
            "conv_transpose3d",
            3,
            true,
            stride,
            &ConvPadding::Sizes(padding.clone()),
            dilation,
            output_padding,
            *groups,
        ),
        MaxPool1d {
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
        } => max_pool(1, kernel_size, stride, padding, dilation, *ceil_mode, false),
        MaxPool2d {
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
        } => max_pool(2, kernel_size, stride, padding, dilation, *ceil_mode, false),
        MaxPool3d {
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
        } => max_pool(3, kernel_size, stride, padding, dilation, *ceil_mode, false),
        MaxPool1dWithIndices {
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
        } => max_pool(1, kernel_size, stride, padding, dilation, *ceil_mode, true),
        MaxPool2dWithIndices {
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
        } => max_pool(2, kernel_size, stride, padding, dilation, *ceil_mode, true),
        MaxPool3dWithIndices {
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
        } => max_pool(3, kernel_size, stride, padding, dilation, *ceil_mode, true),
        AvgPool1d {
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad,
        } => Spatial::Pool {
            pool: pool(
                1,
                kernel_size,
                stride,
                padding,
                &[1],
                *ceil_mode,
                avg(*count_include_pad, None),
            ),
            indices: false,
        },
        AvgPool2d {
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad,
            divisor_override,
        } => Spatial::Pool {
            pool: pool(
                2,
                kernel_size,
                stride,
                padding,
                &[1],
                *ceil_mode,
                avg(*count_include_pad, *divisor_override),
            ),
            indices: false,
        },
        AvgPool3d {
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad,
            divisor_override,
        } => Spatial::Pool {
            pool: pool(
                3,
                kernel_size,
                stride,
                padding,
                &[1],
                *ceil_mode,
                avg(*count_include_pad, *divisor_override),
            ),
            indices: false,
        },
        AdaptiveAvgPool1d { output_size } => Spatial::Adaptive(Adaptive {
            dims: 1,
            output_size: output_size.clone(),
            max: false,
        }),
        AdaptiveAvgPool2d { output_size } => Spatial::Adaptive(Adaptive {
            dims: 2,
            output_size: output_size.clone(),
            max: false,
        }),
        AdaptiveAvgPool3d { output_size } => Spatial::Adaptive(Adaptive {
            dims: 3,
            output_size: output_size.clone(),
            max: false,
        }),
        AdaptiveMaxPool1d { output_size } => Spatial::Adaptive(Adaptive {
            dims: 1,
            output_size: output_size.clone(),
            max: true,
        }),
        AdaptiveMaxPool2d { output_size } => Spatial::Adaptive(Adaptive {
            dims: 2,
            output_size: output_size.clone(),
            max: true,
        }),
        AdaptiveMaxPool3d { output_size } => Spatial::Adaptive(Adaptive {
            dims: 3,
            output_size: output_size.clone(),
            max: true,
        }),
        UpsampleNearest1d {
            output_size,
            scales,
        } => resample(1, output_size, Sampling::Nearest, false, vec![*scales]),
        UpsampleNearest2d {
            output_size,
            scales_h,
            scales_w,
        } => resample(
            2,
            output_size,
            Sampling::Nearest,
            false,
            vec![*scales_h, *scales_w],
        ),
        UpsampleNearest3d {
            output_size,
            scales_d,
            scales_h,
            scales_w,
        } => resample(
            3,
            output_size,
            Sampling::Nearest,
            false,
            vec![*scales_d, *scales_h, *scales_w],
        ),
        UpsampleNearestExact1d {
            output_size,
            scales,
        } => resample(1, output_size, Sampling::NearestExact, false, vec![*scales]),
        UpsampleNearestExact2d {
            output_size,
            scales_h,
            scales_w,
        } => resample(
            2,
            output_size,
            Sampling::NearestExact,
            false,
            vec![*scales_h, *scales_w],
        ),
        UpsampleNearestExact3d {
            output_size,
            scales_d,
            scales_h,
            scales_w,
        } => resample(
            3,
            output_size,
            Sampling::NearestExact,
            false,
            vec![*scales_d, *scales_h, *scales_w],
        ),
        UpsampleLinear1d {
            output_size,
            align_corners,
            scales,
        } => resample(
            1,
            output_size,
            Sampling::Linear,
            *align_corners,
            vec![*scales],
        ),
        UpsampleBilinear2d {
            output_size,
            align_corners,
            scales_h,
            scales_w,
        } => resample(
            2,
            output_size,
            Sampling::Linear,
            *align_corners,
            vec![*scales_h, *scales_w],
        ),
        UpsampleBicubic2d {
            output_size,
            align_corners,
            scales_h,
            scales_w,
        } => resample(
            2,
            output_size,
            Sampling::Cubic,
            *align_corners,
            vec![*scales_h, *scales_w],
        ),
        UpsampleTrilinear3d {
            output_size,
            align_corners,
            scales_d,
            scales_h,
            scales_w,
        } => resample(
            3,
            output_size,
            Sampling::Linear,
            *align_corners,
            vec![*scales_d, *scales_h, *scales_w],
        ),
        _ => return None,
    })
}

fn not_spatial(op: &Op) -> Error {
    err(
        ErrorKind::Backend,
        format!(
            "{} is not a convolution, pooling or resampling op",
            op.name()
        ),
    )
}

fn tensor<'a>(args: &[Arg<'a>], i: usize) -> Result<&'a TensorType> {
    match args.get(i) {
        Some(Arg::Tensor(t)) => Ok(t),
        _ => Err(err(
            ErrorKind::Arity,
            format!("operand {} is not a tensor", i + 1),
        )),
    }
}

fn optional<'a>(args: &[Arg<'a>], i: usize) -> Option<&'a TensorType> {
    match args.get(i) {
        Some(Arg::Tensor(t)) => Some(t),
        _ => None,
    }
}

fn single(shape: Vec<i64>, dtype: DType, operands: usize) -> Inferred {
    Inferred {
        results: vec![TensorType::new(shape, dtype)],
        operand_dtypes: vec![None; operands],
        natural_dtype: dtype,
    }
}

// ---------------------------------------------------------------------------
// Convolution

/// The convolution's parameters, each per spatial dim, checked as ATen's
/// `check_shape_forward` checks them (messages included).
pub fn conv_params(
    conv: &Conv,
    input: &[i64],
    weight: &[i64],
    bias: Option<&[i64]>,
) -> Result<Conv> {
    let k = weight.len();
    if k < 3 {
        return Err(shape_err(format!(
            "weight should have at least three dimensions, but got {}-dimensional weight of size {}",
            k,
            list(weight)
        )));
    }
    let dims = k - 2;
    let stride = per_dim("stride", &conv.stride, dims)?;
    let padding = per_dim("padding", &conv.padding, dims)?;
    let dilation = per_dim("dilation", &conv.dilation, dims)?;
    let output_padding = per_dim("output_padding", &conv.output_padding, dims)?;
    if input.len() != k {
        return Err(shape_err(format!(
            "Expected {k}-dimensional input for {k}-dimensional weight {}, but got {}-dimensional input of size {} instead",
            list(weight),
            input.len(),
            list(input)
        )));
    }
    if padding.iter().any(|p| *p < 0) {
        return Err(shape_err("negative padding is not supported"));
    }
    if output_padding.iter().any(|p| *p < 0) {
        return Err(shape_err("negative output_padding is not supported"));
    }
    if stride.iter().any(|s| *s <= 0) {
        return Err(shape_err("non-positive stride is not supported"));
    }
    if dilation.iter().any(|d| *d <= 0) {
        return Err(shape_err("dilation should be greater than zero"));
    }
    let groups = conv.groups;
    if groups <= 0 {
        return Err(shape_err("non-positive groups is not supported"));
    }
    if weight[0] % groups != 0 && !conv.transposed {
        return Err(shape_err(format!(
            "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size {} instead",
            list(weight)
        )));
    }
    if conv.transposed {
        if input[1] != weight[0] {
            return Err(shape_err(format!(
                "Given transposed=1, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
                list(weight),
                list(input),
                weight[0],
                input[1]
            )));
        }
        if weight[0] % groups != 0 {
            return Err(shape_err(format!(
                "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size {} instead",
                list(weight)
            )));
        }
        if let Some(b) = bias
            && (b.len() != 1 || b[0] != weight[1] * groups)
        {
            return Err(shape_err(format!(
                "Given transposed=1, weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias of size {} instead",
                list(weight),
                weight[1] * groups,
                list(b)
            )));
        }
        for d in 0..dims {
            if output_padding[d] >= stride[d] && output_padding[d] >= dilation[d] {
                return Err(shape_err(format!(
                    "output padding must be smaller than either stride or dilation, but got output_padding={} stride={} dilation={}",
                    list(&output_padding),
                    list(&stride),
                    list(&dilation)
                )));
            }
        }
    } else {
        if input[1] != weight[1] * groups {
            return Err(shape_err(format!(
                "Given groups={groups}, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
                list(weight),
                list(input),
                weight[1] * groups,
                input[1]
            )));
        }
        if let Some(b) = bias
            && (b.len() != 1 || b[0] != weight[0])
        {
            return Err(shape_err(format!(
                "Given weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias of size {} instead",
                list(weight),
                weight[0],
                list(b)
            )));
        }
        let padded: Vec<i64> = (0..dims).map(|d| input[d + 2] + 2 * padding[d]).collect();
        let kernel: Vec<i64> = (0..dims)
            .map(|d| dilation[d] * (weight[d + 2] - 1) + 1)
            .collect();
        if padded.iter().zip(&kernel).any(|(p, k)| k > p) {
            let join = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join(" x ");
            return Err(shape_err(format!(
                "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater than actual input size",
                join(&padded),
                join(&kernel)
            )));
        }
    }
    Ok(Conv {
        dims,
        stride,
        padding,
        dilation,
        transposed: conv.transposed,
        output_padding,
        groups,
    })
}

/// The output shape of a checked convolution (ATen's `conv_output_size`
/// and `conv_input_size` for transposed ones).
pub fn conv_output_shape(conv: &Conv, input: &[i64], weight: &[i64]) -> Vec<i64> {
    let mut shape = vec![
        input[0],
        if conv.transposed {
            weight[1] * conv.groups
        } else {
            weight[0]
        },
    ];
    for d in 0..conv.dims {
        let k = weight[d + 2];
        let size = if conv.transposed {
            (input[d + 2] - 1) * conv.stride[d] - 2 * conv.padding[d]
                + conv.dilation[d] * (k - 1)
                + conv.output_padding[d]
                + 1
        } else {
            (input[d + 2] + 2 * conv.padding[d] - conv.dilation[d] * (k - 1) - 1) / conv.stride[d]
                + 1
        };
        shape.push(size);
    }
    shape
}

/// Input, weight and bias share the input's floating dtype.
fn conv_dtypes(input: &TensorType, weight: &TensorType, bias: Option<&TensorType>) -> Result<()> {
    let name = |d: DType| d.info().cpp_type_name.to_lowercase();
    if weight.dtype != input.dtype {
        return Err(err(
            ErrorKind::DType,
            format!(
                "Input type ({}) and weight type ({}) should be the same",
                name(input.dtype),
                name(weight.dtype)
            ),
        ));
    }
    if let Some(b) = bias
        && b.dtype != input.dtype
    {
        return Err(err(
            ErrorKind::DType,
            format!(
                "Input type ({}) and bias type ({}) should be the same",
                name(input.dtype),
                name(b.dtype)
            ),
        ));
    }
    Ok(())
}

/// Inference of ATen's `convolution`.
pub fn infer_convolution(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Some(Spatial::Conv(conv)) = spatial(op) else {
        return Err(not_spatial(op));
    };
    let (x, w, b) = (tensor(args, 0)?, tensor(args, 1)?, optional(args, 2));
    let conv = conv_params(&conv, &x.shape, &w.shape, b.map(|b| &b.shape[..]))?;
    conv_dtypes(x, w, b)?;
    Ok(single(
        conv_output_shape(&conv, &x.shape, &w.shape),
        x.dtype,
        args.len(),
    ))
}

/// How `conv1d`..`conv_transpose3d` call `convolution`: whether the input
/// is unbatched (one dim short), the convolution with symmetric padding,
/// and the extra zeros `"same"` adds on the far side of each dim first.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvLowering {
    /// The input lacks the batch dim.
    pub unbatched: bool,
    /// The convolution to run.
    pub conv: Conv,
    /// Zeros added after each spatial dim before it (`"same"` with an odd
    /// total padding).
    pub extra: Vec<i64>,
}

/// Settles a `conv1d`..`conv_transpose3d` call from its operand shapes.
pub fn lower_conv_call(call: &ConvCall, input: &[i64], weight: &[i64]) -> Result<ConvLowering> {
    let dims = call.dims;
    let rank = input.len();
    if rank != dims + 1 && rank != dims + 2 {
        return Err(shape_err(format!(
            "Expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: {}",
            dims + 1,
            dims + 2,
            call.name,
            list(input)
        )));
    }
    let unbatched = rank == dims + 1;
    let mut conv = call.conv.clone();
    let mut extra = vec![0; dims];
    match &call.padding {
        ConvPadding::Sizes(p) => conv.padding = p.clone(),
        ConvPadding::Valid => conv.padding = vec![0; dims],
        ConvPadding::Same => {
            let stride = per_dim("stride", &conv.stride, dims)?;
            if stride.iter().any(|s| *s != 1) {
                return Err(shape_err(
                    "padding='same' is not supported for strided convolutions",
                ));
            }
            let dilation = per_dim("dilation", &conv.dilation, dims)?;
            if weight.len() != dims + 2 {
                return Err(shape_err(format!(
                    "weight should have at least three dimensions, but got {}-dimensional weight of size {}",
                    weight.len(),
                    list(weight)
                )));
            }
            let mut padding = Vec::with_capacity(dims);
            for d in 0..dims {
                let total = dilation[d] * (weight[d + 2] - 1);
                let left = total / 2;
                padding.push(left);
                extra[d] = total - 2 * left;
            }
            conv.padding = padding;
        }
    }
    Ok(ConvLowering {
        unbatched,
        conv,
        extra,
    })
}

/// Inference of `conv1d`..`conv_transpose3d`: the shape `convolution`
/// gives on the lowered call.
pub fn infer_conv_call(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Some(Spatial::ConvCall(call)) = spatial(op) else {
        return Err(not_spatial(op));
    };
    let (x, w, b) = (tensor(args, 0)?, tensor(args, 1)?, optional(args, 2));
    let lowered = lower_conv_call(&call, &x.shape, &w.shape)?;
    let mut input = x.shape.clone();
    if lowered.unbatched {
        input.insert(0, 1);
    }
    for (d, e) in lowered.extra.iter().enumerate() {
        input[d + 2] += e;
    }
    let conv = conv_params(&lowered.conv, &input, &w.shape, b.map(|b| &b.shape[..]))?;
    conv_dtypes(x, w, b)?;
    let mut shape = conv_output_shape(&conv, &input, &w.shape);
    if lowered.unbatched {
        shape.remove(0);
    }
    Ok(single(shape, x.dtype, args.len()))
}

/// The memory format of a convolution's result: channels-last when the
/// input or the weight suggests it (ATen's `_determine_backend_memory_format`
/// on the CPU), for 4-D and 5-D operands.
pub fn conv_layout(
    _: &Op,
    args: &[LayoutArg<'_>],
    results: &[TensorType],
) -> Result<Vec<ResultLayout>> {
    let formats: Vec<MemoryFormat> = args
        .iter()
        .take(2)
        .filter_map(|a| match a {
            LayoutArg::Tensor(g, _) => Some(suggest_memory_format(&g.shape, &g.strides)),
            _ => None,
        })
        .collect();
    let rank = results.first().map_or(0, TensorType::rank);
    let wanted = match rank {
        4 => MemoryFormat::ChannelsLast,
        5 => MemoryFormat::ChannelsLast3d,
        _ => MemoryFormat::Contiguous,
    };
    let format = if wanted != MemoryFormat::Contiguous && formats.contains(&wanted) {
        wanted
    } else {
        MemoryFormat::Contiguous
    };
    results
        .iter()
        .map(|r| Ok(ResultLayout::Fresh(format.strides(&r.shape)?)))
        .collect()
}

// ---------------------------------------------------------------------------
// Pooling

/// ATen's `pooling_output_shape`.
pub fn pooling_output_size(
    input: i64,
    kernel: i64,
    pad: i64,
    stride: i64,
    dilation: i64,
    ceil_mode: bool,
) -> i64 {
    let num =
        input + 2 * pad - dilation * (kernel - 1) - 1 + if ceil_mode { stride - 1 } else { 0 };
    let mut out = num.div_euclid(stride) + 1;
    if ceil_mode && (out - 1) * stride >= input + pad {
        out -= 1;
    }
    out
}

/// A pool's parameters per spatial dim (stride defaulting to the kernel),
/// checked with PyTorch's messages.
pub fn pool_params(pool: &Pool, name: &str, input: &[i64]) -> Result<Pool> {
    let dims = pool.dims;
    let plural = match dims {
        1 => "",
        _ => "s",
    };
    let count = ["", "one", "two", "three"][dims];
    let param = |what: &str, v: &[i64], allow_empty: bool| -> Result<Vec<i64>> {
        match v.len() {
            0 if allow_empty => Ok(pool.kernel.clone()),
            1 => Ok(vec![v[0]; dims]),
            n if n == dims => Ok(v.to_vec()),
            _ => Err(shape_err(if dims == 1 {
                format!("{name}: {what} must be a single int")
            } else {
                format!(
                    "{name}: {what} must either be a single int, or a tuple of {count} int{plural}"
                )
            })),
        }
    };
    let kernel = param("kernel_size", &pool.kernel, false)?;
    let stride = match pool.stride.len() {
        0 => kernel.clone(),
        _ => param("stride", &pool.stride, true)?,
    };
    let padding = param("padding", &pool.padding, false)?;
    let dilation = param("dilation", &pool.dilation, false)?;
    let rank = input.len();
    if rank != dims + 1 && rank != dims + 2 {
        return Err(shape_err(format!(
            "{name}: Expected {}D or {}D (batch mode) tensor for input, but got {}D input of size {}",
            dims + 1,
            dims + 2,
            rank,
            list(input)
        )));
    }
    if kernel.iter().any(|k| *k <= 0) {
        return Err(shape_err(format!(
            "kernel size should be greater than zero, but got {}",
            list(&kernel)
        )));
    }
    if stride.iter().any(|s| *s <= 0) {
        return Err(shape_err(format!(
            "stride should be greater than zero, but got {}",
            list(&stride)
        )));
    }
    if dilation.iter().any(|d| *d <= 0) {
        return Err(shape_err(format!(
            "dilation should be greater than zero, but got {}",
            list(&dilation)
        )));
    }
    if let Window::Avg {
        divisor_override: Some(0),
        ..
    } = pool.window
    {
        return Err(shape_err("divisor must be not zero"));
    }
    for d in 0..dims {
        if padding[d] < 0 || padding[d] > kernel[d] / 2 {
            return Err(shape_err(format!(
                "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and dilation={}",
                padding[d], kernel[d], dilation[d]
            )));
        }
    }
    let spatial = &input[rank - dims..];
    let lead = &input[..rank - dims];
    if lead
        .iter()
        .skip(if rank == dims + 2 { 1 } else { 0 })
        .any(|s| *s == 0)
        || spatial.iter().any(|s| *s == 0)
    {
        return Err(shape_err(format!(
            "{name}: Expected input's non-batch dimensions to have positive length, but input has a shape of {}",
            list(input)
        )));
    }
    let out: Vec<i64> = (0..dims)
        .map(|d| {
            pooling_output_size(
                spatial[d],
                kernel[d],
                padding[d],
                stride[d],
                dilation[d],
                pool.ceil_mode,
            )
        })
        .collect();
    if out.iter().any(|o| *o < 1) {
        let join = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join("x");
        let mut given = vec![input[rank - dims - 1]];
        given.extend_from_slice(spatial);
        let mut calc = vec![input[rank - dims - 1]];
        calc.extend_from_slice(&out);
        return Err(shape_err(format!(
            "Given input size: ({}). Calculated output size: ({}). Output size is too small",
            join(&given),
            join(&calc)
        )));
    }
    Ok(Pool {
        dims,
        kernel,
        stride,
        padding,
        dilation,
        ceil_mode: pool.ceil_mode,
        window: pool.window,
    })
}

/// The output shape of a checked pool over `input`.
pub fn pool_output_shape(pool: &Pool, input: &[i64]) -> Vec<i64> {
    let rank = input.len();
    let mut shape = input[..rank - pool.dims].to_vec();
    for d in 0..pool.dims {
        shape.push(pooling_output_size(
            input[rank - pool.dims + d],
            pool.kernel[d],
            pool.padding[d],
            pool.stride[d],
            pool.dilation[d],
            pool.ceil_mode,
        ));
    }
    shape
}

/// Inference of the pools: the input's dtype; max positions are int64.
pub fn infer_pool(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (Some(Spatial::Pool { pool, indices }), name) = (spatial(op), op.name()) else {
        return Err(not_spatial(op));
    };
    let x = tensor(args, 0)?;
    let pool = pool_params(&pool, name, &x.shape)?;
    let shape = pool_output_shape(&pool, &x.shape);
    let mut inferred = single(shape.clone(), x.dtype, args.len());
    if indices {
        inferred.results.push(TensorType::new(shape, DType::I64));
    }
    Ok(inferred)
}

/// The window `[start, end)` adaptive pooling reads for output `i` of
/// `output` along a dim of `input` (ATen's `start_index`/`end_index`).
pub fn adaptive_window(i: i64, input: i64, output: i64) -> (i64, i64) {
    let start = (i * input).div_euclid(output);
    let end = ((i + 1) * input + output - 1).div_euclid(output);
    (start, end)
}

/// Inference of adaptive pooling.
pub fn infer_adaptive(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Some(Spatial::Adaptive(a)) = spatial(op) else {
        return Err(not_spatial(op));
    };
    let name = op.name();
    let x = tensor(args, 0)?;
    let dims = a.dims;
    if a.output_size.len() != dims {
        return Err(shape_err(format!("{name}: output_size must be {dims}")));
    }
    let rank = x.rank();
    if rank != dims + 1 && rank != dims + 2 {
        return Err(shape_err(format!(
            "{name}(): Expected {}D or {}D tensor, but got {}",
            dims + 1,
            dims + 2,
            list(&x.shape)
        )));
    }
    if x.shape[rank - dims..].iter().any(|s| *s == 0) {
        return Err(shape_err(format!(
            "{name}(): Expected input to have non-zero size for non-batch dimensions, but input has sizes {} with dimension {} being empty",
            list(&x.shape),
            rank - dims
                + x.shape[rank - dims..]
                    .iter()
                    .position(|s| *s == 0)
                    .unwrap_or(0)
        )));
    }
    if a.output_size.iter().any(|s| *s < 0) {
        return Err(shape_err(format!(
            "{name}: elements of output_size must be greater than or equal to 0 but received {}",
            list(&a.output_size)
        )));
    }
    let mut shape = x.shape[..rank - dims].to_vec();
    shape.extend_from_slice(&a.output_size);
    let mut inferred = single(shape.clone(), x.dtype, args.len());
    if a.max {
        inferred.results.push(TensorType::new(shape, DType::I64));
    }
    Ok(inferred)
}

/// The memory format of a pooled or resampled result: the input's
/// suggested format (ATen allocates these outputs with
/// `input.suggest_memory_format()`), for batched 4-D and 5-D inputs.
pub fn pool_layout(
    _: &Op,
    args: &[LayoutArg<'_>],
    results: &[TensorType],
) -> Result<Vec<ResultLayout>> {
    let format = match args.first() {
        Some(LayoutArg::Tensor(g, _)) => suggest_memory_format(&g.shape, &g.strides),
        _ => MemoryFormat::Contiguous,
    };
    results
        .iter()
        .map(|r| {
            let format = match format.required_rank() {
                Some(rank) if rank == r.rank() => format,
                _ => MemoryFormat::Contiguous,
            };
            Ok(ResultLayout::Fresh(format.strides(&r.shape)?))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Resampling

/// Inference of resampling: `[N, C] + output_size`.
pub fn infer_resample(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Some(Spatial::Resample(r)) = spatial(op) else {
        return Err(not_spatial(op));
    };
    let x = tensor(args, 0)?;
    let dims = r.dims;
    if r.output_size.len() != dims {
        return Err(shape_err(format!(
            "It is expected output_size equals to {dims}, but got size {}",
            r.output_size.len()
        )));
    }
    if x.rank() != dims + 2 {
        return Err(shape_err(format!(
            "It is expected input_size equals to {}, but got size {}",
            dims + 2,
            x.rank()
        )));
    }
    let spatial = &x.shape[2..];
    if spatial.iter().chain(&r.output_size).any(|s| *s <= 0) {
        let names = ["D", "H", "W"];
        let names = &names[3 - dims..];
        let part = |prefix: &str, v: &[i64]| {
            names
                .iter()
                .zip(v)
                .map(|(n, s)| format!("{prefix}_{n} = {s}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(shape_err(format!(
            "Input and output sizes should be greater than 0, but got input ({}) output ({})",
            part("", spatial).replace("_", ""),
            part("", &r.output_size).replace("_", "")
        )));
    }
    if matches!(r.sampling, Sampling::Linear | Sampling::Cubic) && !x.dtype.is_floating_point() {
        // The kernel's dtype check names the op.
    }
    let mut shape = x.shape[..2].to_vec();
    shape.extend_from_slice(&r.output_size);
    Ok(single(shape, x.dtype, args.len()))
}

/// ATen's `compute_scales_value`: `1 / scale` where the caller gave a
/// positive scale, else `input / output`.
fn scale_value(scale: Option<f64>, input: i64, output: i64) -> f64 {
    match scale {
        Some(s) if s > 0.0 => 1.0 / s,
        _ => input as f64 / output as f64,
    }
}

/// ATen's `area_pixel_compute_scale`.
pub fn area_scale(input: i64, output: i64, align_corners: bool, scale: Option<f64>) -> f64 {
    if align_corners {
        if output > 1 {
            (input - 1) as f64 / (output - 1) as f64
        } else {
            0.0
        }
    } else {
        scale_value(scale, input, output)
    }
}

/// ATen's `area_pixel_compute_source_index`: the real source coordinate of
/// output position `dst`.
pub fn area_source(scale: f64, dst: i64, align_corners: bool, cubic: bool) -> f64 {
    if align_corners {
        scale * dst as f64
    } else {
        let src = scale * (dst as f64 + 0.5) - 0.5;
        if !cubic && src < 0.0 { 0.0 } else { src }
    }
}

/// The source position a nearest (or nearest-exact) resampling reads for
/// output `dst`, computed in `f32` as PyTorch's CPU kernels do.
pub fn nearest_source(
    sampling: Sampling,
    dst: i64,
    input: i64,
    output: i64,
    scale: Option<f64>,
) -> i64 {
    let scale = match scale {
        Some(s) if s > 0.0 => (1.0 / s) as f32,
        _ => input as f32 / output as f32,
    };
    let src = match sampling {
        Sampling::NearestExact => ((dst as f32 + 0.5) * scale).floor() as i64,
        _ if output == input => dst,
        _ if output == 2 * input => dst >> 1,
        _ => (dst as f32 * scale).floor() as i64,
    };
    src.min(input - 1)
}

/// The two sources and their weights a linear resampling reads for output
/// `dst` (ATen's `compute_source_index_and_lambda`): `(i0, i1, λ0, λ1)`.
pub fn linear_sources(
    dst: i64,
    input: i64,
    output: i64,
    align_corners: bool,
    scale: Option<f64>,
) -> (i64, i64, f64, f64) {
    if input == output {
        return (dst, dst, 1.0, 0.0);
    }
    let ratio = area_scale(input, output, align_corners, scale);
    let real = area_source(ratio, dst, align_corners, false);
    let i0 = (real.floor() as i64).min(input - 1);
    let lambda1 = (real - i0 as f64).clamp(0.0, 1.0);
    let i1 = i0 + i64::from(i0 < input - 1);
    (i0, i1, 1.0 - lambda1, lambda1)
}

/// The four sources (clamped to the input) and Keys' cubic weights
/// (a = −0.75) a bicubic resampling reads for output `dst`.
pub fn cubic_sources(
    dst: i64,
    input: i64,
    output: i64,
    align_corners: bool,
    scale: Option<f64>,
) -> ([i64; 4], [f64; 4]) {
    let ratio = area_scale(input, output, align_corners, scale);
    let real = area_source(ratio, dst, align_corners, true);
    let base = real.floor();
    let t = real - base;
    let base = base as i64;
    let a = -0.75;
    let near = |x: f64| ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    let far = |x: f64| ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
    let weights = [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)];
    let at = |k: i64| (base - 1 + k).clamp(0, input - 1);
    ([at(0), at(1), at(2), at(3)], weights)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_sizes_follow_aten() {
        // 5 wide, kernel 2, stride 2: floor gives 2, ceil 3.
        assert_eq!(pooling_output_size(5, 2, 0, 2, 1, false), 2);
        assert_eq!(pooling_output_size(5, 2, 0, 2, 1, true), 3);
        // A last window starting in the padding is dropped.
        assert_eq!(pooling_output_size(5, 2, 1, 2, 1, true), 3);
        assert_eq!(adaptive_window(1, 5, 3), (1, 4));
        assert_eq!(adaptive_window(2, 5, 3), (3, 5));
    }

    #[test]
    fn resampling_sources_follow_aten() {
        // ×2 nearest repeats each source.
        let src: Vec<i64> = (0..6)
            .map(|d| nearest_source(Sampling::Nearest, d, 3, 6, None))
            .collect();
        assert_eq!(src, [0, 0, 1, 1, 2, 2]);
        let exact: Vec<i64> = (0..2)
            .map(|d| nearest_source(Sampling::NearestExact, d, 5, 2, None))
            .collect();
        assert_eq!(exact, [1, 3]);
        let (i0, i1, l0, l1) = linear_sources(1, 2, 4, false, None);
        assert_eq!((i0, i1), (0, 1));
        assert!((l0 - 0.75).abs() < 1e-12 && (l1 - 0.25).abs() < 1e-12);
        let (_, w) = cubic_sources(0, 4, 4, true, None);
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
