//! f32 weights packed once for the matrix products that use them.
//!
//! A linear layer multiplies its activations by the same weight on every
//! call. The `gemm` crate packs the weight into its own panel layout on
//! every call (it has no prepacked interface), which for the few-row
//! products of transformer blocks (64–128 tokens) costs as much as a
//! fifth of the product. ONNX Runtime and OpenVINO pack their constant
//! weights once. Kiln's weights are program inputs, so Kiln packs an f32
//! right operand that is a program input (not written by the run) when a
//! product first uses it, and keeps the packed copy while those contents
//! live. The first product packs, so that a program gives the same bits
//! on every run (and whatever the number of threads: each output's sum
//! runs over `k` in one order) as long as the cache keeps the copy:
//!
//! - the cache is keyed by the buffer's contents number
//!   ([`Buffer::contents`]: unique to a buffer and replaced on every
//!   write path), the view's offset and strides and the matrix's size, so
//!   a packed copy is never used for other bytes;
//! - an entry goes when its buffer is rewritten or dropped
//!   ([`Buffer::rewritten`], `Drop for Buffer` call [`forget`]), so an idle
//!   process holds packed copies only of weights it still holds;
//! - only operands the executor vouches for are packed (program inputs
//!   that no step of the run writes); a run's temps go to `gemm`;
//! - packed bytes are bounded: `KILN_PACK_LIMIT` (bytes, or with a `K`,
//!   `M` or `G` suffix; 0 turns packing off) when set, else 1 GiB or an
//!   eighth of the machine's memory, whichever is less ([`set_pack_limit`]
//!   changes it). A weight whose copy would pass the limit is not packed:
//!   its products go to `gemm` (whose sums run in another order: a weight
//!   packed after the limit was raised, or after another's copy went,
//!   changes the last bits of its products).
//!
//! The packed layout is panels of [`PANEL`] output columns, each `k` rows
//! of 64 contiguous floats (`[n / 64][k][64]`, the last panel padded with
//! zeros), which is what [`crate::panel::product`]'s AVX-512 microkernel
//! reads: one 512-bit multiply-add a cycle. Measured on this project's
//! machine (2 threads, `[m, k] @ [k, n]`): 64×1024×4096 gemm 3.9–4.4 ms,
//! packed 3.0 ms; 64×4096×1024 4.1–5.6 and 2.6–3.1; 128×3072×768 3.5–3.9
//! and 2.8–3.2; 1024×768×3072 23–25 and 23.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use kiln_ir::Result;

use crate::storage::{Buffer, parse_size};

/// Output columns per panel: four 16-lane registers.
pub(crate) const PANEL: usize = 64;

/// A weight `B` (`k × n`) packed as panels of [`PANEL`] columns.
pub(crate) struct Packed {
    buffer: Buffer,
    k: usize,
    n: usize,
}

/// Where a weight lives: its buffer's contents, and the matrix view into
/// it, in elements.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct Key {
    contents: u64,
    offset: i64,
    row_stride: i64,
    col_stride: i64,
    k: usize,
    n: usize,
}

#[derive(Default)]
struct Cache {
    packed: HashMap<Key, Arc<Packed>>,
    bytes: usize,
    packs: u64,
    hits: u64,
}

fn cache() -> MutexGuard<'static, Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    // A panic elsewhere while holding the lock leaves consistent maps.
    cache.lock().unwrap_or_else(|e| e.into_inner())
}

static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The bound on packed bytes (see the module doc).
pub fn pack_limit() -> usize {
    let limit = LIMIT.load(Ordering::Relaxed);
    if limit != usize::MAX {
        return limit;
    }
    let limit = std::env::var("KILN_PACK_LIMIT")
        .ok()
        .and_then(|v| parse_size(&v))
        .unwrap_or_else(|| {
            let eighth = crate::storage::allocation_limit() / 8;
            eighth.min(1 << 30)
        });
    LIMIT.store(limit, Ordering::Relaxed);
    limit
}

/// Sets the bound on packed bytes; copies already packed stay until their
/// weights change or go (0: pack nothing more).
pub fn set_pack_limit(bytes: usize) {
    LIMIT.store(bytes.min(usize::MAX - 1), Ordering::Relaxed);
}

/// The packed-weight cache's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PackStats {
    /// Weights packed now.
    pub entries: usize,
    /// Their bytes (also counted in the host's live bytes).
    pub bytes: usize,
    /// The bound on `bytes`.
    pub limit_bytes: usize,
    /// Weights packed since the process started (kept or not).
    pub packs: u64,
    /// Products that used a packed weight.
    pub hits: u64,
}

/// The packed-weight cache's state now.
pub fn pack_stats() -> PackStats {
    let limit_bytes = pack_limit();
    let c = cache();
    PackStats {
        entries: c.packed.len(),
        bytes: c.bytes,
        limit_bytes,
        packs: c.packs,
        hits: c.hits,
    }
}

/// Forgets everything derived from contents number `contents` (called
/// when a buffer is rewritten or dropped).
pub(crate) fn forget(contents: u64) {
    let mut gone = Vec::new();
    {
        let mut c = cache();
        let keys: Vec<Key> = c
            .packed
            .keys()
            .filter(|k| k.contents == contents)
            .copied()
            .collect();
        for key in keys {
            if let Some(p) = c.packed.remove(&key) {
                c.bytes -= p.buffer.len();
                gone.push(p);
            }
        }
    }
    // (The packed buffers are freed here, outside the lock.)
    drop(gone);
}

/// Drops every packed copy (they are made again when next used); returns
/// their bytes.
pub fn release() -> usize {
    let gone = {
        let mut c = cache();
        c.bytes = 0;
        std::mem::take(&mut c.packed)
    };
    gone.values().map(|p| p.buffer.len()).sum()
}

/// A weight view: `B[kk][j]` at element `offset + kk·row_stride +
/// j·col_stride` of the buffer, `k × n`.
#[derive(Clone, Copy)]
pub(crate) struct WeightView {
    pub(crate) offset: i64,
    pub(crate) row_stride: i64,
    pub(crate) col_stride: i64,
    pub(crate) k: usize,
    pub(crate) n: usize,
}

/// The packed copy of the f32 weight `view` of `buffer`: the cached one,
/// or packed now and cached; `None` where the CPU lacks the product's
/// instructions or the copy would pass the limit (the product then goes
/// to `gemm`, as it would have without packing).
///
/// # Safety
/// `buffer` holds every element of `view` as f32, and nothing writes it
/// while this runs.
pub(crate) unsafe fn packed(buffer: &Buffer, view: WeightView) -> Result<Option<Arc<Packed>>> {
    if !available() {
        return Ok(None);
    }
    let key = Key {
        contents: buffer.contents(),
        offset: view.offset,
        row_stride: view.row_stride,
        col_stride: view.col_stride,
        k: view.k,
        n: view.n,
    };
    let bytes = view.n.div_ceil(PANEL) * PANEL * view.k * 4;
    {
        let mut c = cache();
        if let Some(p) = c.packed.get(&key) {
            let p = p.clone();
            c.hits += 1;
            return Ok(Some(p));
        }
        if c.bytes + bytes > pack_limit() {
            return Ok(None);
        }
    }
    // SAFETY: forwarded.
    let p = Arc::new(unsafe { pack(buffer.as_ptr() as *const f32, view)? });
    let mut c = cache();
    if let Some(other) = c.packed.get(&key) {
        // (Another thread packed it meanwhile.)
        return Ok(Some(other.clone()));
    }
    c.packs += 1;
    // (If the contents changed meanwhile, which a caller that vouches for
    // them does not allow, nothing is kept for them.)
    if buffer.contents() == key.contents {
        c.bytes += bytes;
        c.packed.insert(key, p.clone());
        buffer.mark_derived();
    }
    Ok(Some(p))
}

/// Whether this CPU runs the packed product.
fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return crate::panel::available();
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// Packs `view` of the f32 elements at `base` into panels.
///
/// # Safety
/// As for [`packed`].
unsafe fn pack(base: *const f32, view: WeightView) -> Result<Packed> {
    use rayon::prelude::*;
    let WeightView { k, n, .. } = view;
    let panel_len = PANEL * k;
    let mut buffer = Buffer::zeroed(n.div_ceil(PANEL) * panel_len * 4)?;
    let dst: &mut [f32] = {
        let bytes = buffer.bytes_mut();
        // SAFETY: 64-byte aligned, a whole number of f32.
        unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr() as *mut f32, bytes.len() / 4) }
    };
    let base = base as usize;
    dst.par_chunks_mut(panel_len.max(1))
        .enumerate()
        .for_each(|(p, panel)| {
            let cols = (n - p * PANEL).min(PANEL);
            let src = base as *const f32;
            // Blocks of 16 rows, so that a transposed weight (`x @ wᵀ`,
            // contiguous down `kk`) is read a cache line at a time.
            for k0 in (0..k).step_by(16) {
                for j in 0..cols {
                    let col = view.offset + (p * PANEL + j) as i64 * view.col_stride;
                    for kk in k0..(k0 + 16).min(k) {
                        // SAFETY: inside the view, which the caller vouches for.
                        panel[kk * PANEL + j] =
                            unsafe { *src.offset((col + kk as i64 * view.row_stride) as isize) };
                    }
                }
            }
        });
    Ok(Packed { buffer, k, n })
}

/// `out = a @ B` for the packed `B`, `a` being `m × k` f32 at `a.0` with
/// row and column strides `a.1`, `a.2`, and `out` `m × n` with unit
/// column stride and row stride `out.1`. Panels and bands of rows are
/// shared out among rayon's threads.
///
/// # Safety
/// The pointers address every element of their matrices; `out` overlaps
/// neither operand; the CPU has AVX-512F (a packed weight exists only
/// then).
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn product(
    b: &Packed,
    a: (*const f32, isize, isize),
    out: (*mut f32, isize),
    m: usize,
) {
    use crate::panel::{Out, Panel, Rows};
    use rayon::prelude::*;
    let (k, n) = (b.k, b.n);
    let panels = n.div_ceil(PANEL);
    // Enough tasks for every thread to stay busy while one lags: bands of
    // rows when there are few panels.
    let wanted = 8 * rayon::current_num_threads();
    let bands = wanted.div_ceil(panels).clamp(1, m.div_ceil(48).max(1));
    let band = m.div_ceil(bands);
    let (a_ptr, out_ptr, packed) = (a.0 as usize, out.0 as usize, b.buffer.as_ptr() as usize);
    (0..panels * bands).into_par_iter().for_each(|task| {
        let (p, r) = (task / bands, task % bands);
        let rows = band.min(m.saturating_sub(r * band));
        if rows == 0 {
            return;
        }
        let r0 = (r * band) as isize;
        // SAFETY: panel p's columns and rows r0.. of every operand are
        // inside what the caller vouches for (the panel within the packed
        // buffer); tasks write disjoint blocks of `out`.
        unsafe {
            crate::panel::product(
                Panel {
                    ptr: (packed as *const f32).add(p * PANEL * k),
                    k_stride: PANEL as isize,
                },
                Rows {
                    ptr: (a_ptr as *const f32).offset(r0 * a.1),
                    j_stride: a.1,
                    k_stride: a.2,
                },
                Out {
                    ptr: (out_ptr as *mut f32).offset(r0 * out.1).add(p * PANEL),
                    j_stride: out.1,
                },
                ((n - p * PANEL).min(PANEL), rows, k),
                false,
            )
        };
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `k × n` weight stored transposed (`n × k` row-major, as nn.Linear
    /// keeps it) or plain.
    fn weight(k: usize, n: usize, transposed: bool) -> (Buffer, WeightView) {
        let mut buffer = Buffer::zeroed(k * n * 4).unwrap();
        let values: &mut [f32] = unsafe {
            std::slice::from_raw_parts_mut(buffer.bytes_mut().as_mut_ptr() as *mut f32, k * n)
        };
        for (i, v) in values.iter_mut().enumerate() {
            *v = ((i * 37) % 101) as f32 / 50.0 - 1.0;
        }
        let (row_stride, col_stride) = if transposed {
            (1, k as i64)
        } else {
            (n as i64, 1)
        };
        (
            buffer,
            WeightView {
                offset: 0,
                row_stride,
                col_stride,
                k,
                n,
            },
        )
    }

    fn at(buffer: &Buffer, v: WeightView, kk: usize, j: usize) -> f32 {
        let values =
            unsafe { std::slice::from_raw_parts(buffer.as_ptr() as *const f32, buffer.len() / 4) };
        values[(v.offset + kk as i64 * v.row_stride + j as i64 * v.col_stride) as usize]
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn packed_products_match_the_definition() {
        if !available() {
            return;
        }
        for &(m, k, n, transposed) in &[
            (2, 16, 70, true),
            (7, 33, 64, false),
            (64, 100, 200, true),
            (130, 20, 129, false),
        ] {
            let (buffer, view) = weight(k, n, transposed);
            let a: Vec<f32> = (0..m * k)
                .map(|i| ((i * 13) % 29) as f32 / 7.0 - 2.0)
                .collect();
            let p = unsafe { pack(buffer.as_ptr() as *const f32, view).unwrap() };
            let mut out = vec![f32::NAN; m * n];
            unsafe {
                product(
                    &p,
                    (a.as_ptr(), k as isize, 1),
                    (out.as_mut_ptr(), n as isize),
                    m,
                )
            };
            for i in 0..m {
                for j in 0..n {
                    let want: f64 = (0..k)
                        .map(|kk| a[i * k + kk] as f64 * at(&buffer, view, kk, j) as f64)
                        .sum();
                    let got = out[i * n + j] as f64;
                    assert!(
                        (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                        "{m}×{k}×{n} [{i}, {j}]: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_packed_weight_is_kept_until_its_buffer_is_rewritten_or_dropped() {
        if !available() {
            return;
        }
        let (mut buffer, view) = weight(32, 96, true);
        // SAFETY (each call): the buffer holds the view.
        let first = unsafe { packed(&buffer, view) }.unwrap().expect("packed");
        let again = unsafe { packed(&buffer, view) }
            .unwrap()
            .expect("then it is kept");
        assert!(Arc::ptr_eq(&first, &again));
        let key = |b: &Buffer| Key {
            contents: b.contents(),
            offset: 0,
            row_stride: view.row_stride,
            col_stride: view.col_stride,
            k: view.k,
            n: view.n,
        };
        assert!(cache().packed.contains_key(&key(&buffer)));
        // A write gives the bytes a new number: the old copy goes, and the
        // new contents are packed anew.
        let old = key(&buffer);
        buffer.bytes_mut()[0] = 1;
        assert!(!cache().packed.contains_key(&old));
        let fresh = unsafe { packed(&buffer, view) }.unwrap().expect("packed");
        assert!(!Arc::ptr_eq(&first, &fresh));
        let values = unsafe { std::slice::from_raw_parts(fresh.buffer.as_ptr() as *const f32, 1) };
        assert_eq!(values[0], at(&buffer, view, 0, 0), "the new contents");
        let now = key(&buffer);
        assert!(cache().packed.contains_key(&now));
        drop(buffer);
        assert!(!cache().packed.contains_key(&now));
    }
}
