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
use crate::support::{AtenKernel, DTypeSet};
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

impl Resample {
    /// Per spatial dim, per output position: the sources it reads and
    /// their weights (one for nearest, two for linear, four for cubic).
    pub fn taps(&self, in_size: &[i64], out_size: &[i64]) -> Vec<Vec<Vec<(i64, f64)>>> {
        (0..self.dims)
            .map(|d| {
                let (input, output) = (in_size[d], out_size[d]);
                let scale = self.scales.get(d).copied().flatten();
                (0..output)
                    .map(|dst| match self.sampling {
                        Sampling::Nearest | Sampling::NearestExact => {
                            vec![(
                                nearest_source(self.sampling, self.dims, dst, input, output, scale),
                                1.0,
                            )]
                        }
                        Sampling::Linear => {
                            let (i0, i1, l0, l1) =
                                linear_sources(dst, input, output, self.align_corners, scale);
                            vec![(i0, l0), (i1, l1)]
                        }
                        Sampling::Cubic => {
                            let (src, w) =
                                cubic_sources(dst, input, output, self.align_corners, scale);
                            src.into_iter().zip(w).collect()
                        }
                    })
                    .collect()
            })
            .collect()
    }
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
    // lp_pool is avg_pool of xᵖ: its window, without padding.
    let lp = |dims, kernel: &Vec<i64>, stride: &Vec<i64>, ceil_mode: bool| Spatial::Pool {
        pool: pool(
            dims,
            kernel,
            stride,
            &vec![0],
            &[1],
            ceil_mode,
            Window::Avg {
                count_include_pad: true,
                divisor_override: None,
            },
        ),
        indices: false,
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
        LpPool1d {
            kernel_size,
            stride,
            ceil_mode,
            ..
        } => lp(1, kernel_size, stride, *ceil_mode),
        LpPool2d {
            kernel_size,
            stride,
            ceil_mode,
            ..
        } => lp(2, kernel_size, stride, *ceil_mode),
        LpPool3d {
            kernel_size,
            stride,
            ceil_mode,
            ..
        } => lp(3, kernel_size, stride, *ceil_mode),
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
        return Err(shape_err(format!(
            "dilation should be greater than zero, but got {}",
            list(&dilation)
        )));
    }
    let groups = conv.groups;
    if groups <= 0 {
        return Err(shape_err("non-positive groups is not supported"));
    }
    if weight[0] % groups != 0 && !conv.transposed {
        return Err(shape_err(format!(
            "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size [{}] instead",
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
                // The 1-D transposed convolution runs as a 2-D one of height 1.
                let labels: &[&str] = match dims {
                    3 => &["depth", "height", "width"],
                    _ => &["height", "width"],
                };
                let pad = |v: &[i64], one: i64| {
                    let mut v = v.to_vec();
                    if dims == 1 {
                        v.insert(0, one);
                    }
                    v
                };
                let (op, st, dl) = (pad(&output_padding, 0), pad(&stride, 1), pad(&dilation, 1));
                let part = |what: &str, v: &[i64]| {
                    labels
                        .iter()
                        .zip(v)
                        .map(|(l, x)| format!("{what}_{l}: {x}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                return Err(shape_err(format!(
                    "output padding must be smaller than either stride or dilation, but got {} {} {}",
                    part("output_padding", &op),
                    part("stride", &st),
                    part("dilation", &dl)
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

/// Input, weight and bias share a dtype (PyTorch's messages: the weight's
/// from the kernel's dispatch, the bias's from the convolution's check).
fn conv_dtypes(input: &TensorType, weight: &TensorType, bias: Option<&TensorType>) -> Result<()> {
    if weight.dtype != input.dtype {
        return Err(err(
            ErrorKind::DType,
            format!(
                "expected scalar type {} but found {}",
                input.dtype.info().scalar_type_name,
                weight.dtype.info().scalar_type_name
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
                input.dtype.info().cpp_type_name,
                b.dtype.info().cpp_type_name
            ),
        ));
    }
    Ok(())
}

/// The CPU kernel PyTorch runs a convolution with, by its case: the
/// transposed, dilated, 3-D and plain kernels take different dtypes; an
/// empty batch runs none.
pub fn conv_kernel(op: &Op, args: &[Arg<'_>], _: &Inferred) -> Result<Option<AtenKernel>> {
    let (conv, dims) = match spatial(op) {
        Some(Spatial::Conv(conv)) => {
            let dims = tensor(args, 1)?.rank().saturating_sub(2);
            (conv, dims)
        }
        Some(Spatial::ConvCall(call)) => (call.conv, call.dims),
        _ => return Err(not_spatial(op)),
    };
    let x = tensor(args, 0)?;
    if x.rank() == dims + 2 && x.shape[0] == 0 {
        return Ok(None);
    }
    let floats_and = |d: DTypeSet| DTypeSet::FLOATS.union(d);
    let long = DTypeSet::of(DType::I64);
    Ok(Some(if conv.transposed {
        let name = if dims == 3 {
            "slow_conv_transpose3d_out_cpu"
        } else {
            "slow_conv_transpose2d_out_cpu"
        };
        AtenKernel::new(name, floats_and(long))
    } else if conv.dilation.iter().any(|d| *d != 1) {
        AtenKernel::new("slow_conv_dilated<>", floats_and(long))
    } else if dims == 3 {
        AtenKernel::new("compute_columns3d", floats_and(DTypeSet::INTS))
    } else {
        AtenKernel::new("slow_conv2d_cpu", floats_and(DTypeSet::INTS))
    }))
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
    // The schema's `int[n]` arguments: one value stands for every dim (a
    // list of another length goes on to `convolution`'s check).
    let schema = |v: &[i64]| {
        if v.len() == 1 {
            vec![v[0]; dims]
        } else {
            v.to_vec()
        }
    };
    conv.stride = schema(&conv.stride);
    conv.dilation = schema(&conv.dilation);
    conv.output_padding = schema(&conv.output_padding);
    let mut extra = vec![0; dims];
    match &call.padding {
        ConvPadding::Sizes(p) => conv.padding = schema(p),
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
    if x.dtype.is_complex() && x.numel() > 0 {
        // PyTorch computes complex convolutions as real ones of the parts.
        return Err(err(
            ErrorKind::Unsupported,
            format!(
                "Kiln's {} takes real tensors: complex convolution is not supported",
                call.name
            ),
        ));
    }
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

/// Shape and strides of a layout argument.
fn geometry_of<'a>(args: &'a [LayoutArg<'_>], i: usize) -> Option<(&'a [i64], &'a [i64])> {
    match args.get(i) {
        Some(LayoutArg::Tensor(g, _)) => Some((&g.shape[..], &g.strides[..])),
        _ => None,
    }
}

/// `x.unsqueeze(dim)`'s shape and strides (the new dim's stride is the
/// next dim's extent, as ATen computes it).
fn unsqueezed(shape: &[i64], strides: &[i64], dim: usize) -> (Vec<i64>, Vec<i64>) {
    let stride = if dim < shape.len() {
        shape[dim] * strides[dim]
    } else {
        1
    };
    let (mut sh, mut st) = (shape.to_vec(), strides.to_vec());
    sh.insert(dim, 1);
    st.insert(dim, stride);
    (sh, st)
}

/// Whether a tensor suggests a channels-last format.
fn suggests_cl(shape: &[i64], strides: &[i64]) -> bool {
    suggest_memory_format(shape, strides) != MemoryFormat::Contiguous
}

/// The channels-last strides a result has once the size-1 dims at
/// `removed` (ascending positions of the full shape) are squeezed out: a
/// 1-D op runs as a 2-D one over a height of 1 (dim 2), an unbatched
/// input as a batch of one (dim 0).
fn cl_strides_without(shape: &[i64], removed: &[usize]) -> Result<Vec<i64>> {
    let mut full = shape.to_vec();
    for &d in removed {
        full.insert(d, 1);
    }
    let format = if full.len() == 5 {
        MemoryFormat::ChannelsLast3d
    } else {
        MemoryFormat::ChannelsLast
    };
    let mut strides = format.strides(&full)?;
    for &d in removed.iter().rev() {
        strides.remove(d);
    }
    Ok(strides)
}

/// Whether PyTorch's CPU runs a 3-D convolution with oneDNN, the one
/// backend that keeps channels_last_3d (observed with one thread, on a CPU
/// with AVX512-BF16 and without AVX512-FP16: bf16 always, f16 and f64
/// never, f32 by oneDNN's size heuristic).
fn onednn_3d(conv: &Conv, dtype: DType, input: &[i64], weight: &[i64]) -> bool {
    if conv.transposed
        && (0..conv.dims).any(|d| {
            conv.output_padding.get(d).copied().unwrap_or(0)
                >= conv.stride.get(d).copied().unwrap_or(1)
        })
    {
        return false;
    }
    match dtype {
        DType::BF16 => true,
        DType::F32 => {
            let n = input[0];
            let k = &weight[weight.len() - 2..];
            let strided = conv.stride.iter().chain(&conv.dilation).any(|v| *v != 1);
            let volume: i64 = input[..4].iter().product();
            (strided || n >= 16 || k.iter().any(|v| *v != 1))
                && (conv.groups > 1 || k.iter().all(|v| *v > 3) || n > 1 || volume > 20480)
        }
        _ => false,
    }
}

/// The layout of a convolution's result, PyTorch's CPU rule:
/// - 2-D: channels_last iff the input or the weight suggests it;
/// - 1-D: PyTorch makes the input contiguous and views both as 2-D, so
///   `[N, L, C]` in memory ("NLC") iff `weight.unsqueeze(2)` suggests it;
/// - 3-D: channels_last_3d iff the input or the weight suggests it and
///   oneDNN runs it ([`onednn_3d`]);
/// - an empty batch is contiguous; an unbatched input is the batched one
///   of one, its result the batched result with dim 0 removed.
pub fn conv_layout(
    op: &Op,
    args: &[LayoutArg<'_>],
    results: &[TensorType],
) -> Result<Vec<ResultLayout>> {
    let ((xs, xst), (ws, wst)) = match (geometry_of(args, 0), geometry_of(args, 1)) {
        (Some(x), Some(w)) => (x, w),
        _ => {
            return Err(err(
                ErrorKind::Layout,
                "a convolution needs an input and a weight",
            ));
        }
    };
    let dims = ws.len().saturating_sub(2);
    let (conv, unbatched) = match spatial(op) {
        Some(Spatial::Conv(conv)) => (conv, false),
        Some(Spatial::ConvCall(call)) => {
            let unbatched = xs.len() == call.dims + 1;
            (call.conv, unbatched)
        }
        _ => return Err(not_spatial(op)),
    };
    let (xs, xst) = if unbatched {
        unsqueezed(xs, xst, 0)
    } else {
        (xs.to_vec(), xst.to_vec())
    };
    let dtype = match args.first() {
        Some(LayoutArg::Tensor(_, ty)) => ty.dtype,
        _ => DType::F32,
    };
    let channels_last = xs.first().is_some_and(|n| *n > 0)
        && match dims {
            1 => {
                let (s, st) = unsqueezed(ws, wst, 2);
                suggests_cl(&s, &st)
            }
            2 => suggests_cl(&xs, &xst) || suggests_cl(ws, wst),
            3 => {
                (suggests_cl(&xs, &xst) || suggests_cl(ws, wst)) && onednn_3d(&conv, dtype, &xs, ws)
            }
            _ => false,
        };
    results
        .iter()
        .map(|r| {
            let removed: &[usize] = match (unbatched, dims) {
                (true, 1) => &[0, 2],
                (true, _) => &[0],
                (false, 1) => &[2],
                (false, _) => &[],
            };
            Ok(ResultLayout::Fresh(if !channels_last {
                crate::layout::contiguous_strides(&r.shape)
            } else if !removed.is_empty() {
                cl_strides_without(&r.shape, removed)?
            } else {
                let format = if dims == 3 {
                    MemoryFormat::ChannelsLast3d
                } else {
                    MemoryFormat::ChannelsLast
                };
                format.strides(&r.shape)?
            }))
        })
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
/// checked with PyTorch's messages. `max_pool1d` has its own kernel and
/// messages; the other 1-D pools run as 2-D ones over a height of 1, and
/// their messages say so.
pub fn pool_params(pool: &Pool, name: &str, input: &[i64]) -> Result<Pool> {
    let dims = pool.dims;
    let count = ["", "one", "two", "three"][dims];
    let param = |what: &str, v: &[i64]| -> Result<Vec<i64>> {
        match v.len() {
            1 => Ok(vec![v[0]; dims]),
            n if n == dims => Ok(v.to_vec()),
            _ => Err(shape_err(if dims == 1 {
                format!("{name}: {what} must be a single int")
            } else {
                format!("{name}: {what} must either be a single int, or a tuple of {count} ints")
            })),
        }
    };
    let kernel = param("kernel_size", &pool.kernel)?;
    let stride = match pool.stride.len() {
        0 => kernel.clone(),
        _ => param("stride", &pool.stride)?,
    };
    let padding = param("padding", &pool.padding)?;
    let dilation = param("dilation", &pool.dilation)?;
    let rank = input.len();
    let spatial = &input[rank.saturating_sub(dims)..];
    let plain_1d = name == "max_pool1d";
    if plain_1d {
        let batch_ok = rank == 2 || rank == 3;
        if !batch_ok || input[rank - 2] == 0 || input[rank - 1] == 0 {
            return Err(shape_err(format!(
                "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:{}",
                list(input)
            )));
        }
        for (what, v) in [
            ("kernel_size", kernel[0]),
            ("stride", stride[0]),
            ("dilation", dilation[0]),
        ] {
            if v <= 0 {
                return Err(shape_err(format!(
                    "max_pool1d() {what} must be greater than zero, but got {v}"
                )));
            }
        }
        if padding[0] < 0 {
            return Err(shape_err(format!(
                "max_pool1d() padding must be non-negative, but got {}",
                padding[0]
            )));
        }
        if padding[0] > kernel[0] / 2 {
            return Err(shape_err(format!(
                "max_pool1d() padding should be at most half of kernel size, but got padding={} and kernel_size={}",
                padding[0], kernel[0]
            )));
        }
        let out = pooling_output_size(
            input[rank - 1],
            kernel[0],
            padding[0],
            stride[0],
            dilation[0],
            pool.ceil_mode,
        );
        if out < 1 {
            return Err(shape_err(format!(
                "max_pool1d() Invalid computed output size: {out}"
            )));
        }
    } else {
        // The 1-D pools are 2-D ones over a height of 1.
        let (k, st, pad, dil, sp) = if dims == 1 {
            (
                vec![1, kernel[0]],
                vec![1, stride[0]],
                vec![0, padding[0]],
                vec![1, dilation[0]],
                {
                    let mut v = vec![1];
                    v.extend_from_slice(spatial);
                    v
                },
            )
        } else {
            (
                kernel.clone(),
                stride.clone(),
                padding.clone(),
                dilation.clone(),
                spatial.to_vec(),
            )
        };
        let d = k.len();
        let labels: &[&str] = if d == 3 {
            &["T", "H", "W"]
        } else {
            &["H", "W"]
        };
        let named = |prefix: &str, v: &[i64]| {
            labels
                .iter()
                .zip(v)
                .map(|(l, x)| format!("{prefix}{l}: {x}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        if rank != dims + 1 && rank != dims + 2
            || input[..rank - dims]
                .iter()
                .skip(usize::from(rank == dims + 2))
                .chain(spatial)
                .any(|s| *s == 0)
        {
            return Err(shape_err(format!(
                "non-empty {}D or {}D (batch mode) tensor expected for input",
                d + 1,
                d + 2
            )));
        }
        if st.iter().any(|s| *s == 0) {
            return Err(shape_err("stride should not be zero"));
        }
        if k.iter().any(|k| *k <= 0) {
            return Err(shape_err(format!(
                "kernel size should be greater than zero, but got {}",
                named("k", &k)
            )));
        }
        if st.iter().any(|s| *s < 0) {
            return Err(shape_err(format!(
                "stride should be greater than zero, but got {}",
                named("d", &st)
            )));
        }
        if dil.iter().any(|d| *d <= 0) {
            return Err(shape_err(format!(
                "dilation should be greater than zero, but got {}",
                named("dilation", &dil)
            )));
        }
        if let Window::Avg {
            divisor_override: Some(0),
            ..
        } = pool.window
        {
            return Err(shape_err("divisor must be not zero"));
        }
        for i in 0..d {
            if pad[i] < 0 || pad[i] > k[i] / 2 {
                return Err(shape_err(format!(
                    "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and dilation={}",
                    pad[i], k[i], dil[i]
                )));
            }
        }
        let out: Vec<i64> = (0..d)
            .map(|i| pooling_output_size(sp[i], k[i], pad[i], st[i], dil[i], pool.ceil_mode))
            .collect();
        if out.iter().any(|o| *o < 1) {
            let join = |v: &[i64]| v.iter().map(i64::to_string).collect::<Vec<_>>().join("x");
            let channels = input[rank - dims - 1];
            let mut given = vec![channels];
            given.extend_from_slice(&sp);
            let mut calc = vec![channels];
            calc.extend_from_slice(&out);
            return Err(shape_err(format!(
                "Given input size: ({}). Calculated output size: ({}). Output size is too small",
                join(&given),
                join(&calc)
            )));
        }
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
        return Err(shape_err(if a.max {
            format!("{name}(): internal error: output_size.size() must be {dims}")
        } else {
            format!("{name}: output_size must be {dims}")
        }));
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
    if let Some(bad) = a.output_size.iter().find(|s| **s < 0) {
        let mut shape = x.shape[..rank - dims].to_vec();
        shape.extend_from_slice(&a.output_size);
        return Err(shape_err(if a.max {
            format!(
                "Trying to create tensor with negative dimension {bad}: {}",
                list(&shape)
            )
        } else {
            // The 1-D pool runs as the 2-D one over a height of 1; the
            // 3-D one prints its sizes as ATen does.
            let sizes: Vec<String> = a.output_size.iter().map(i64::to_string).collect();
            let (op, received) = match dims {
                1 => (
                    "adaptive_avg_pool2d".to_string(),
                    format!("1, {}", sizes[0]),
                ),
                3 => (
                    name.to_string(),
                    format!("{}, {},{}", sizes[0], sizes[1], sizes[2]),
                ),
                _ => (name.to_string(), sizes.join(", ")),
            };
            format!(
                "{op}: elements of output_size must be greater than or equal to 0 but received {{{received}}}"
            )
        }));
    }
    let mut shape = x.shape[..rank - dims].to_vec();
    shape.extend_from_slice(&a.output_size);
    let mut inferred = single(shape.clone(), x.dtype, args.len());
    if a.max {
        inferred.results.push(TensorType::new(shape, DType::I64));
    }
    Ok(inferred)
}

/// The layout of a pooled or resampled result, PyTorch's CPU rule: the
/// input's suggested format for the 2-D and 3-D ops, except `avg_pool3d`
/// and `adaptive_max_pool3d` (contiguous) and `adaptive_avg_pool3d`
/// (contiguous unless it takes a mean to 1×1×1); "NLC" for the 1-D pools
/// that run as 2-D ones (iff `x.unsqueeze(-2)` suggests channels_last),
/// contiguous for `max_pool1d`, the 1-D resamplings and unbatched inputs.
pub fn pool_layout(
    op: &Op,
    args: &[LayoutArg<'_>],
    results: &[TensorType],
) -> Result<Vec<ResultLayout>> {
    let Some((xs, xst)) = geometry_of(args, 0) else {
        return Err(err(ErrorKind::Layout, "a pool needs an input"));
    };
    let dims = match spatial(op) {
        Some(Spatial::Pool { pool, .. }) => pool.dims,
        Some(Spatial::Adaptive(a)) => a.dims,
        Some(Spatial::Resample(r)) => r.dims,
        _ => return Err(not_spatial(op)),
    };
    let batched = xs.len() == dims + 2;
    let follows_input = match op {
        // lp_pool runs as avg_pool of xᵖ, or max_pool of |x| for an
        // infinite norm.
        Op::LpPool1d { norm_type, .. } => norm_type.0.is_finite(),
        Op::LpPool3d { norm_type, .. } => norm_type.0.is_infinite(),
        Op::AvgPool3d { .. } | Op::AdaptiveMaxPool3d { .. } => false,
        Op::AdaptiveAvgPool3d { output_size } => output_size.iter().all(|s| *s == 1),
        Op::MaxPool1d { .. } => false,
        _ => !(dims == 1 && matches!(spatial(op), Some(Spatial::Resample(_)))),
    };
    let channels_last = batched
        && follows_input
        && if dims == 1 {
            let (s, st) = unsqueezed(xs, xst, 2);
            suggests_cl(&s, &st)
        } else {
            suggests_cl(xs, xst)
        };
    results
        .iter()
        .map(|r| {
            Ok(ResultLayout::Fresh(if !channels_last {
                crate::layout::contiguous_strides(&r.shape)
            } else if dims == 1 {
                cl_strides_without(&r.shape, &[2])?
            } else {
                suggest_memory_format(xs, xst).strides(&r.shape)?
            }))
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
/// output `dst`, computed in `f32` as PyTorch's CPU kernels do. Its 2-D
/// nearest kernel (`nearest_idx`) copies when the sizes are equal and
/// halves at twice the size, whatever the scale; the 1-D and 3-D ones
/// always scale.
pub fn nearest_source(
    sampling: Sampling,
    dims: usize,
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
        _ if dims == 2 && output == input => dst,
        _ if dims == 2 && output == 2 * input => dst >> 1,
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
            .map(|d| nearest_source(Sampling::Nearest, 2, d, 3, 6, None))
            .collect();
        assert_eq!(src, [0, 0, 1, 1, 2, 2]);
        let exact: Vec<i64> = (0..2)
            .map(|d| nearest_source(Sampling::NearestExact, 2, d, 5, 2, None))
            .collect();
        assert_eq!(exact, [1, 3]);
        let (i0, i1, l0, l1) = linear_sources(1, 2, 4, false, None);
        assert_eq!((i0, i1), (0, 1));
        assert!((l0 - 0.75).abs() < 1e-12 && (l1 - 0.25).abs() < 1e-12);
        let (_, w) = cubic_sources(0, 4, 4, true, None);
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}

// ---------------------------------------------------------------------------
// Unpooling, sliding blocks, grid sampling

/// Inference of `max_unpool2d`/`max_unpool3d`: the input's leading dims and
/// `output_size`; int64 positions of the input's shape.
pub fn infer_max_unpool(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (dims, output_size) = match op {
        Op::MaxUnpool2d { output_size } => (2, output_size),
        Op::MaxUnpool3d { output_size, .. } => (3, output_size),
        _ => return Err(not_spatial(op)),
    };
    let (x, indices) = (tensor(args, 0)?, tensor(args, 1)?);
    if indices.dtype != DType::I64 {
        return Err(err(
            ErrorKind::DType,
            format!(
                "elements in indices should be type int64 but got: {}",
                indices.dtype.info().scalar_type_name
            ),
        ));
    }
    if output_size.len() != dims {
        let what = if dims == 2 {
            "(height, width)"
        } else {
            "(depth, height, width)"
        };
        let count = if dims == 2 { "two" } else { "three" };
        return Err(shape_err(format!(
            "There should be exactly {count} elements {what} in output_size, but got {} elements.",
            output_size.len()
        )));
    }
    let rank = x.rank();
    if rank != dims + 1 && rank != dims + 2 {
        return Err(shape_err(format!(
            "Input to max_unpooling{dims}d should be a {}d or {}d Tensor, but got a tensor with {rank} dimensions.",
            dims + 1,
            dims + 2
        )));
    }
    if indices.shape != x.shape {
        return Err(shape_err(format!(
            "Expected shape of indices to be same as that of the input tensor ({}) but got indices tensor with shape: {}",
            list(&x.shape),
            list(&indices.shape)
        )));
    }
    let mut shape = x.shape[..rank - dims].to_vec();
    shape.extend_from_slice(output_size);
    Ok(single(shape, x.dtype, args.len()))
}

/// `max_unpool`'s result: `max_unpool2d` keeps a channels_last input's
/// format (4-D), `max_unpool3d` is always contiguous.
pub fn unpool_layout(
    op: &Op,
    args: &[LayoutArg<'_>],
    results: &[TensorType],
) -> Result<Vec<ResultLayout>> {
    let follows = matches!(op, Op::MaxUnpool2d { .. })
        && geometry_of(args, 0).is_some_and(|(s, st)| {
            s.len() == 4 && suggest_memory_format(s, st) == MemoryFormat::ChannelsLast
        });
    results
        .iter()
        .map(|r| {
            let format = if follows {
                MemoryFormat::ChannelsLast
            } else {
                MemoryFormat::Contiguous
            };
            Ok(ResultLayout::Fresh(format.strides(&r.shape)?))
        })
        .collect()
}

/// The sliding blocks of `im2col`/`col2im` over a `size` image: their
/// number along each of the two dims.
pub fn blocks(
    size: &[i64],
    kernel: &[i64],
    dilation: &[i64],
    padding: &[i64],
    stride: &[i64],
) -> [i64; 2] {
    let n =
        |d: usize| (size[d] + 2 * padding[d] - (dilation[d] * (kernel[d] - 1) + 1)) / stride[d] + 1;
    [n(0), n(1)]
}

/// The `im2col`/`col2im` parameters, each two values.
fn block_params<'a>(params: [(&str, &'a [i64]); 4]) -> Result<[&'a [i64]; 4]> {
    for (what, v) in params {
        if v.len() != 2 {
            return Err(shape_err(format!(
                "It is expected {what} equals to 2, but got size {}",
                v.len()
            )));
        }
    }
    let [(_, k), (_, d), (_, p), (_, s)] = params;
    let check = |bad: bool, message: String| if bad { Err(shape_err(message)) } else { Ok(()) };
    check(
        k.iter().any(|v| *v <= 0),
        format!(
            "kernel size should be greater than zero, but got kernel_height: {} kernel_width: {}",
            k[0], k[1]
        ),
    )?;
    check(
        d.iter().any(|v| *v <= 0),
        format!(
            "dilation should be greater than zero, but got dilation_height: {} dilation_width: {}",
            d[0], d[1]
        ),
    )?;
    check(
        p.iter().any(|v| *v < 0),
        format!(
            "padding should be non-negative, but got pad_height: {} pad_width: {}",
            p[0], p[1]
        ),
    )?;
    check(
        s.iter().any(|v| *v <= 0),
        format!(
            "stride should be greater than zero, but got stride_height: {} stride_width: {}",
            s[0], s[1]
        ),
    )?;
    Ok([k, d, p, s])
}

/// Inference of `im2col`: `[N, C·kh·kw, L]` (unbatched: without `N`).
pub fn infer_im2col(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Im2col {
        kernel_size,
        dilation,
        padding,
        stride,
    } = op
    else {
        return Err(not_spatial(op));
    };
    let x = tensor(args, 0)?;
    let [k, d, p, s] = block_params([
        ("kernel_size", kernel_size),
        ("dilation", dilation),
        ("padding", padding),
        ("stride", stride),
    ])?;
    let rank = x.rank();
    if (rank != 3 && rank != 4) || x.shape[rank - 3..].iter().any(|v| *v == 0) {
        return Err(shape_err(format!(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {}",
            list(&x.shape)
        )));
    }
    let size = &x.shape[rank - 2..];
    let [bh, bw] = blocks(size, k, d, p, s);
    if bh < 1 || bw < 1 {
        return Err(shape_err(format!(
            "Given input with spatial size ({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), calculated shape of the array of sliding blocks as ({bh}, {bw}), but its components must be at least one.",
            size[0], size[1], k[0], k[1], d[0], d[1], p[0], p[1]
        )));
    }
    let mut shape = x.shape[..rank - 3].to_vec();
    shape.push(x.shape[rank - 3] * k[0] * k[1]);
    shape.push(bh * bw);
    Ok(single(shape, x.dtype, args.len()))
}

/// Inference of `col2im`: `[N, C, H, W]` of `output_size` (unbatched:
/// without `N`).
pub fn infer_col2im(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::Col2im {
        output_size,
        kernel_size,
        dilation,
        padding,
        stride,
    } = op
    else {
        return Err(not_spatial(op));
    };
    let x = tensor(args, 0)?;
    if output_size.len() != 2 {
        return Err(shape_err(format!(
            "It is expected output_size equals to 2, but got size {}",
            output_size.len()
        )));
    }
    let [k, d, p, s] = block_params([
        ("kernel_size", kernel_size),
        ("dilation", dilation),
        ("padding", padding),
        ("stride", stride),
    ])?;
    let rank = x.rank();
    if (rank != 2 && rank != 3) || x.shape[rank - 2..].iter().any(|v| *v == 0) {
        return Err(shape_err(format!(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: {}",
            list(&x.shape)
        )));
    }
    let (cols, l) = (x.shape[rank - 2], x.shape[rank - 1]);
    if cols % (k[0] * k[1]) != 0 {
        return Err(shape_err(format!(
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)={cols} and kernel_size=({}, {}).",
            k[0], k[1]
        )));
    }
    let [bh, bw] = blocks(output_size, k, d, p, s);
    if bh * bw != l {
        return Err(shape_err(format!(
            "Given output_size=({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), stride=({}, {}), expected size of input's dimension 2 to match the calculated number of sliding blocks {bh} * {bw} = {}, but got input.size(2)={l}.",
            output_size[0],
            output_size[1],
            k[0],
            k[1],
            d[0],
            d[1],
            p[0],
            p[1],
            s[0],
            s[1],
            bh * bw
        )));
    }
    let mut shape = x.shape[..rank - 2].to_vec();
    shape.push(cols / (k[0] * k[1]));
    shape.extend_from_slice(output_size);
    Ok(single(shape, x.dtype, args.len()))
}

/// Inference of `grid_sampler_2d`/`3d`: `[N, C] + grid's spatial dims`.
pub fn infer_grid_sampler(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let (dims, mode, padding) = match op {
        Op::GridSampler2d {
            interpolation_mode,
            padding_mode,
            ..
        } => (2, *interpolation_mode, *padding_mode),
        Op::GridSampler3d {
            interpolation_mode,
            padding_mode,
            ..
        } => (3, *interpolation_mode, *padding_mode),
        _ => return Err(not_spatial(op)),
    };
    let (x, grid) = (tensor(args, 0)?, tensor(args, 1)?);
    if x.dtype != grid.dtype {
        return Err(err(
            ErrorKind::DType,
            format!(
                "expected scalar type {} but found {}",
                x.dtype.info().scalar_type_name,
                grid.dtype.info().scalar_type_name
            ),
        ));
    }
    if x.rank() != dims + 2 || grid.rank() != dims + 2 {
        return Err(shape_err(format!(
            "grid_sampler(): expected {}D input and grid with same number of dimensions, but got input with sizes {} and grid with sizes {}",
            dims + 2,
            list(&x.shape),
            list(&grid.shape)
        )));
    }
    if x.shape[0] != grid.shape[0] {
        return Err(shape_err(format!(
            "grid_sampler(): expected grid and input to have same batch size, but got input with sizes {} and grid with sizes {}",
            list(&x.shape),
            list(&grid.shape)
        )));
    }
    if grid.shape[dims + 1] != dims as i64 {
        return Err(shape_err(format!(
            "grid_sampler(): expected grid to have size {dims} in last dimension, but got grid with sizes {}",
            list(&grid.shape)
        )));
    }
    if !(0..=2).contains(&padding) {
        return Err(shape_err(format!(
            "grid_sampler(): unknown padding mode {padding}"
        )));
    }
    if !(0..=if dims == 2 { 2 } else { 1 }).contains(&mode) {
        return Err(shape_err(if dims == 3 && mode == 2 {
            "grid_sampler(): bicubic interpolation only supports 4D input".to_string()
        } else {
            format!("grid_sampler(): unknown interpolation mode {mode}")
        }));
    }
    let mut shape = x.shape[..2].to_vec();
    shape.extend_from_slice(&grid.shape[1..=dims]);
    Ok(single(shape, x.dtype, args.len()))
}

/// Inference of `affine_grid_generator`: `[N, H, W, 2]` or `[N, D, H, W, 3]`.
pub fn infer_affine_grid(op: &Op, args: &[Arg<'_>], _: &InferCtx) -> Result<Inferred> {
    let Op::AffineGridGenerator { size, .. } = op else {
        return Err(not_spatial(op));
    };
    let theta = tensor(args, 0)?;
    if DTypeSet::INTS.contains(theta.dtype) {
        // PyTorch's integer linspace truncates the base grid.
        return Err(err(
            ErrorKind::Unsupported,
            "Kiln's affine_grid_generator takes floating-point theta (PyTorch builds an integer grid by truncation)",
        ));
    }
    let (rows, cols, what) = match size.len() {
        4 => (2, 3, "2D"),
        5 => (3, 4, "3D"),
        _ => {
            return Err(shape_err(format!(
                "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs, but got size {}",
                list(size)
            )));
        }
    };
    if theta.rank() != 3 || theta.shape != [size[0], rows, cols] {
        return Err(shape_err(format!(
            "Expected a batch of {what} affine matrices of shape Nx{rows}x{cols} for size {}. Got {}.",
            list(size),
            list(&theta.shape)
        )));
    }
    let mut shape = vec![size[0]];
    shape.extend_from_slice(&size[2..]);
    shape.push(rows);
    Ok(single(shape, theta.dtype, args.len()))
}

/// ATen's `grid_sampler_unnormalize`: a normalized coordinate in
/// `[-1, 1]` as a pixel position, computed in the tensor's dtype as
/// PyTorch's CPU kernel does: `round` rounds to it, and `fused` says
/// whether the kernel's multiply-add rounds once (f32 and f64, in fused
/// multiply-adds) or twice (f16 and bf16).
pub fn grid_unnormalize(
    coord: f64,
    size: i64,
    align_corners: bool,
    round: &dyn Fn(f64) -> f64,
    fused: bool,
) -> f64 {
    let shifted = round(coord + 1.0);
    if align_corners {
        round(shifted * round((size - 1) as f64 / 2.0))
    } else {
        let half_size = round(size as f64 / 2.0);
        if fused {
            round(shifted * half_size - 0.5)
        } else {
            round(round(shifted * half_size) - 0.5)
        }
    }
}

/// ATen's `compute_coordinates`: a pixel position under the padding
/// mode (0 zeros: as is; 1 border: clipped, NaN to 0; 2 reflection:
/// reflected about the borders, or about the outer pixel edges without
/// `align_corners`, then clipped), each step rounded to the dtype.
pub fn grid_pad(
    coord: f64,
    size: i64,
    padding_mode: i64,
    align_corners: bool,
    round: &dyn Fn(f64) -> f64,
) -> f64 {
    let clip = |c: f64| {
        let c = if c > 0.0 { c } else { 0.0 };
        let top = (size - 1) as f64;
        if c < top { c } else { top }
    };
    match padding_mode {
        1 => clip(coord),
        2 => {
            let reflected = if align_corners {
                if size <= 1 {
                    0.0
                } else {
                    let twice = round(2.0 * (size - 1) as f64);
                    let a = coord.abs();
                    let extra = round(a - (round(a / twice)).trunc() * twice);
                    extra.min(round(twice - extra))
                }
            } else {
                let twice = round(2.0 * size as f64);
                let a = round(coord + 0.5).abs();
                let extra = round(a - (round(a / twice)).trunc() * twice);
                round(extra.min(round(twice - extra)) - 0.5)
            };
            clip(reflected)
        }
        _ => coord,
    }
}

/// The norm of an lp pool.
fn lp_norm(op: &Op) -> Option<f64> {
    match op {
        Op::LpPool1d { norm_type, .. }
        | Op::LpPool2d { norm_type, .. }
        | Op::LpPool3d { norm_type, .. } => Some(norm_type.0),
        _ => None,
    }
}

/// Inference of the lp pools: the pool's shape; a finite norm computes
/// `xᵖ` in floating point (integers and bools give the default float
/// dtype), an infinite one is a max pool of `|x|` in the input's dtype.
pub fn infer_lp_pool(op: &Op, args: &[Arg<'_>], ctx: &InferCtx) -> Result<Inferred> {
    let Some(norm) = lp_norm(op) else {
        return Err(not_spatial(op));
    };
    if norm == 0.0 {
        return Err(err(
            ErrorKind::Attribute,
            format!("norm_type must be a non-zero value, but got {norm}"),
        ));
    }
    let mut inferred = infer_pool(op, args, ctx)?;
    if norm.is_finite() {
        let x = tensor(args, 0)?;
        inferred.results[0].dtype = crate::infer::floating(x.dtype, ctx);
    }
    Ok(inferred)
}

/// The kernel that refuses an lp pool's dtype: the avg pool's (or for an
/// infinite norm the max pool's), `pow`'s for float8, `abs`'s for bools.
pub fn lp_pool_kernel(op: &Op, args: &[Arg<'_>], _: &Inferred) -> Result<Option<AtenKernel>> {
    let (Some(norm), x) = (lp_norm(op), tensor(args, 0)?) else {
        return Err(not_spatial(op));
    };
    let every = DTypeSet::FLOATS
        .union(DTypeSet::INTS)
        .union(DTypeSet::BARE_UINTS)
        .union(DTypeSet::BOOL);
    if norm.is_infinite() {
        if x.dtype.is_bool() {
            return Ok(Some(AtenKernel::new("abs_cpu", DTypeSet::EMPTY)));
        }
        return Ok(Some(match op {
            Op::LpPool1d { .. } => AtenKernel::new("max_pool1d_impl", DTypeSet::FLOATS),
            Op::LpPool2d { .. } => {
                AtenKernel::new("max_pool2d", DTypeSet::FLOATS.union(DTypeSet::INTS))
            }
            _ => AtenKernel::new("max_pool3d", DTypeSet::FLOATS.union(DTypeSet::INTS)),
        }));
    }
    if DTypeSet::FLOAT8.union(DTypeSet::FLOAT4).contains(x.dtype) {
        return Ok(Some(AtenKernel::new("pow", DTypeSet::EMPTY)));
    }
    Ok(Some(match op {
        Op::LpPool3d { .. } => AtenKernel::new(
            "avg_pool3d_out_frame",
            every.without(DTypeSet::of(DType::F16).union(DTypeSet::of(DType::BF16))),
        ),
        _ => AtenKernel::new("avg_pool2d", every),
    }))
}

/// `affine_grid_generator`'s dtypes (PyTorch's linspace), and PyTorch's refusal of f16 and bf16 where a size is 1.
pub fn affine_grid_kernel(op: &Op, args: &[Arg<'_>], _: &Inferred) -> Result<Option<AtenKernel>> {
    let Op::AffineGridGenerator { size, .. } = op else {
        return Err(not_spatial(op));
    };
    let theta = tensor(args, 0)?;
    let halves = DTypeSet::of(DType::F16).union(DTypeSet::of(DType::BF16));
    if halves.contains(theta.dtype) && size[2..].contains(&1) {
        return Ok(Some(AtenKernel::new(
            "tensor_cpu",
            DTypeSet::FLOATS.without(halves),
        )));
    }
    Ok(Some(AtenKernel::new(
        "linspace_cpu",
        DTypeSet::FLOATS.union(DTypeSet::INTS),
    )))
}
