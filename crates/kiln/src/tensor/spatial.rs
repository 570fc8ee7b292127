//! Tracing methods for convolution, pooling and resampling, with builders
//! for their many keyword arguments ([`ConvOptions`], [`PoolOptions`],
//! [`Interpolate`]). Each records the ATen op of IR.md for its spatial
//! rank, taken from the weight (convolutions), the kernel (pools) or the
//! sizes (resampling).

use kiln_ir::{ConvPadding, F64, Op};

use super::{Tensor, pair, t};
use crate::trace::{Input, record, record_all};

/// `conv*d`'s keyword arguments: `stride`, `padding`, `dilation`, `groups`
/// (PyTorch's defaults: 1, 0, 1, 1; one number stands for every dim).
#[derive(Clone, Debug, PartialEq)]
pub struct ConvOptions {
    /// Step between windows.
    pub stride: Vec<i64>,
    /// Zeros per side, or `"same"` / `"valid"`.
    pub padding: ConvPadding,
    /// Step between kernel taps.
    pub dilation: Vec<i64>,
    /// Channel groups (the input channels for a depthwise convolution).
    pub groups: i64,
    /// Transposed only: extra size on the far side of the output.
    pub output_padding: Vec<i64>,
}

impl Default for ConvOptions {
    fn default() -> ConvOptions {
        ConvOptions {
            stride: vec![1],
            padding: ConvPadding::Sizes(vec![0]),
            dilation: vec![1],
            groups: 1,
            output_padding: vec![0],
        }
    }
}

impl ConvOptions {
    /// With this stride (one value per dim, or one for all).
    pub fn stride(mut self, stride: &[i64]) -> ConvOptions {
        self.stride = stride.to_vec();
        self
    }

    /// With this padding per side.
    pub fn padding(mut self, padding: &[i64]) -> ConvOptions {
        self.padding = ConvPadding::Sizes(padding.to_vec());
        self
    }

    /// `padding="same"`: the output as large as the input (stride 1 only).
    pub fn same(mut self) -> ConvOptions {
        self.padding = ConvPadding::Same;
        self
    }

    /// With this dilation.
    pub fn dilation(mut self, dilation: &[i64]) -> ConvOptions {
        self.dilation = dilation.to_vec();
        self
    }

    /// With this many groups.
    pub fn groups(mut self, groups: i64) -> ConvOptions {
        self.groups = groups;
        self
    }

    /// With this output padding (transposed convolutions).
    pub fn output_padding(mut self, output_padding: &[i64]) -> ConvOptions {
        self.output_padding = output_padding.to_vec();
        self
    }
}

/// A pool's window: `kernel_size` and PyTorch's keyword arguments
/// (`stride` defaults to the kernel size).
#[derive(Clone, Debug, PartialEq)]
pub struct PoolOptions {
    /// Window size per dim (one value for all).
    pub kernel_size: Vec<i64>,
    /// Step; empty means the kernel size.
    pub stride: Vec<i64>,
    /// Implicit padding per side.
    pub padding: Vec<i64>,
    /// Step between taps (max pooling).
    pub dilation: Vec<i64>,
    /// Round the output size up.
    pub ceil_mode: bool,
    /// Average pooling: count padding zeros in the divisor (default true).
    pub count_include_pad: bool,
    /// Average pooling: divide by this instead.
    pub divisor_override: Option<i64>,
}

impl PoolOptions {
    /// A window of this size.
    pub fn new(kernel_size: &[i64]) -> PoolOptions {
        PoolOptions {
            kernel_size: kernel_size.to_vec(),
            stride: Vec::new(),
            padding: vec![0],
            dilation: vec![1],
            ceil_mode: false,
            count_include_pad: true,
            divisor_override: None,
        }
    }

    /// With this stride.
    pub fn stride(mut self, stride: &[i64]) -> PoolOptions {
        self.stride = stride.to_vec();
        self
    }

    /// With this padding.
    pub fn padding(mut self, padding: &[i64]) -> PoolOptions {
        self.padding = padding.to_vec();
        self
    }

    /// With this dilation.
    pub fn dilation(mut self, dilation: &[i64]) -> PoolOptions {
        self.dilation = dilation.to_vec();
        self
    }

    /// Rounding the output size up.
    pub fn ceil_mode(mut self) -> PoolOptions {
        self.ceil_mode = true;
        self
    }

    /// Not counting padding in averages.
    pub fn exclude_pad(mut self) -> PoolOptions {
        self.count_include_pad = false;
        self
    }

    /// Dividing sums by `divisor`.
    pub fn divisor_override(mut self, divisor: i64) -> PoolOptions {
        self.divisor_override = Some(divisor);
        self
    }
}

/// `F.interpolate`'s modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InterpolateMode {
    /// `"nearest"` (the default).
    #[default]
    Nearest,
    /// `"nearest-exact"`.
    NearestExact,
    /// `"linear"`, `"bilinear"` or `"trilinear"` by the input's rank.
    Linear,
    /// `"bicubic"` (4-D inputs).
    Bicubic,
    /// `"area"`: adaptive average pooling.
    Area,
}

/// `F.interpolate`'s arguments: an output `size` or a `scale_factor`, the
/// mode and `align_corners`.
#[derive(Clone, Debug, PartialEq)]
pub struct Interpolate {
    /// The spatial output size, when given.
    pub size: Option<Vec<i64>>,
    /// The scale per spatial dim (one for all), when no size is given.
    pub scale_factor: Option<Vec<f64>>,
    /// How sources are read.
    pub mode: InterpolateMode,
    /// Align corner pixels (linear and bicubic modes).
    pub align_corners: bool,
}

impl Interpolate {
    /// To this spatial size.
    pub fn size(size: &[i64]) -> Interpolate {
        Interpolate {
            size: Some(size.to_vec()),
            scale_factor: None,
            mode: InterpolateMode::Nearest,
            align_corners: false,
        }
    }

    /// By this factor per spatial dim (one value for all); the output
    /// size is `floor(in · factor)` and the factor is passed on to the
    /// kernel as PyTorch does.
    pub fn scale_factor(scale: &[f64]) -> Interpolate {
        Interpolate {
            size: None,
            scale_factor: Some(scale.to_vec()),
            mode: InterpolateMode::Nearest,
            align_corners: false,
        }
    }

    /// In this mode.
    pub fn mode(mut self, mode: InterpolateMode) -> Interpolate {
        self.mode = mode;
        self
    }

    /// With corner pixels aligned.
    pub fn align_corners(mut self) -> Interpolate {
        self.align_corners = true;
        self
    }
}

/// The spatial rank of a convolution from its weight (`[O, I, *k]`).
fn conv_dims(weight: &Tensor) -> usize {
    weight.shape().map_or(2, |s| s.len().saturating_sub(2))
}

impl Tensor {
    /// `F.conv1d`/`conv2d`/`conv3d(self, weight, bias, ...)`, by the
    /// weight's rank.
    pub fn conv(&self, weight: &Tensor, bias: Option<&Tensor>, options: ConvOptions) -> Tensor {
        let ConvOptions {
            stride,
            padding,
            dilation,
            groups,
            ..
        } = options;
        let op = match conv_dims(weight) {
            1 => Op::Conv1d {
                stride,
                padding,
                dilation,
                groups,
            },
            3 => Op::Conv3d {
                stride,
                padding,
                dilation,
                groups,
            },
            _ => Op::Conv2d {
                stride,
                padding,
                dilation,
                groups,
            },
        };
        record(op, vec![t(self), t(weight), Input::from(bias)], None)
    }

    /// `F.conv_transpose1d`/`2d`/`3d(self, weight, bias, ...)`, by the
    /// weight's rank (`[C_in, C_out/groups, *k]`); `"same"` padding is not
    /// PyTorch's for these and counts as 0.
    pub fn conv_transpose(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        options: ConvOptions,
    ) -> Tensor {
        let ConvOptions {
            stride,
            padding,
            dilation,
            groups,
            output_padding,
        } = options;
        let padding = match padding {
            ConvPadding::Sizes(p) => p,
            _ => vec![0],
        };
        let op = match conv_dims(weight) {
            1 => Op::ConvTranspose1d {
                stride,
                padding,
                output_padding,
                groups,
                dilation,
            },
            3 => Op::ConvTranspose3d {
                stride,
                padding,
                output_padding,
                groups,
                dilation,
            },
            _ => Op::ConvTranspose2d {
                stride,
                padding,
                output_padding,
                groups,
                dilation,
            },
        };
        record(op, vec![t(self), t(weight), Input::from(bias)], None)
    }

    fn max_pool_op(&self, dims: usize, o: PoolOptions, indices: bool) -> Op {
        let PoolOptions {
            kernel_size,
            stride,
            padding,
            dilation,
            ceil_mode,
            ..
        } = o;
        match (dims, indices) {
            (1, false) => Op::MaxPool1d {
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
            },
            (3, false) => Op::MaxPool3d {
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
            },
            (_, false) => Op::MaxPool2d {
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
            },
            (1, true) => Op::MaxPool1dWithIndices {
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
            },
            (3, true) => Op::MaxPool3dWithIndices {
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
            },
            (_, true) => Op::MaxPool2dWithIndices {
                kernel_size,
                stride,
                padding,
                dilation,
                ceil_mode,
            },
        }
    }

    /// `F.max_pool{dims}d(self, ...)` for `dims` 1, 2 or 3.
    pub fn max_pool(&self, dims: usize, options: PoolOptions) -> Tensor {
        record(self.max_pool_op(dims, options, false), vec![t(self)], None)
    }

    /// `F.max_pool{dims}d(self, ..., return_indices=True)`: the maxima and
    /// their flat positions in the input's spatial dims.
    pub fn max_pool_with_indices(&self, dims: usize, options: PoolOptions) -> (Tensor, Tensor) {
        pair(record_all(
            self.max_pool_op(dims, options, true),
            vec![t(self)],
            None,
            Some(2),
        ))
    }

    /// `F.avg_pool{dims}d(self, ...)` for `dims` 1, 2 or 3.
    pub fn avg_pool(&self, dims: usize, options: PoolOptions) -> Tensor {
        let PoolOptions {
            kernel_size,
            stride,
            padding,
            ceil_mode,
            count_include_pad,
            divisor_override,
            ..
        } = options;
        let op = match dims {
            1 => Op::AvgPool1d {
                kernel_size,
                stride,
                padding,
                ceil_mode,
                count_include_pad,
            },
            3 => Op::AvgPool3d {
                kernel_size,
                stride,
                padding,
                ceil_mode,
                count_include_pad,
                divisor_override,
            },
            _ => Op::AvgPool2d {
                kernel_size,
                stride,
                padding,
                ceil_mode,
                count_include_pad,
                divisor_override,
            },
        };
        record(op, vec![t(self)], None)
    }

    /// `F.adaptive_avg_pool1d`/`2d`/`3d(self, output_size)`, by the
    /// output size's length.
    pub fn adaptive_avg_pool(&self, output_size: &[i64]) -> Tensor {
        let output_size = output_size.to_vec();
        let op = match output_size.len() {
            1 => Op::AdaptiveAvgPool1d { output_size },
            3 => Op::AdaptiveAvgPool3d { output_size },
            _ => Op::AdaptiveAvgPool2d { output_size },
        };
        record(op, vec![t(self)], None)
    }

    /// `F.adaptive_max_pool1d`/`2d`/`3d(self, output_size, return_indices=True)`.
    pub fn adaptive_max_pool(&self, output_size: &[i64]) -> (Tensor, Tensor) {
        let output_size = output_size.to_vec();
        let op = match output_size.len() {
            1 => Op::AdaptiveMaxPool1d { output_size },
            3 => Op::AdaptiveMaxPool3d { output_size },
            _ => Op::AdaptiveMaxPool2d { output_size },
        };
        pair(record_all(op, vec![t(self)], None, Some(2)))
    }

    /// `F.interpolate(self, size | scale_factor, mode, align_corners)`:
    /// the `upsample_*` op of the input's spatial rank (`"area"` is
    /// adaptive average pooling).
    pub fn interpolate(&self, how: Interpolate) -> Tensor {
        let shape = self.shape().unwrap_or_default();
        let dims = shape.len().saturating_sub(2).clamp(1, 3);
        let spatial = &shape[shape.len().saturating_sub(dims)..];
        let per_dim = |v: &[f64]| -> Vec<f64> {
            if v.len() == 1 {
                vec![v[0]; dims]
            } else {
                v.to_vec()
            }
        };
        let (output_size, scales): (Vec<i64>, Vec<Option<F64>>) =
            match (&how.size, &how.scale_factor) {
                (Some(size), _) => (size.clone(), vec![None; dims]),
                (None, Some(scale)) => {
                    let scale = per_dim(scale);
                    (
                        spatial
                            .iter()
                            .zip(&scale)
                            .map(|(s, f)| (*s as f64 * f).floor() as i64)
                            .collect(),
                        scale.iter().map(|f| Some(F64(*f))).collect(),
                    )
                }
                (None, None) => (spatial.to_vec(), vec![None; dims]),
            };
        let s = |i: usize| scales.get(i).copied().flatten();
        let align_corners = how.align_corners;
        let op = match (how.mode, dims) {
            (InterpolateMode::Area, _) => return self.adaptive_avg_pool(&output_size),
            (InterpolateMode::Nearest, 1) => Op::UpsampleNearest1d {
                output_size,
                scales: s(0),
            },
            (InterpolateMode::Nearest, 3) => Op::UpsampleNearest3d {
                output_size,
                scales_d: s(0),
                scales_h: s(1),
                scales_w: s(2),
            },
            (InterpolateMode::Nearest, _) => Op::UpsampleNearest2d {
                output_size,
                scales_h: s(0),
                scales_w: s(1),
            },
            (InterpolateMode::NearestExact, 1) => Op::UpsampleNearestExact1d {
                output_size,
                scales: s(0),
            },
            (InterpolateMode::NearestExact, 3) => Op::UpsampleNearestExact3d {
                output_size,
                scales_d: s(0),
                scales_h: s(1),
                scales_w: s(2),
            },
            (InterpolateMode::NearestExact, _) => Op::UpsampleNearestExact2d {
                output_size,
                scales_h: s(0),
                scales_w: s(1),
            },
            (InterpolateMode::Linear, 1) => Op::UpsampleLinear1d {
                output_size,
                align_corners,
                scales: s(0),
            },
            (InterpolateMode::Linear, 3) => Op::UpsampleTrilinear3d {
                output_size,
                align_corners,
                scales_d: s(0),
                scales_h: s(1),
                scales_w: s(2),
            },
            (InterpolateMode::Linear, _) => Op::UpsampleBilinear2d {
                output_size,
                align_corners,
                scales_h: s(0),
                scales_w: s(1),
            },
            (InterpolateMode::Bicubic, _) => Op::UpsampleBicubic2d {
                output_size,
                align_corners,
                scales_h: s(0),
                scales_w: s(1),
            },
        };
        record(op, vec![t(self)], None)
    }

    /// `F.lp_pool{dims}d(self, norm_type, kernel_size, stride, ceil_mode)`.
    pub fn lp_pool(&self, dims: usize, norm_type: f64, options: PoolOptions) -> Tensor {
        let PoolOptions {
            kernel_size,
            stride,
            ceil_mode,
            ..
        } = options;
        let norm_type = F64(norm_type);
        let op = match dims {
            1 => Op::LpPool1d {
                norm_type,
                kernel_size,
                stride,
                ceil_mode,
            },
            3 => Op::LpPool3d {
                norm_type,
                kernel_size,
                stride,
                ceil_mode,
            },
            _ => Op::LpPool2d {
                norm_type,
                kernel_size,
                stride,
                ceil_mode,
            },
        };
        record(op, vec![t(self)], None)
    }

    /// `F.max_unpool1d`/`2d`/`3d(self, indices, output_size=...)`: the values
    /// back at the positions `max_pool_with_indices` gave, zeros elsewhere
    /// (`stride` and `padding` are what the 3-D op checks).
    pub fn max_unpool(
        &self,
        indices: &Tensor,
        output_size: &[i64],
        stride: &[i64],
        padding: &[i64],
    ) -> Tensor {
        let output_size = output_size.to_vec();
        let op = if output_size.len() == 3 {
            Op::MaxUnpool3d {
                output_size,
                stride: stride.to_vec(),
                padding: padding.to_vec(),
            }
        } else if output_size.len() == 1 {
            Op::MaxUnpool1d { output_size }
        } else {
            Op::MaxUnpool2d { output_size }
        };
        record(op, vec![t(self), t(indices)], None)
    }

    /// `F.unfold(self, kernel_size, dilation, padding, stride)` (im2col).
    pub fn unfold_blocks(
        &self,
        kernel_size: [i64; 2],
        dilation: [i64; 2],
        padding: [i64; 2],
        stride: [i64; 2],
    ) -> Tensor {
        let op = Op::Im2col {
            kernel_size: kernel_size.to_vec(),
            dilation: dilation.to_vec(),
            padding: padding.to_vec(),
            stride: stride.to_vec(),
        };
        record(op, vec![t(self)], None)
    }

    /// `F.fold(self, output_size, kernel_size, dilation, padding, stride)`
    /// (col2im).
    pub fn fold_blocks(
        &self,
        output_size: [i64; 2],
        kernel_size: [i64; 2],
        dilation: [i64; 2],
        padding: [i64; 2],
        stride: [i64; 2],
    ) -> Tensor {
        let op = Op::Col2im {
            output_size: output_size.to_vec(),
            kernel_size: kernel_size.to_vec(),
            dilation: dilation.to_vec(),
            padding: padding.to_vec(),
            stride: stride.to_vec(),
        };
        record(op, vec![t(self)], None)
    }

    /// `F.grid_sample(self, grid, mode, padding_mode, align_corners)` with
    /// ATen's codes (mode 0 bilinear, 1 nearest, 2 bicubic; padding 0
    /// zeros, 1 border, 2 reflection), by the input's rank.
    pub fn grid_sample(
        &self,
        grid: &Tensor,
        mode: i64,
        padding_mode: i64,
        align_corners: bool,
    ) -> Tensor {
        let rank = self.shape().map_or(4, |s| s.len());
        let op = if rank == 5 {
            Op::GridSampler3d {
                interpolation_mode: mode,
                padding_mode,
                align_corners,
            }
        } else {
            Op::GridSampler2d {
                interpolation_mode: mode,
                padding_mode,
                align_corners,
            }
        };
        record(op, vec![t(self), t(grid)], None)
    }

    /// `F.affine_grid(self, size, align_corners)` with `self` the affine
    /// maps `theta`.
    pub fn affine_grid(&self, size: &[i64], align_corners: bool) -> Tensor {
        let op = Op::AffineGridGenerator {
            size: size.to_vec(),
            align_corners,
        };
        record(op, vec![t(self)], None)
    }
}
