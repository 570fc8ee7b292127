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
//!   ([`Buffer::contents`]: unique to a buffer, and replaced by any
//!   write once something was derived from it), the view's offset and
//!   strides and the matrix's size, so a packed copy is never used for
//!   other bytes;
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
//! of 64 contiguous floats (`[n / 64][k][64]`; the last panel's columns
//! past `n` are never written nor read), which is what
//! [`crate::panel::product`]'s microkernel reads (AVX-512: one 512-bit
//! multiply-add a cycle; or AVX2, a panel in four blocks of 16 columns). Measured on this project's
//! machine (2 threads, `[m, k] @ [k, n]`): 64×1024×4096 gemm 3.9–4.4 ms,
//! packed 3.0 ms; 64×4096×1024 4.1–5.6 and 2.6–3.1; 128×3072×768 3.5–3.9
//! and 2.8–3.2; 1024×768×3072 23–25 and 23.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use kiln_ir::Result;

use crate::storage::{Buffer, Storage, env_size};

/// Output columns per panel: four 16-lane registers.
pub(crate) const PANEL: usize = 64;

/// A weight `B` (`k × n`) packed as panels of [`PANEL`] columns.
pub struct Packed {
    /// The panels (shared with the stand-in tensor of a bound weight,
    /// [`pack_bound`]).
    storage: Storage,
    /// The view of the weight it was packed from.
    view: WeightView,
}

impl Packed {
    /// Bytes of the packed copy.
    pub fn bytes(&self) -> usize {
        self.storage.len()
    }

    /// The panels' storage.
    pub(crate) fn storage(&self) -> &Storage {
        &self.storage
    }

    /// The view of the weight it was packed from.
    pub(crate) fn view(&self) -> WeightView {
        self.view
    }
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

/// Where a convolution's weight lives: its buffer's contents and its
/// view (`[O, C, kh, kw]`, in elements).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct ConvKey {
    contents: u64,
    offset: i64,
    shape: Vec<i64>,
    strides: Vec<i64>,
}

#[derive(Default)]
struct Cache {
    packed: HashMap<Key, Arc<Packed>>,
    /// Convolution weights in Winograd's domain (`crate::winograd`).
    transformed: HashMap<ConvKey, Storage>,
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

/// The limit [`set_pack_limit`] set (`usize::MAX`: none set).
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The bound on packed bytes (see the module doc); an error if
/// `KILN_PACK_LIMIT` is set to something that is not a size.
pub fn pack_limit() -> Result<usize> {
    let set = LIMIT.load(Ordering::Relaxed);
    if set != usize::MAX {
        return Ok(set);
    }
    static ENV: OnceLock<Result<usize>> = OnceLock::new();
    ENV.get_or_init(|| {
        env_size("KILN_PACK_LIMIT", || {
            (crate::storage::allocation_limit() / 8).min(1 << 30)
        })
    })
    .clone()
}

/// Sets the bound on packed bytes, overriding `KILN_PACK_LIMIT`; copies
/// already packed stay until their weights change or go (0: pack nothing
/// more).
pub fn set_pack_limit(bytes: usize) {
    LIMIT.store(bytes.min(usize::MAX - 1), Ordering::Relaxed);
}

/// The packed-weight cache's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PackStats {
    /// Weights packed now (and convolution weights kept transformed).
    pub entries: usize,
    /// Their bytes (also counted in the host's live bytes).
    pub bytes: usize,
    /// The bound on `bytes`.
    pub limit_bytes: usize,
    /// Weights packed (and convolution weights transformed) since the
    /// process started, kept or not.
    pub packs: u64,
    /// Products (and convolutions) that found their weight's copy in the
    /// cache (the one that made it is not counted).
    pub hits: u64,
}

/// The packed-weight cache's state now.
pub fn pack_stats() -> PackStats {
    // (0 where `KILN_PACK_LIMIT` is not a size: nothing packs then.)
    let limit_bytes = pack_limit().unwrap_or(0);
    let c = cache();
    PackStats {
        entries: c.packed.len() + c.transformed.len(),
        bytes: c.bytes,
        limit_bytes,
        packs: c.packs,
        hits: c.hits,
    }
}

/// A copy derived from a weight's bytes, as the cache keeps it.
trait Kept: Clone {
    /// Its bytes, as the limit counts them.
    fn bytes(&self) -> usize;
}

impl Kept for Arc<Packed> {
    fn bytes(&self) -> usize {
        self.storage.len()
    }
}

impl Kept for Storage {
    fn bytes(&self) -> usize {
        self.len()
    }
}

impl Cache {
    /// Takes out the copies derived from the contents numbers `from`
    /// accepts, their bytes no longer counted (bytes reserved by a copy
    /// being made stay counted until it is kept or dropped): returned with
    /// their bytes, to be dropped outside the lock.
    fn take(&mut self, from: impl Fn(u64) -> bool) -> ((Vec<Arc<Packed>>, Vec<Storage>), usize) {
        let packed: Vec<_> = self
            .packed
            .extract_if(|k, _| from(k.contents))
            .map(|(_, p)| p)
            .collect();
        let transformed: Vec<_> = self
            .transformed
            .extract_if(|k, _| from(k.contents))
            .map(|(_, t)| t)
            .collect();
        let bytes = packed.iter().map(Kept::bytes).sum::<usize>()
            + transformed.iter().map(Kept::bytes).sum::<usize>();
        self.bytes -= bytes;
        ((packed, transformed), bytes)
    }

    /// The copy of `buffer`'s bytes kept in `map` under `key`, or made by
    /// `make` and kept there while those bytes are unchanged (`bytes`
    /// reserved while it is made, so that threads making copies at once
    /// stay within `limit` together); `None` where it would pass the
    /// limit or `make` fails. The one protocol of packed weights and
    /// transformed convolution weights.
    fn kept<K: Eq + std::hash::Hash, V: Kept>(
        map: fn(&mut Cache) -> &mut HashMap<K, V>,
        (buffer, key, contents): (&Buffer, K, u64),
        (bytes, limit): (usize, usize),
        make: impl FnOnce() -> Option<V>,
    ) -> Option<V> {
        {
            let mut c = cache();
            if let Some(v) = map(&mut c).get(&key).cloned() {
                c.hits += 1;
                return Some(v);
            }
            if c.bytes + bytes > limit {
                return None;
            }
            c.bytes += bytes;
        }
        let Some(made) = make() else {
            cache().bytes -= bytes;
            return None;
        };
        // (From here a write renumbers the contents and forgets the copy.
        // None can happen while it is made: the caller vouches that
        // nothing writes the bytes during the run, and a write needs the
        // buffer to itself; the check below is a guard only.)
        buffer.mark_derived();
        let mut c = cache();
        c.packs += 1;
        if let Some(other) = map(&mut c).get(&key).cloned() {
            // (Another thread made it meanwhile.)
            c.bytes -= bytes;
            return Some(other);
        }
        if buffer.contents() == contents && made.bytes() == bytes {
            map(&mut c).insert(key, made.clone());
        } else {
            c.bytes -= bytes;
        }
        Some(made)
    }
}

/// Forgets everything derived from contents number `contents` (called
/// when a buffer is rewritten or dropped).
pub(crate) fn forget(contents: u64) {
    let (gone, _) = cache().take(|c| c == contents);
    // (The copies are freed here, outside the lock.)
    drop(gone);
}

/// Drops every packed copy and transform (they are made again when next
/// used); returns their bytes.
pub fn release() -> usize {
    let (gone, bytes) = cache().take(|_| true);
    drop(gone);
    bytes
}

/// A convolution weight's transform (Winograd's `G g Gᵀ` for every pair
/// of channels, `crate::winograd`), made by `make` (`len` floats) and
/// kept as packed weights are: under the weight's buffer's contents
/// number, within the same limit, forgotten when the weight is written
/// or dropped. `None` where it would pass the limit or `make` fails (the
/// caller then transforms the weight for this call only).
///
/// # Safety
/// `buffer` holds the weight at `g`, and nothing writes it while this
/// runs (the executor vouches: a program input the run does not write).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) unsafe fn transformed(
    buffer: &Buffer,
    g: &kiln_ir::view::Geometry,
    len: usize,
    make: impl FnOnce() -> Result<Storage>,
) -> Option<Storage> {
    let limit = pack_limit().ok()?;
    let contents = buffer.contents();
    let key = ConvKey {
        contents,
        offset: g.offset,
        shape: g.shape.clone(),
        strides: g.strides.clone(),
    };
    Cache::kept(
        |c| &mut c.transformed,
        (buffer, key, contents),
        (len * 4, limit),
        || make().ok(),
    )
}

/// A weight view: `B[kk][j]` at element `offset + kk·row_stride +
/// j·col_stride` of the buffer, `k × n`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct WeightView {
    pub(crate) offset: i64,
    pub(crate) row_stride: i64,
    pub(crate) col_stride: i64,
    pub(crate) k: usize,
    pub(crate) n: usize,
}

/// The packed copy of the f32 weight `view` of `buffer`: the cached one,
/// or packed now and cached; `None` where the CPU lacks the product's
/// instructions, the copy would pass the limit, or its memory cannot be
/// had (the product then goes to `gemm`, as it would have without
/// packing); an error only for a `KILN_PACK_LIMIT` that is not a size.
///
/// # Safety
/// `buffer` holds every element of `view` as f32, and nothing writes it
/// while this runs.
pub(crate) unsafe fn packed(buffer: &Buffer, view: WeightView) -> Result<Option<Arc<Packed>>> {
    if !available() {
        return Ok(None);
    }
    let limit = pack_limit()?;
    let contents = buffer.contents();
    let key = Key {
        contents,
        offset: view.offset,
        row_stride: view.row_stride,
        col_stride: view.col_stride,
        k: view.k,
        n: view.n,
    };
    let bytes = view.n.div_ceil(PANEL) * PANEL * view.k * 4;
    // SAFETY (of `pack`): forwarded.
    let make = || {
        unsafe { pack(buffer.as_ptr() as *const f32, view) }
            .ok()
            .map(Arc::new)
    };
    Ok(Cache::kept(
        |c| &mut c.packed,
        (buffer, key, contents),
        (bytes, limit),
        make,
    ))
}

/// The packed copy of the f32 weight `view` of `tensor`'s storage, for a
/// weight being bound to a program (`crate::bind`), which keeps the copy
/// *instead of* the weight. Where the binding holds the weight alone (its
/// caller gave it up), the copy is made outside the cache and its limit:
/// it costs no memory, and a weight whose view is the whole of it with
/// contiguous columns (nn.Linear's, `Bᵀ` dense) is let go a group of
/// panels at a time as it packs, so that binding a model needs about no
/// memory beyond its weights (GPT-2 small's peak resident set: 840 MiB
/// binding its 147 MiB token embedding whole, 707 so). Where another
/// handle keeps the weight (a `kiln::nn` store, several programs bound to
/// the same weights), the copy is the cache's ([`packed`]): shared by
/// every program and product that multiplies by those bytes, and within
/// the limit. `None` where the CPU lacks the product's instructions,
/// `KILN_PACK_LIMIT` is 0 (packing off), the copy would pass the limit, or
/// its memory cannot be had (the binding then keeps the weight as given).
///
/// Either way the copy is the one [`packed`] makes: the bound program's
/// products give the same bits as the same program's with its weights
/// passed on every run. The caller drops `tensor` after.
pub(crate) fn pack_bound(
    tensor: &crate::tensor::Tensor,
    view: WeightView,
) -> Result<Option<Arc<Packed>>> {
    if !available() || pack_limit()? == 0 {
        return Ok(None);
    }
    let storage = tensor.storage();
    let (lo, hi) = crate::execute::extent(
        &[view.k as i64, view.n as i64],
        view.offset,
        &[view.row_stride, view.col_stride],
    );
    if tensor.dtype() != kiln_ir::DType::F32 || lo < 0 || (hi + 1) * 4 > storage.len() as i64 {
        return Err(kiln_ir::Error::new(
            kiln_ir::ErrorKind::Backend,
            "a bound weight's packed view lies outside its tensor",
        ));
    }
    if !storage.is_unique() {
        // SAFETY: as below; the weight's buffer, which nothing writes
        // while a handle to it is held here.
        return unsafe { packed(storage.buffer(), view) };
    }
    let (col, buffer) = (view.col_stride as usize, storage.buffer());
    let whole = view.row_stride == 1
        && view.offset == 0
        && col == view.k
        && view.k * view.n * 4 == storage.len();
    let release = |cols: std::ops::Range<usize>| {
        if whole {
            // SAFETY: the binding holds the weight alone, and is done with
            // these columns' bytes: it drops the weight once packed, whose
            // place the copy takes (it is as large, the view being all of
            // the weight).
            unsafe { buffer.discard(cols.start * col * 4..cols.end * col * 4) };
        }
    };
    // SAFETY: the view lies inside the storage's f32 elements (checked
    // above); the binding holds the tensor alone, so nothing writes it.
    match unsafe { pack_with(storage.as_ptr() as *const f32, view, release) } {
        Ok(p) => {
            cache().packs += 1;
            Ok(Some(Arc::new(p)))
        }
        Err(_) => Ok(None),
    }
}

/// Whether this CPU runs the packed product.
fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    return crate::panel::available();
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// Packs `view` of the f32 elements at `base` into panels, on rayon's
/// threads a panel at a time: a weight with contiguous rows (GPT-2's
/// Conv1D, `[k, n]`) a row segment copy per `kk`; a transposed one
/// (nn.Linear's `wᵀ`, contiguous down `kk`) in 16×16 blocks transposed in
/// AVX-512 registers (element by element without AVX-512); any other
/// strides element by element. (Packed
/// element by element, nn.Linear's [4096, 1024] weight took longer than
/// the product it serves; in registers, about as long as reading it.)
///
/// # Safety
/// As for [`packed`].
unsafe fn pack(base: *const f32, view: WeightView) -> Result<Packed> {
    // SAFETY: forwarded.
    unsafe { pack_with(base, view, |_| {}) }
}

/// [`pack`] a group of panels at a time, calling `packed` with the range
/// of columns packed after each group.
///
/// # Safety
/// As for [`packed`].
unsafe fn pack_with(
    base: *const f32,
    view: WeightView,
    mut packed: impl FnMut(std::ops::Range<usize>),
) -> Result<Packed> {
    let WeightView { k, n, .. } = view;
    let panel_len = PANEL * k;
    // (The last panel's columns past `n` are never written nor read: the
    // product masks them.)
    let mut buffer = Buffer::for_overwrite(n.div_ceil(PANEL) * panel_len * 4)?;
    let dst = buffer.floats_mut();
    // Groups of panels of about 4 MiB, enough for every thread.
    let group = ((4 << 20) / (panel_len * 4).max(1)).max(rayon::current_num_threads());
    for (g, dst) in dst.chunks_mut((group * panel_len).max(1)).enumerate() {
        let first = g * group * PANEL;
        let cols = first..(first + group * PANEL).min(n);
        let part = WeightView {
            offset: view.offset + first as i64 * view.col_stride,
            n: cols.len(),
            ..view
        };
        // SAFETY: a part of the view.
        unsafe { pack_into(base, part, dst) };
        packed(cols);
    }
    Ok(Packed {
        storage: Storage::from_buffer(buffer),
        view,
    })
}

/// Packs `view` into `dst` (its panels, in order).
///
/// # Safety
/// As for [`packed`].
unsafe fn pack_into(base: *const f32, view: WeightView, dst: &mut [f32]) {
    use rayon::prelude::*;
    let WeightView { k, n, .. } = view;
    let panel_len = PANEL * k;
    let base = base as usize;
    dst.par_chunks_mut(panel_len.max(1))
        .enumerate()
        .for_each(|(p, panel)| {
            let cols = (n - p * PANEL).min(PANEL);
            // SAFETY: the panel's columns of the view, which the caller
            // vouches for.
            let first = unsafe {
                (base as *const f32)
                    .offset((view.offset + (p * PANEL) as i64 * view.col_stride) as isize)
            };
            if view.col_stride == 1 {
                for (kk, row) in panel.chunks_exact_mut(PANEL).enumerate() {
                    // SAFETY: row kk's `cols` elements of the panel.
                    let src = unsafe { first.offset(kk as isize * view.row_stride as isize) };
                    row[..cols].copy_from_slice(unsafe { std::slice::from_raw_parts(src, cols) });
                }
                return;
            }
            #[cfg(target_arch = "x86_64")]
            if view.row_stride == 1 && crate::lanes::uses_avx512() {
                // SAFETY: as above, on AVX-512F.
                unsafe { pack_transposed(first, view.col_stride as isize, k, cols, panel) };
                return;
            }
            // Blocks of 16 rows, so that a column is read a cache line at
            // a time where it is contiguous.
            for k0 in (0..k).step_by(16) {
                for j in 0..cols {
                    let col = j as isize * view.col_stride as isize;
                    for kk in k0..(k0 + 16).min(k) {
                        // SAFETY: inside the view.
                        panel[kk * PANEL + j] =
                            unsafe { *first.offset(col + kk as isize * view.row_stride as isize) };
                    }
                }
            }
        });
}

/// One panel of a weight whose columns are contiguous (`B[kk][j]` at
/// `first + j·col_stride + kk`): blocks of 16 columns by 16 `kk` loaded as
/// 16 vectors (masked at the ends), transposed in registers, stored as
/// 16 rows of the panel.
///
/// # Safety
/// The CPU has AVX-512F; `first` addresses the panel's `cols` columns of
/// `k` elements; `panel` holds `k` rows of [`PANEL`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn pack_transposed(
    first: *const f32,
    col_stride: isize,
    k: usize,
    cols: usize,
    panel: &mut [f32],
) {
    use std::arch::x86_64::*;
    for j0 in (0..cols).step_by(16) {
        let rows = (cols - j0).min(16);
        for k0 in (0..k).step_by(16) {
            let kn = (k - k0).min(16);
            let mask = crate::avx512::first_lanes(kn);
            let mut r = [_mm512_setzero_ps(); 16];
            for (i, r) in r.iter_mut().enumerate().take(rows) {
                // SAFETY: the kn elements from k0 of column j0 + i.
                *r = unsafe {
                    _mm512_maskz_loadu_ps(
                        mask,
                        first.offset((j0 + i) as isize * col_stride).add(k0),
                    )
                };
            }
            crate::avx512::transpose16(&mut r);
            for (c, v) in r.iter().enumerate().take(kn) {
                // SAFETY: row k0 + c of the panel, its 16 columns from j0
                // (within the panel's 64, the lanes past `cols` being
                // zeros from the masked loads).
                unsafe { _mm512_storeu_ps(panel.as_mut_ptr().add((k0 + c) * PANEL + j0), *v) };
            }
        }
    }
}

/// `out = a @ B` for the packed `B`, `a` being `m × k` f32 at `a.0` with
/// row and column strides `a.1`, `a.2`, and `out` `m × n` with unit
/// column stride and row stride `out.1`. Panels and bands of rows are
/// shared out among rayon's threads.
///
/// # Safety
/// The pointers address every element of their matrices; `out` overlaps
/// neither operand; the CPU runs `crate::panel::product` (a packed
/// weight exists only then).
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn product(
    b: &Packed,
    a: (*const f32, isize, isize),
    out: (*mut f32, isize),
    m: usize,
) {
    use crate::panel::{Out, Panel, Rows};
    use rayon::prelude::*;
    let (k, n) = (b.view.k, b.view.n);
    let panels = n.div_ceil(PANEL);
    // Enough tasks for every thread to stay busy while one lags: bands of
    // rows when there are few panels.
    let wanted = 8 * rayon::current_num_threads();
    let bands = wanted.div_ceil(panels).clamp(1, m.div_ceil(48).max(1));
    let band = m.div_ceil(bands);
    let (a_ptr, out_ptr, packed) = (a.0 as usize, out.0 as usize, b.storage.as_ptr() as usize);
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

    /// How a `k × n` weight is stored.
    #[derive(Clone, Copy, Debug)]
    enum Layout {
        /// `[n, k]` row-major, as nn.Linear keeps it (`x @ wᵀ`).
        Transposed,
        /// `[k, n]` row-major (GPT-2's Conv1D).
        Plain,
        /// Every other element of every other row of a larger matrix, from
        /// an offset (neither stride 1).
        Strided,
    }

    fn weight(k: usize, n: usize, layout: Layout) -> (Buffer, WeightView) {
        let len = 4 * k * n + 8;
        let mut buffer = Buffer::zeroed(len * 4).unwrap();
        let values: &mut [f32] = unsafe {
            std::slice::from_raw_parts_mut(buffer.bytes_mut().as_mut_ptr() as *mut f32, len)
        };
        for (i, v) in values.iter_mut().enumerate() {
            *v = ((i * 37) % 101) as f32 / 50.0 - 1.0;
        }
        let (offset, row_stride, col_stride) = match layout {
            Layout::Transposed => (0, 1, k as i64),
            Layout::Plain => (0, n as i64, 1),
            Layout::Strided => (3, 4 * n as i64, 2),
        };
        (
            buffer,
            WeightView {
                offset,
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
        use Layout::*;
        let cases = [
            (2, 16, 70, Transposed),
            (7, 33, 64, Plain),
            (64, 100, 200, Transposed),
            (130, 20, 129, Plain),
            (5, 47, 83, Strided),
            (3, 1, 150, Transposed),
        ];
        for (m, k, n, layout) in cases {
            let (buffer, view) = weight(k, n, layout);
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
                        "{layout:?} {m}×{k}×{n} [{i}, {j}]: {got} vs {want}"
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
        // (The limit the environment may set would change what is kept.)
        set_pack_limit(1 << 30);
        let (mut buffer, view) = weight(32, 96, Layout::Transposed);
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
        let values = unsafe { std::slice::from_raw_parts(fresh.storage.as_ptr() as *const f32, 1) };
        assert_eq!(values[0], at(&buffer, view, 0, 0), "the new contents");
        let now = key(&buffer);
        assert!(cache().packed.contains_key(&now));
        drop(buffer);
        assert!(!cache().packed.contains_key(&now));
    }
}
