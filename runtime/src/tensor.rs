//! Concrete tensors: storage, geometry (shape, strides, storage offset),
//! dtype and device; creation from Rust data, conversion back, strided
//! views that share storage, and PyTorch-style printing.

use std::fmt;

use half::{bf16, f16};
use kiln_ir::view::Geometry;
use kiln_ir::{DType, Device, Error, ErrorKind, Result, TensorType, TypeLayout};
use num_complex::Complex;

use crate::convert::{Elem, load, store};
use crate::storage::Storage;

/// A Rust type that is the element type of a dtype.
pub trait Element: Copy {
    /// The dtype whose elements are this type.
    const DTYPE: DType;
    /// This element as a value.
    fn to_elem(self) -> Elem;
    /// A value of [`Element::DTYPE`] as this type (any other value is cast
    /// with Rust's `as`, not PyTorch's rules).
    fn from_elem(v: Elem) -> Self;
}

macro_rules! int_element {
    ($($t:ty => $d:ident),*) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn to_elem(self) -> Elem { Elem::I(self as i128) }
            fn from_elem(v: Elem) -> Self { v.int() as $t }
        }
    )*};
}
int_element!(u8 => U8, i8 => I8, i16 => I16, i32 => I32, i64 => I64, u16 => U16, u32 => U32, u64 => U64);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn to_elem(self) -> Elem {
        Elem::B(self)
    }
    fn from_elem(v: Elem) -> Self {
        v.truthy()
    }
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;
    fn to_elem(self) -> Elem {
        Elem::F(self as f64)
    }
    fn from_elem(v: Elem) -> Self {
        v.f64() as f32
    }
}

impl Element for f64 {
    const DTYPE: DType = DType::F64;
    fn to_elem(self) -> Elem {
        Elem::F(self)
    }
    fn from_elem(v: Elem) -> Self {
        v.f64()
    }
}

impl Element for f16 {
    const DTYPE: DType = DType::F16;
    fn to_elem(self) -> Elem {
        Elem::F(self.to_f64())
    }
    fn from_elem(v: Elem) -> Self {
        f16::from_f64(v.f64())
    }
}

impl Element for bf16 {
    const DTYPE: DType = DType::BF16;
    fn to_elem(self) -> Elem {
        Elem::F(self.to_f64())
    }
    fn from_elem(v: Elem) -> Self {
        bf16::from_f64(v.f64())
    }
}

impl Element for Complex<f32> {
    const DTYPE: DType = DType::C64;
    fn to_elem(self) -> Elem {
        Elem::C(self.re as f64, self.im as f64)
    }
    fn from_elem(v: Elem) -> Self {
        let (re, im) = v.complex();
        Complex::new(re as f32, im as f32)
    }
}

impl Element for Complex<f64> {
    const DTYPE: DType = DType::C128;
    fn to_elem(self) -> Elem {
        Elem::C(self.re, self.im)
    }
    fn from_elem(v: Elem) -> Self {
        let (re, im) = v.complex();
        Complex::new(re, im)
    }
}

/// A concrete tensor.
#[derive(Clone)]
pub struct Tensor {
    storage: Storage,
    geometry: Geometry,
    dtype: DType,
    device: Device,
}

/// Iterates the multi-indices of a shape in row-major order.
pub struct Indices {
    shape: Vec<i64>,
    index: Vec<i64>,
    remaining: i64,
}

impl Indices {
    /// The indices of `shape`: none when a dim is 0, one (empty) for a
    /// 0-dim shape.
    pub fn new(shape: &[i64]) -> Indices {
        Indices {
            shape: shape.to_vec(),
            index: vec![0; shape.len()],
            remaining: shape.iter().product(),
        }
    }
}

impl Iterator for Indices {
    type Item = Vec<i64>;

    fn next(&mut self) -> Option<Vec<i64>> {
        if self.remaining <= 0 {
            return None;
        }
        let current = self.index.clone();
        self.remaining -= 1;
        for d in (0..self.shape.len()).rev() {
            self.index[d] += 1;
            if self.index[d] < self.shape[d] {
                break;
            }
            self.index[d] = 0;
        }
        Some(current)
    }
}

impl Tensor {
    /// A zero-filled tensor laid out with `strides` (contiguous when `None`).
    pub fn zeros_strided(
        shape: &[i64],
        strides: Option<&[i64]>,
        dtype: DType,
        device: Device,
    ) -> Result<Tensor> {
        Tensor::new_strided(shape, strides, dtype, device, true)
    }

    /// A contiguous tensor whose every byte the caller writes: from the
    /// memory pool without zeroing when it can be.
    fn for_overwrite(shape: &[i64], dtype: DType) -> Result<Tensor> {
        Tensor::new_strided(shape, None, dtype, Device::CPU, false)
    }

    fn new_strided(
        shape: &[i64],
        strides: Option<&[i64]>,
        dtype: DType,
        device: Device,
        zero: bool,
    ) -> Result<Tensor> {
        if let Some(d) = shape.iter().find(|d| **d < 0) {
            return Err(Error::new(
                ErrorKind::Shape,
                format!("negative dimension {d}"),
            ));
        }
        let geometry = match strides {
            Some(s) => Geometry::new(shape.to_vec(), s.to_vec(), 0),
            None => Geometry::contiguous(shape),
        };
        let bytes = geometry.storage_bytes(dtype.itemsize())?;
        let storage = if zero {
            Storage::zeroed(bytes)?
        } else {
            Storage::for_overwrite(bytes)?
        };
        Ok(Tensor {
            storage,
            geometry,
            dtype,
            device,
        })
    }

    /// A zero-filled contiguous tensor on the CPU.
    pub fn zeros(shape: &[i64], dtype: DType) -> Result<Tensor> {
        Tensor::zeros_strided(shape, None, dtype, Device::CPU)
    }

    /// A fresh tensor of an IR type (its strides, or contiguous).
    pub fn for_type(ty: &TensorType) -> Result<Tensor> {
        let strides = match &ty.layout {
            TypeLayout::Strided(s) => Some(&s[..]),
            _ => None,
        };
        Tensor::zeros_strided(&ty.shape, strides, ty.dtype, ty.device)
    }

    /// A contiguous tensor from values in row-major order.
    pub fn from_vec<T: Element>(data: Vec<T>, shape: &[i64]) -> Result<Tensor> {
        Tensor::from_values(data.into_iter().map(Element::to_elem), shape, T::DTYPE)
    }

    /// A contiguous tensor from a slice of values in row-major order.
    pub fn from_slice<T: Element>(data: &[T], shape: &[i64]) -> Result<Tensor> {
        Tensor::from_values(data.iter().map(|x| x.to_elem()), shape, T::DTYPE)
    }

    /// A contiguous tensor of `dtype` from values in row-major order.
    pub fn from_values(
        values: impl IntoIterator<Item = Elem>,
        shape: &[i64],
        dtype: DType,
    ) -> Result<Tensor> {
        let mut t = Tensor::for_overwrite(shape, dtype)?;
        let n = t.numel() as usize;
        let size = dtype.itemsize();
        let bytes = t
            .storage
            .bytes_mut()
            .expect("a fresh tensor owns its storage");
        let mut count = 0;
        for (i, v) in values.into_iter().enumerate() {
            if i >= n {
                count = i + 1;
                break;
            }
            store(dtype, v, &mut bytes[i * size..(i + 1) * size]);
            count = i + 1;
        }
        if count != n {
            return Err(Error::new(
                ErrorKind::Shape,
                format!(
                    "{count} values given for a tensor of shape {} ({n} elements)",
                    kiln_ir::view::format_shape(shape)
                ),
            ));
        }
        Ok(t)
    }

    /// A contiguous tensor over raw little-endian bytes of `dtype`.
    pub fn from_bytes(bytes: &[u8], shape: &[i64], dtype: DType) -> Result<Tensor> {
        let mut t = Tensor::for_overwrite(shape, dtype)?;
        let expected = t.storage.len();
        if bytes.len() != expected {
            return Err(Error::new(
                ErrorKind::TensorFile,
                format!(
                    "{} bytes given for {dtype} of shape {} ({expected} bytes)",
                    bytes.len(),
                    kiln_ir::view::format_shape(shape)
                ),
            ));
        }
        t.storage
            .bytes_mut()
            .expect("a fresh tensor owns its storage")
            .copy_from_slice(bytes);
        Ok(t)
    }

    /// A tensor over existing storage; the geometry must fit it.
    pub fn from_storage(
        storage: Storage,
        geometry: Geometry,
        dtype: DType,
        device: Device,
    ) -> Result<Tensor> {
        let needed = geometry.storage_bytes(dtype.itemsize())?;
        if needed > storage.len() || geometry.offset < 0 {
            return Err(Error::new(
                ErrorKind::Layout,
                format!(
                    "a view needs {needed} bytes but its storage has {}",
                    storage.len()
                ),
            ));
        }
        Ok(Tensor {
            storage,
            geometry,
            dtype,
            device,
        })
    }

    /// Its dtype.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The device it is labelled with (its data is in host memory).
    pub fn device(&self) -> Device {
        self.device
    }

    /// Its shape.
    pub fn shape(&self) -> &[i64] {
        &self.geometry.shape
    }

    /// Its strides, in elements.
    pub fn strides(&self) -> &[i64] {
        &self.geometry.strides
    }

    /// Its storage offset, in elements.
    pub fn offset(&self) -> i64 {
        self.geometry.offset
    }

    /// Its shape, strides and storage offset.
    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The storage it views (shared with every view of it).
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// Its number of elements.
    pub fn numel(&self) -> i64 {
        self.geometry.numel()
    }

    /// The IR type of this tensor (with its strides).
    pub fn tensor_type(&self) -> TensorType {
        TensorType::new(self.shape().to_vec(), self.dtype)
            .on(self.device)
            .with_layout(TypeLayout::Strided(self.strides().to_vec()))
    }

    /// The same data labelled with another device (host memory either way).
    pub fn with_device(mut self, device: Device) -> Tensor {
        self.device = device.for_tensor();
        self
    }

    /// A view sharing storage.
    pub fn view(&self, geometry: Geometry) -> Result<Tensor> {
        Tensor::from_storage(self.storage.clone(), geometry, self.dtype, self.device)
    }

    fn byte_offset(&self, index: &[i64]) -> usize {
        self.geometry.element_offset(index) as usize * self.dtype.itemsize()
    }

    /// The element at a multi-index.
    pub fn get(&self, index: &[i64]) -> Elem {
        let o = self.byte_offset(index);
        load(
            self.dtype,
            &self.storage.bytes()[o..o + self.dtype.itemsize()],
        )
    }

    /// Every element in row-major (logical) order.
    pub fn values(&self) -> Vec<Elem> {
        Indices::new(self.shape()).map(|i| self.get(&i)).collect()
    }

    /// The elements in logical order as a Rust type; the dtype must match.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype {
            return Err(Error::new(
                ErrorKind::DType,
                format!("the tensor holds {}, not {}", self.dtype, T::DTYPE),
            ));
        }
        Ok(self.values().into_iter().map(T::from_elem).collect())
    }

    /// The raw bytes of the elements in logical order.
    pub fn to_bytes(&self) -> Vec<u8> {
        let size = self.dtype.itemsize();
        if self.numel() == 0 {
            return Vec::new();
        }
        if self.geometry.is_contiguous() {
            let start = self.geometry.offset as usize * size;
            return self.storage.bytes()[start..start + self.numel() as usize * size].to_vec();
        }
        let mut out = Vec::with_capacity(self.numel() as usize * size);
        for i in Indices::new(self.shape()) {
            let o = self.byte_offset(&i);
            out.extend_from_slice(&self.storage.bytes()[o..o + size]);
        }
        out
    }

    /// A copy laid out with `strides` (e.g. an input laid out as its
    /// argument's type declares).
    pub fn with_strides(&self, strides: &[i64]) -> Result<Tensor> {
        let mut out = Tensor::zeros_strided(self.shape(), Some(strides), self.dtype, self.device)?;
        out.copy_from(self)?;
        Ok(out)
    }

    /// Copies `src`'s elements (same shape and dtype) into this tensor.
    pub fn copy_from(&mut self, src: &Tensor) -> Result<()> {
        if src.shape() != self.shape() || src.dtype != self.dtype {
            return Err(Error::new(
                ErrorKind::Shape,
                "copy between tensors of different shapes or dtypes",
            ));
        }
        let size = self.dtype.itemsize();
        let offsets: Vec<usize> = Indices::new(self.shape())
            .map(|i| self.byte_offset(&i))
            .collect();
        let src_bytes = src.to_bytes();
        let dst = self
            .storage
            .bytes_mut()
            .ok_or_else(|| Error::new(ErrorKind::Runtime, "cannot write into shared storage"))?;
        for (k, o) in offsets.into_iter().enumerate() {
            dst[o..o + size].copy_from_slice(&src_bytes[k * size..(k + 1) * size]);
        }
        Ok(())
    }

    /// The bytes of this tensor's storage, when it is not shared.
    pub fn bytes_mut(&mut self) -> Result<&mut [u8]> {
        self.storage
            .bytes_mut()
            .ok_or_else(|| Error::new(ErrorKind::Runtime, "cannot write into shared storage"))
    }

    /// Writes `v` at a multi-index (the storage must not be shared).
    pub fn set(&mut self, index: &[i64], v: Elem) -> Result<()> {
        let o = self.byte_offset(index);
        let d = self.dtype;
        let bytes = self
            .storage
            .bytes_mut()
            .ok_or_else(|| Error::new(ErrorKind::Runtime, "cannot write into shared storage"))?;
        store(d, v, &mut bytes[o..o + d.itemsize()]);
        Ok(())
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor({:?}, {}, strides {:?}, offset {})",
            self.shape(),
            self.dtype,
            self.strides(),
            self.offset()
        )
    }
}

/// PyTorch's printing: `tensor([[1., 2.], [3., 4.]])`, four decimals for
/// non-integral floats, at most three items at each end of a long dim, and
/// the dtype and device when they are not the defaults.
impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::print::write_tensor(f, self)
    }
}
