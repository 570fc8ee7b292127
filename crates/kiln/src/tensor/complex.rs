//! Tracing the complex-part ops (`kiln_ir::complex_parts`).

use kiln_ir::Op;

use super::{Tensor, t};
use crate::trace::record;

/// `torch.complex(real, imag)`.
pub fn complex(real: &Tensor, imag: &Tensor) -> Tensor {
    record(Op::Complex, vec![t(real), t(imag)], None)
}

/// `torch.polar(abs, angle)`.
pub fn polar(abs: &Tensor, angle: &Tensor) -> Tensor {
    record(Op::Polar, vec![t(abs), t(angle)], None)
}

impl Tensor {
    /// `torch.real(self)`: the real parts (a real tensor itself).
    pub fn real(&self) -> Tensor {
        record(Op::Real, vec![t(self)], None)
    }

    /// `torch.imag(self)`: the imaginary parts of a complex tensor.
    pub fn imag(&self) -> Tensor {
        record(Op::Imag, vec![t(self)], None)
    }

    /// `torch.conj(self)`: the complex conjugate.
    pub fn conj(&self) -> Tensor {
        record(Op::Conj, vec![t(self)], None)
    }

    /// `torch.conj_physical(self)`.
    pub fn conj_physical(&self) -> Tensor {
        record(Op::ConjPhysical, vec![t(self)], None)
    }

    /// `torch.angle(self)`: the argument of each value.
    pub fn angle(&self) -> Tensor {
        record(Op::Angle, vec![t(self)], None)
    }

    /// `torch.isreal(self)`.
    pub fn isreal(&self) -> Tensor {
        record(Op::Isreal, vec![t(self)], None)
    }

    /// `torch.view_as_real(self)`: `[..., 2]` parts of a complex tensor.
    pub fn view_as_real(&self) -> Tensor {
        record(Op::ViewAsReal, vec![t(self)], None)
    }

    /// `torch.view_as_complex(self)`: pairs of the last dim as complex values.
    pub fn view_as_complex(&self) -> Tensor {
        record(Op::ViewAsComplex, vec![t(self)], None)
    }
}
