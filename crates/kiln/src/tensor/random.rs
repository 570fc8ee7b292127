//! Tracing the random ops. Each takes the `seed` its values are drawn
//! from (see `kiln_ir::random`): the same seed and shape give the same
//! values, on every backend, so independent draws need different seeds.

use kiln_ir::{DType, F64, Op, Scalar};

use super::{Tensor, creation_device, pair, t};
use crate::trace::{Input, record, record_all};

/// `torch.rand(size, dtype=...)`: uniform in [0, 1) (the default float
/// dtype when `dtype` is `None`).
pub fn rand(size: &[i64], dtype: Option<DType>, seed: i64) -> Tensor {
    let op = Op::Rand {
        size: size.to_vec(),
        seed,
        dtype,
        device: creation_device(None),
    };
    record(op, vec![], None)
}

/// `torch.randn(size, dtype=...)`: standard normal values.
pub fn randn(size: &[i64], dtype: Option<DType>, seed: i64) -> Tensor {
    let op = Op::Randn {
        size: size.to_vec(),
        seed,
        dtype,
        device: creation_device(None),
    };
    record(op, vec![], None)
}

/// `torch.randint(low, high, size, dtype=...)`: integers in [low, high)
/// (int64 when `dtype` is `None`).
pub fn randint(low: i64, high: i64, size: &[i64], dtype: Option<DType>, seed: i64) -> Tensor {
    let op = Op::Randint {
        low,
        high,
        size: size.to_vec(),
        seed,
        dtype,
        device: creation_device(None),
    };
    record(op, vec![], None)
}

/// `torch.normal(mean, std)` for tensors (broadcast together); see
/// [`normal_scalars`] for two numbers.
pub fn normal(mean: &Tensor, std: &Tensor, seed: i64) -> Tensor {
    let op = Op::Normal {
        seed,
        size: None,
        dtype: None,
        device: None,
    };
    record(op, vec![t(mean), t(std)], None)
}

/// `torch.normal(mean, std, size, dtype=...)` for a number mean and std.
pub fn normal_scalars(
    mean: f64,
    std: f64,
    size: &[i64],
    dtype: Option<DType>,
    seed: i64,
) -> Tensor {
    let op = Op::Normal {
        seed,
        size: Some(size.to_vec()),
        dtype,
        device: creation_device(None),
    };
    let (m, s) = (Scalar::Float(mean), Scalar::Float(std));
    record(op, vec![Input::Scalar(m), Input::Scalar(s)], None)
}

impl Tensor {
    /// `x.uniform_(from, to)` out of place: the shape, dtype and strides
    /// of `self`, values uniform in [from, to).
    pub fn uniform(&self, from: f64, to: f64, seed: i64) -> Tensor {
        let op = Op::Uniform {
            from: F64(from),
            to: F64(to),
            seed,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.normal(self, std)`: normal values around each element.
    pub fn normal_around(&self, std: f64, seed: i64) -> Tensor {
        let op = Op::Normal {
            seed,
            size: None,
            dtype: None,
            device: None,
        };
        record(op, vec![t(self), Input::Scalar(Scalar::Float(std))], None)
    }

    /// `torch.bernoulli(self)`: 1 with each element's probability, else 0.
    pub fn bernoulli(&self, seed: i64) -> Tensor {
        record(Op::Bernoulli { p: None, seed }, vec![t(self)], None)
    }

    /// `torch.bernoulli(self, p)`: 1 with probability `p`, in `self`'s
    /// shape and dtype.
    pub fn bernoulli_p(&self, p: f64, seed: i64) -> Tensor {
        let op = Op::Bernoulli {
            p: Some(F64(p)),
            seed,
        };
        record(op, vec![t(self)], None)
    }

    /// `x.exponential_(lambd)` out of place.
    pub fn exponential(&self, lambd: f64, seed: i64) -> Tensor {
        let op = Op::Exponential {
            lambd: F64(lambd),
            seed,
        };
        record(op, vec![t(self)], None)
    }

    /// `x.cauchy_(median, sigma)` out of place.
    pub fn cauchy(&self, median: f64, sigma: f64, seed: i64) -> Tensor {
        let op = Op::Cauchy {
            median: F64(median),
            sigma: F64(sigma),
            seed,
        };
        record(op, vec![t(self)], None)
    }

    /// `x.log_normal_(mean, std)` out of place.
    pub fn log_normal(&self, mean: f64, std: f64, seed: i64) -> Tensor {
        let op = Op::LogNormal {
            mean: F64(mean),
            std: F64(std),
            seed,
        };
        record(op, vec![t(self)], None)
    }

    /// `x.geometric_(p)` out of place.
    pub fn geometric(&self, p: f64, seed: i64) -> Tensor {
        record(Op::Geometric { p: F64(p), seed }, vec![t(self)], None)
    }

    /// `torch.multinomial(self, num_samples, replacement)`: category
    /// positions drawn from each row of weights.
    pub fn multinomial(&self, num_samples: i64, replacement: bool, seed: i64) -> Tensor {
        let op = Op::Multinomial {
            num_samples,
            replacement,
            seed,
        };
        record(op, vec![t(self)], None)
    }

    /// `F.dropout(self, p, training)`.
    pub fn dropout(&self, p: f64, train: bool, seed: i64) -> Tensor {
        let op = Op::Dropout {
            p: F64(p),
            train,
            seed,
        };
        record(op, vec![t(self)], None)
    }

    /// `F.dropout2d`/`dropout3d(self, p, training)`: whole channels.
    pub fn feature_dropout(&self, p: f64, train: bool, seed: i64) -> Tensor {
        let op = Op::FeatureDropout {
            p: F64(p),
            train,
            seed,
        };
        record(op, vec![t(self)], None)
    }

    /// `torch.native_dropout(self, p, train)`: the output and the mask of
    /// kept elements.
    pub fn native_dropout(&self, p: f64, train: bool, seed: i64) -> (Tensor, Tensor) {
        let op = Op::NativeDropout {
            p: F64(p),
            train: Some(train),
            seed,
        };
        pair(record_all(op, vec![t(self)], None, Some(2)))
    }
}
