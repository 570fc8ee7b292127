//! [`Dropout`]: `nn.Dropout` in eval mode, the identity. Kiln traces
//! inference graphs (its attention op refuses dropout as training), so the
//! block exists to keep model code close to the PyTorch it is ported from.

use kiln_ir::{Error, ErrorKind, Result};

use super::Module;
use crate::tensor::Tensor;

/// `nn.Dropout(p)`, evaluated: `forward` returns its input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dropout {
    p: f64,
}

impl Dropout {
    /// Dropout with probability `p`, which must be in `[0, 1]` (PyTorch's
    /// check).
    pub fn new(p: f64) -> Result<Dropout> {
        if !(0.0..=1.0).contains(&p) {
            return Err(Error::new(
                ErrorKind::Attribute,
                format!("dropout probability has to be between 0 and 1, but got {p}"),
            ));
        }
        Ok(Dropout { p })
    }

    /// The probability (unused in eval mode).
    pub fn p(&self) -> f64 {
        self.p
    }
}

impl Module for Dropout {
    fn forward(&self, x: &Tensor) -> Tensor {
        x.clone()
    }
}
