//! Pooling blocks of `torch.nn`'s CNNs: [`MaxPool2d`], [`AvgPool2d`] and
//! [`AdaptiveAvgPool2d`]. They hold no parameters; they exist so that model
//! code reads like the PyTorch it is ported from (`self.maxpool.forward(x)`)
//! and record Kiln's `max_pool2d`, `avg_pool2d` and `adaptive_avg_pool2d`
//! ops, whose checks (window larger than the padded input, output size
//! zero) are PyTorch's and surface from [`VarStore::trace`](super::VarStore::trace).

use super::Module;
use crate::tensor::{PoolOptions, Tensor};

/// `nn.MaxPool2d(kernel_size, stride, padding, dilation, ceil_mode)`.
#[derive(Clone, Debug, PartialEq)]
pub struct MaxPool2d {
    options: PoolOptions,
}

impl MaxPool2d {
    /// Max pooling with these options (`PoolOptions::new(&[3]).stride(&[2]).padding(&[1])`
    /// for ResNet's stem).
    pub fn new(options: PoolOptions) -> MaxPool2d {
        MaxPool2d { options }
    }
}

impl Module for MaxPool2d {
    fn forward(&self, x: &Tensor) -> Tensor {
        x.max_pool(2, self.options.clone())
    }
}

/// `nn.AvgPool2d(kernel_size, stride, padding, ceil_mode, count_include_pad,
/// divisor_override)`.
#[derive(Clone, Debug, PartialEq)]
pub struct AvgPool2d {
    options: PoolOptions,
}

impl AvgPool2d {
    /// Average pooling with these options.
    pub fn new(options: PoolOptions) -> AvgPool2d {
        AvgPool2d { options }
    }
}

impl Module for AvgPool2d {
    fn forward(&self, x: &Tensor) -> Tensor {
        x.avg_pool(2, self.options.clone())
    }
}

/// `nn.AdaptiveAvgPool2d(output_size)`: `[1, 1]` is the global average
/// pooling in front of a classifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdaptiveAvgPool2d {
    output_size: [i64; 2],
}

impl AdaptiveAvgPool2d {
    /// Pools every channel to `output_size` (rows, columns).
    pub fn new(output_size: [i64; 2]) -> AdaptiveAvgPool2d {
        AdaptiveAvgPool2d { output_size }
    }
}

impl Module for AdaptiveAvgPool2d {
    fn forward(&self, x: &Tensor) -> Tensor {
        x.adaptive_avg_pool(&self.output_size)
    }
}
