//! [`Conv2d`] and [`BatchNorm2d`] (inference), `torch.nn`'s CNN layers:
//! recorded as Kiln's `conv2d` and `batch_norm` ops, so the compiled plan
//! runs the native convolution and one fused kernel for the normalization
//! and what follows it.

use kiln_ir::Result;

use super::{Module, Param, VarBuilder};
use crate::tensor::{ConvOptions, Tensor};

/// `nn.Conv2d`: `weight` `[out, in/groups, kh, kw]`, an optional `bias`
/// `[out]`, and the convolution's options.
#[derive(Clone, Debug, PartialEq)]
pub struct Conv2d {
    weight: Param,
    bias: Option<Param>,
    options: ConvOptions,
}

impl Conv2d {
    /// `weight` (and `bias` when `bias`) under `vb`, for a `kernel`
    /// (height, width) convolution from `in_channels` to `out_channels`
    /// with `options` (its `groups` divide both).
    pub fn load(
        vb: &VarBuilder,
        in_channels: i64,
        out_channels: i64,
        kernel: [i64; 2],
        options: ConvOptions,
        bias: bool,
    ) -> Result<Conv2d> {
        let shape = [
            out_channels,
            in_channels / options.groups.max(1),
            kernel[0],
            kernel[1],
        ];
        Ok(Conv2d {
            weight: vb.get("weight", &shape)?,
            bias: if bias {
                Some(vb.get("bias", &[out_channels])?)
            } else {
                None
            },
            options,
        })
    }
}

impl Module for Conv2d {
    fn forward(&self, x: &Tensor) -> Tensor {
        let bias = self.bias.as_ref().map(Param::tensor);
        x.conv(&self.weight.tensor(), bias.as_ref(), self.options.clone())
    }
}

/// `nn.BatchNorm2d` in eval mode: `(x − running_mean) / √(running_var + eps)
/// · weight + bias` per channel.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchNorm2d {
    weight: Param,
    bias: Param,
    running_mean: Param,
    running_var: Param,
    eps: f64,
}

impl BatchNorm2d {
    /// `weight`, `bias`, `running_mean` and `running_var` (`[channels]`)
    /// under `vb`; `num_batches_tracked` is not read.
    pub fn load(vb: &VarBuilder, channels: i64, eps: f64) -> Result<BatchNorm2d> {
        Ok(BatchNorm2d {
            weight: vb.get("weight", &[channels])?,
            bias: vb.get("bias", &[channels])?,
            running_mean: vb.get("running_mean", &[channels])?,
            running_var: vb.get("running_var", &[channels])?,
            eps,
        })
    }
}

impl Module for BatchNorm2d {
    fn forward(&self, x: &Tensor) -> Tensor {
        x.batch_norm(
            Some(&self.running_mean.tensor()),
            Some(&self.running_var.tensor()),
            Some(&self.weight.tensor()),
            Some(&self.bias.tensor()),
            false,
            self.eps,
        )
    }
}
