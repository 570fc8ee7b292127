//! Tensor files: safetensors (every dtype it has, bf16 and float8 included)
//! and `.npy` (numpy's dtypes, complex and bool included).
//!
//! Files are memory-mapped and each tensor is copied once, into aligned
//! storage. Every failure — a missing file, a truncated or corrupt header, a
//! dtype a format lacks, a shape that does not match the data — is a
//! `TensorFile` error naming the file and the tensor.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use kiln_ir::{DType, Error, ErrorKind, Result};
use num_complex::Complex;
use safetensors::tensor::{Dtype as StDtype, SafeTensors, TensorView};

use crate::tensor::Tensor;

fn file_error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorKind::TensorFile,
        format!("{}: {message}", path.display()),
    )
}

fn open_mapped(path: &Path) -> Result<memmap2::Mmap> {
    let file = File::open(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))?;
    // SAFETY: the map is read-only and Kiln does not modify the file while
    // reading it; another process truncating it is outside Kiln's control.
    unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))
}

/// Kiln's dtype for a safetensors dtype (F4 is packed in pairs, as
/// float4_e2m1fn_x2).
fn from_safetensors(d: StDtype) -> Option<DType> {
    Some(match d {
        StDtype::BOOL => DType::Bool,
        StDtype::U8 => DType::U8,
        StDtype::I8 => DType::I8,
        StDtype::I16 => DType::I16,
        StDtype::U16 => DType::U16,
        StDtype::I32 => DType::I32,
        StDtype::U32 => DType::U32,
        StDtype::I64 => DType::I64,
        StDtype::U64 => DType::U64,
        StDtype::F16 => DType::F16,
        StDtype::BF16 => DType::BF16,
        StDtype::F32 => DType::F32,
        StDtype::F64 => DType::F64,
        StDtype::C64 => DType::C64,
        StDtype::F8_E4M3 => DType::F8E4M3FN,
        StDtype::F8_E5M2 => DType::F8E5M2,
        StDtype::F8_E4M3FNUZ => DType::F8E4M3FNUZ,
        StDtype::F8_E5M2FNUZ => DType::F8E5M2FNUZ,
        StDtype::F8_E8M0 => DType::F8E8M0FNU,
        StDtype::F4 => DType::F4E2M1FNX2,
        _ => return None,
    })
}

fn to_safetensors(d: DType) -> Option<StDtype> {
    Some(match d {
        DType::Bool => StDtype::BOOL,
        DType::U8 => StDtype::U8,
        DType::I8 => StDtype::I8,
        DType::I16 => StDtype::I16,
        DType::U16 => StDtype::U16,
        DType::I32 => StDtype::I32,
        DType::U32 => StDtype::U32,
        DType::I64 => StDtype::I64,
        DType::U64 => StDtype::U64,
        DType::F16 => StDtype::F16,
        DType::BF16 => StDtype::BF16,
        DType::F32 => StDtype::F32,
        DType::F64 => StDtype::F64,
        DType::C64 => StDtype::C64,
        DType::F8E4M3FN => StDtype::F8_E4M3,
        DType::F8E5M2 => StDtype::F8_E5M2,
        DType::F8E4M3FNUZ => StDtype::F8_E4M3FNUZ,
        DType::F8E5M2FNUZ => StDtype::F8_E5M2FNUZ,
        DType::F8E8M0FNU => StDtype::F8_E8M0,
        DType::F4E2M1FNX2 => StDtype::F4,
        DType::C32 | DType::C128 => return None,
    })
}

/// Reads every tensor of a safetensors file, by name.
pub fn read_safetensors(path: &Path) -> Result<BTreeMap<String, Tensor>> {
    let map = open_mapped(path)?;
    // Each tensor's pages of the file are let go once it is copied, so
    // that reading a model holds its weights once, not twice (GPT-2
    // small's peak resident set: 1,263 MiB, where its weights are 622).
    let base = map.as_ptr() as usize;
    read_tensors(path, &map, |data| {
        #[cfg(unix)]
        // SAFETY: the map is a read-only private map of the file: its
        // pages, dropped, read again as the file's bytes. (`map` is
        // borrowed by the slice being read, which this does not change.)
        unsafe {
            let _ = map.unchecked_advise_range(
                memmap2::UncheckedAdvice::DontNeed,
                data.as_ptr() as usize - base,
                data.len(),
            );
        }
        #[cfg(not(unix))]
        let _ = data;
    })
}

/// Reads every tensor of safetensors bytes, by name; errors name `path`.
pub fn safetensors_from_bytes(path: &Path, bytes: &[u8]) -> Result<BTreeMap<String, Tensor>> {
    read_tensors(path, bytes, |_| {})
}

/// [`safetensors_from_bytes`], calling `copied` with each tensor's bytes
/// once they are copied.
fn read_tensors(
    path: &Path,
    bytes: &[u8],
    mut copied: impl FnMut(&[u8]),
) -> Result<BTreeMap<String, Tensor>> {
    let st = SafeTensors::deserialize(bytes)
        .map_err(|e| file_error(path, format!("not a valid safetensors file: {e}")))?;
    let mut out = BTreeMap::new();
    for (name, view) in st.tensors() {
        let dtype = from_safetensors(view.dtype()).ok_or_else(|| {
            file_error(
                path,
                format!(
                    "tensor '{name}' has dtype {:?}, which Kiln does not have",
                    view.dtype()
                ),
            )
        })?;
        let mut shape: Vec<i64> = view
            .shape()
            .iter()
            .map(|&d| {
                i64::try_from(d).map_err(|_| {
                    file_error(path, format!("tensor '{name}' has a dimension too large"))
                })
            })
            .collect::<Result<_>>()?;
        if dtype == DType::F4E2M1FNX2 {
            // Two 4-bit values per byte: Kiln's last dim counts bytes.
            match shape.last_mut() {
                Some(last) if *last % 2 == 0 => *last /= 2,
                _ => {
                    return Err(file_error(
                        path,
                        format!("tensor '{name}' packs an odd number of float4 values"),
                    ));
                }
            }
        }
        let tensor = Tensor::from_bytes(view.data(), &shape, dtype)
            .map_err(|e| file_error(path, format!("tensor '{name}': {}", e.message())))?;
        copied(view.data());
        out.insert(name, tensor);
    }
    Ok(out)
}

/// Writes tensors (in logical order) to a safetensors file.
pub fn write_safetensors(path: &Path, tensors: &[(String, &Tensor)]) -> Result<()> {
    let mut views = Vec::with_capacity(tensors.len());
    let mut datas = Vec::with_capacity(tensors.len());
    for (name, t) in tensors {
        let dtype = to_safetensors(t.dtype()).ok_or_else(|| {
            file_error(
                path,
                format!(
                    "safetensors has no {} dtype for '{name}' (write .npy instead)",
                    t.dtype()
                ),
            )
        })?;
        let mut shape: Vec<usize> = t.shape().iter().map(|&d| d as usize).collect();
        if t.dtype() == DType::F4E2M1FNX2 {
            if let Some(last) = shape.last_mut() {
                *last *= 2;
            }
        }
        datas.push((name.clone(), dtype, shape, t.to_bytes()));
    }
    for (name, dtype, shape, bytes) in &datas {
        let view = TensorView::new(*dtype, shape.clone(), bytes)
            .map_err(|e| file_error(path, format!("'{name}': {e}")))?;
        views.push((name.clone(), view));
    }
    safetensors::serialize_to_file(views, None, path).map_err(|e| file_error(path, e))
}

/// numpy's type string for a dtype, if numpy has it.
fn npy_descr(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::Bool => "|b1",
        DType::U8 => "|u1",
        DType::I8 => "|i1",
        DType::I16 => "<i2",
        DType::U16 => "<u2",
        DType::I32 => "<i4",
        DType::U32 => "<u4",
        DType::I64 => "<i8",
        DType::U64 => "<u8",
        DType::F16 => "<f2",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::C64 => "<c8",
        DType::C128 => "<c16",
        _ => return None,
    })
}

fn npy_values<T: npyz::Deserialize + crate::tensor::Element>(
    file: npyz::NpyFile<&[u8]>,
    shape: &[i64],
) -> std::io::Result<Result<Tensor>> {
    let values = file.into_vec::<T>()?;
    Ok(Tensor::from_vec(values, shape))
}

/// Reads a `.npy` file.
pub fn read_npy(path: &Path) -> Result<Tensor> {
    let map = open_mapped(path)?;
    npy_from_bytes(path, &map)
}

/// The deepest nesting of brackets a `.npy` header Kiln reads has: the
/// dict, and the shape tuple in it.
const NPY_HEADER_DEPTH: usize = 2;

/// Refuses `.npy` headers no plain array has (deep nesting, which makes the
/// header parser take exponential time: found by fuzzing).
fn check_npy_header(path: &Path, bytes: &[u8]) -> Result<()> {
    let (len, start) = match bytes.get(6..12) {
        Some([1, _, a, b, ..]) => (u16::from_le_bytes([*a, *b]) as usize, 10),
        Some([2 | 3, _, a, b, c, d]) => (u32::from_le_bytes([*a, *b, *c, *d]) as usize, 12),
        _ => return Ok(()), // npyz reports what is wrong
    };
    let header = &bytes[start.min(bytes.len())..start.saturating_add(len).min(bytes.len())];
    let mut depth = 0usize;
    for &b in header {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > NPY_HEADER_DEPTH {
                    return Err(file_error(
                        path,
                        "not a valid .npy file: the header nests brackets too deeply for a plain array",
                    ));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Reads `.npy` bytes; errors name `path`.
pub fn npy_from_bytes(path: &Path, bytes: &[u8]) -> Result<Tensor> {
    check_npy_header(path, bytes)?;
    let file = npyz::NpyFile::new(bytes)
        .map_err(|e| file_error(path, format!("not a valid .npy file: {e}")))?;
    let npyz::DType::Plain(type_str) = file.dtype() else {
        return Err(file_error(path, "structured .npy arrays are not supported"));
    };
    let descr = type_str.to_string().replace('>', "<").replace('=', "<");
    let dtype = DType::ALL
        .into_iter()
        .find(|d| {
            npy_descr(*d).is_some_and(|n| {
                n.trim_start_matches(['<', '|']) == descr.trim_start_matches(['<', '|'])
            })
        })
        .ok_or_else(|| file_error(path, format!("numpy dtype '{type_str}' has no Kiln dtype")))?;
    let mut shape: Vec<i64> = file
        .shape()
        .iter()
        .map(|&d| i64::try_from(d).map_err(|_| file_error(path, "a dimension is too large")))
        .collect::<Result<_>>()?;
    let numel = shape
        .iter()
        .try_fold(1i64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| file_error(path, "the shape overflows"))?;
    let needed = (numel as u128) * dtype.itemsize() as u128;
    if needed > bytes.len() as u128 {
        return Err(file_error(
            path,
            format!("the file is truncated: the shape needs {needed} bytes of data"),
        ));
    }
    let fortran = file.order() == npyz::Order::Fortran;
    if fortran {
        shape.reverse();
    }
    let read = match dtype {
        DType::Bool => npy_values::<bool>(file, &shape),
        DType::U8 => npy_values::<u8>(file, &shape),
        DType::I8 => npy_values::<i8>(file, &shape),
        DType::I16 => npy_values::<i16>(file, &shape),
        DType::U16 => npy_values::<u16>(file, &shape),
        DType::I32 => npy_values::<i32>(file, &shape),
        DType::U32 => npy_values::<u32>(file, &shape),
        DType::I64 => npy_values::<i64>(file, &shape),
        DType::U64 => npy_values::<u64>(file, &shape),
        DType::F16 => npy_values::<half::f16>(file, &shape),
        DType::F32 => npy_values::<f32>(file, &shape),
        DType::F64 => npy_values::<f64>(file, &shape),
        DType::C64 => npy_values::<Complex<f32>>(file, &shape),
        _ => npy_values::<Complex<f64>>(file, &shape),
    };
    let tensor = read.map_err(|e| file_error(path, format!("cannot read the data: {e}")))??;
    if fortran {
        // Column-major data: read as the reversed shape, then transpose back.
        let perm: Vec<i64> = (0..shape.len() as i64).rev().collect();
        let g = tensor.geometry().permute(&perm)?;
        let t = tensor.view(g)?;
        let contiguous = kiln_ir::layout::contiguous_strides(t.shape());
        return t.with_strides(&contiguous);
    }
    Ok(tensor)
}

fn write_typed<T>(path: &Path, shape: &[u64], t: &Tensor) -> Result<()>
where
    T: npyz::AutoSerialize + crate::tensor::Element,
{
    let file = File::create(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))?;
    let io = |e: std::io::Error| file_error(path, e);
    use npyz::WriterBuilder;
    let mut writer = npyz::WriteOptions::<T>::new()
        .default_dtype()
        .shape(shape)
        .writer(std::io::BufWriter::new(file))
        .begin_nd()
        .map_err(io)?;
    writer.extend(t.to_vec::<T>()?).map_err(io)?;
    writer.finish().map_err(io)
}

/// Writes a tensor (in logical order) to a `.npy` file.
pub fn write_npy(path: &Path, t: &Tensor) -> Result<()> {
    let shape: Vec<u64> = t.shape().iter().map(|&d| d as u64).collect();
    match t.dtype() {
        DType::Bool => write_typed::<bool>(path, &shape, t),
        DType::U8 => write_typed::<u8>(path, &shape, t),
        DType::I8 => write_typed::<i8>(path, &shape, t),
        DType::I16 => write_typed::<i16>(path, &shape, t),
        DType::U16 => write_typed::<u16>(path, &shape, t),
        DType::I32 => write_typed::<i32>(path, &shape, t),
        DType::U32 => write_typed::<u32>(path, &shape, t),
        DType::I64 => write_typed::<i64>(path, &shape, t),
        DType::U64 => write_typed::<u64>(path, &shape, t),
        DType::F16 => write_typed::<half::f16>(path, &shape, t),
        DType::F32 => write_typed::<f32>(path, &shape, t),
        DType::F64 => write_typed::<f64>(path, &shape, t),
        DType::C64 => write_typed::<Complex<f32>>(path, &shape, t),
        DType::C128 => write_typed::<Complex<f64>>(path, &shape, t),
        other => Err(file_error(
            path,
            format!("numpy has no {other} dtype (write safetensors instead)"),
        )),
    }
}
