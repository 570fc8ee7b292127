//! The reference interpreter: runs a graph op by op on concrete tensors.
//!
//! It is the oracle every backend and every rewrite is tested against, so it
//! favours being obviously right over being fast: each op walks its output
//! in logical order, reads every operand element through its strides,
//! converts it to the computation dtype, and applies the element semantics
//! of [`elementwise`]. Two paths skip that per-element machinery where it
//! cannot change a bit, because programs evaluate their constants here
//! when they compile: an f32 op with a kiln-math algorithm on an f32
//! tensor (the algorithm on raw floats, 16 lanes at a time), and `cat`
//! between operands of one dtype (bytes copied). Views are executed as
//! views (they share storage).
//! Each result is laid out by PyTorch's rule for its op
//! ([`kiln_ir::layout::instruction_layouts`]) over the operands as they are
//! at run time, so the interpreter needs no layout pass and shares no code
//! with the passes it checks. Composite ops run through their expansions
//! (`kiln_ir::ops::expand`, where they are defined), which are checked
//! against PyTorch's values independently.

mod bags;
mod complex_parts;
pub mod elementwise;
pub(crate) mod indexing;
mod masked;
mod random_ops;
mod reduce;
mod scan;
mod search;
mod sort;
mod spatial;

use kiln_ir::graph::{Func, FuncBuilder, Operand};
use kiln_ir::infer::InferCtx;
use kiln_ir::layout::{LayoutArg, ResultLayout, instruction_layouts};
use kiln_ir::ops::expand::{Emitter, expand};
use kiln_ir::{DType, Error, ErrorKind, Module, Op, Result, TensorType};

use crate::backend::{bind_inputs, check_runnable};
use crate::convert::{Elem, convert, load, store};
use crate::tensor::Tensor;

use reduce::{arg_reduce, matmul, reduce};
pub(crate) use scan::log_add_exp;

/// Runs the entry function of `module` (`@main`, or the only one).
pub fn run(module: &Module, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
    run_func(module.entry()?, &module.ctx(), inputs)
}

/// Rounds an exact result as PyTorch's kernels do: to the opmath precision
/// of the result dtype, then (on store) to the result dtype.
pub(crate) fn round_result(v: Elem, dtype: DType) -> Elem {
    convert(convert(v, dtype.opmath()), dtype)
}

/// Runs a function on inputs (laid out as its parameters declare).
pub fn run_func(func: &Func, ctx: &InferCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
    let mut values: Vec<Option<Tensor>> = vec![None; func.values.len()];
    for (&p, input) in func.params.iter().zip(bind_inputs(func, inputs)?) {
        values[p.index()] = Some(input);
    }
    for inst in &func.insts {
        let located = |e: Error| match &inst.location {
            Some(l) => e.at(l.clone()),
            None => e,
        };
        let tensors: Vec<Option<&Tensor>> = inst
            .operands
            .iter()
            .map(|o| {
                o.value()
                    .map(|v| values[v.index()].as_ref().expect("operands run first"))
            })
            .collect();
        let types = func.result_types_of(inst);
        for ty in &types {
            check_runnable(ty.device).map_err(located)?;
        }
        let results = execute(func, ctx, inst, &tensors, &types).map_err(located)?;
        for (r, t) in inst.results.iter().zip(results) {
            values[r.index()] = Some(t);
        }
    }
    Ok(func
        .returns
        .iter()
        .map(|v| {
            values[v.index()]
                .clone()
                .expect("returned values are computed")
        })
        .collect())
}

/// One operand of an instruction at run time.
enum Arg<'a> {
    Tensor(&'a Tensor),
    Scalar(Elem),
    None,
}

/// The layouts of an instruction's results over its operands as they are.
fn layouts(
    inst: &kiln_ir::Inst,
    args: &[Arg],
    operand_dtypes: &[Option<DType>],
    types: &[TensorType],
) -> Result<Vec<ResultLayout>> {
    let operand_types: Vec<Option<TensorType>> = args
        .iter()
        .map(|a| match a {
            Arg::Tensor(t) => Some(t.tensor_type()),
            _ => None,
        })
        .collect();
    let layout_args: Vec<LayoutArg> = args
        .iter()
        .zip(&operand_types)
        .map(|(a, ty)| match (a, ty) {
            (Arg::Tensor(t), Some(ty)) => LayoutArg::Tensor(t.geometry(), ty),
            (Arg::Scalar(_), _) => LayoutArg::Scalar,
            _ => LayoutArg::None,
        })
        .collect();
    let unlaid: Vec<TensorType> = types
        .iter()
        .map(|t| t.clone().with_layout(kiln_ir::TypeLayout::Unspecified))
        .collect();
    instruction_layouts(&inst.op, &layout_args, operand_dtypes, &unlaid)
}

fn execute(
    func: &Func,
    ctx: &InferCtx,
    inst: &kiln_ir::Inst,
    tensors: &[Option<&Tensor>],
    types: &[TensorType],
) -> Result<Vec<Tensor>> {
    let args: Vec<Arg> = inst
        .operands
        .iter()
        .zip(tensors)
        .map(|(o, t)| match (o, t) {
            (Operand::Scalar(s), _) => Arg::Scalar(Elem::from_scalar(*s)),
            (Operand::None, _) => Arg::None,
            (_, Some(t)) => Arg::Tensor(t),
            _ => unreachable!("value operands have tensors"),
        })
        .collect();
    let inferred = func.infer_inst(inst, ctx)?;
    let layouts = layouts(inst, &args, &inferred.operand_dtypes, types)?;

    // Composite ops run through their expansion.
    if inst.op.is_composite() {
        if let Some(results) = run_composite(ctx, inst, &args, &inferred.operand_dtypes)? {
            return results
                .into_iter()
                .zip(types.iter().zip(&layouts))
                .map(|(r, (ty, layout))| finish(r, layout.strides(), ty.dtype))
                .collect();
        }
    }
    match &inst.op {
        Op::Topk {
            k, dim, largest, ..
        } => return sort::topk(tensor(&args[0]), *k, *dim, *largest, types, &layouts),
        Op::Sort {
            dim, descending, ..
        } => return sort::sort(tensor(&args[0]), *dim, *descending, types, &layouts),
        Op::Kthvalue { .. } | Op::Median { .. } | Op::Nanmedian { .. } | Op::Mode { .. } => {
            return sort::select(&inst.op, tensor(&args[0]), types, &layouts);
        }
        Op::Cumsum { .. }
        | Op::Cumprod { .. }
        | Op::Logcumsumexp { .. }
        | Op::Cummax { .. }
        | Op::Cummin { .. } => return scan::scan(&inst.op, tensor(&args[0]), types, &layouts),
        Op::EmbeddingBag {
            mode, padding_idx, ..
        } => {
            let bags = bags::Bags {
                mode: *mode,
                padding_idx: *padding_idx,
            };
            return bags::embedding_bag(
                &bags,
                tensor(&args[0]),
                tensor(&args[1]),
                tensor(&args[2]),
                args.get(3).and_then(optional),
                types,
                &layouts,
            );
        }
        Op::MaskedScatter => {
            return masked::masked_scatter(
                tensor(&args[0]),
                tensor(&args[1]),
                tensor(&args[2]),
                types,
                &layouts,
            );
        }
        Op::Searchsorted { right, side, .. } => {
            let (values, shape) = match &args[1] {
                Arg::Tensor(t) => (t.values(), t.shape().to_vec()),
                Arg::Scalar(s) => (vec![*s], Vec::new()),
                Arg::None => {
                    return Err(Error::new(ErrorKind::Arity, "searchsorted needs an input"));
                }
            };
            let right = *right || *side == Some(kiln_ir::SearchSide::Right);
            let common = inferred.operand_dtypes[0].unwrap_or(tensor(&args[0]).dtype());
            return search::searchsorted(
                tensor(&args[0]),
                (&values, &shape),
                args.get(2).and_then(optional),
                right,
                common,
                types,
                &layouts,
            );
        }
        _ => {}
    }
    // Convolution, pooling, resampling and sampling ops.
    let operands: Vec<Option<&Tensor>> = args
        .iter()
        .map(|a| match a {
            Arg::Tensor(t) => Some(*t),
            _ => None,
        })
        .collect();
    if let Some(results) = spatial::run_other(&inst.op, &operands, types, &layouts)? {
        return Ok(results);
    }
    if let Some(s) = kiln_ir::spatial::spatial(&inst.op) {
        return spatial::run(&inst.op, &s, &operands, types, &layouts);
    }
    let [out_ty] = types else {
        return Err(Error::new(
            ErrorKind::Backend,
            format!("{} has no reference implementation", inst.op.name()),
        ));
    };
    let strides = layouts[0].strides().to_vec();
    let scalars: Vec<Option<f64>> = args
        .iter()
        .map(|a| match a {
            Arg::Scalar(s) => Some(s.f64()),
            _ => None,
        })
        .collect();
    if let Some(t) = random_ops::run(&inst.op, &operands, &scalars, out_ty, &strides)? {
        return Ok(vec![t]);
    }
    if let Some(t) = complex_parts::run(&inst.op, &operands, out_ty, &layouts[0])? {
        return Ok(vec![t]);
    }
    let natural = inferred.natural_dtype;
    let out_ty = &out_ty.clone().with_dtype(natural);
    let result = match &inst.op {
        Op::Unary { .. } | Op::Binary { .. } | Op::Where | Op::Cast { .. } => pointwise(
            &inst.op,
            &args,
            &inferred.operand_dtypes,
            natural,
            out_ty,
            &strides,
        )?,
        Op::Reduce {
            op, dims, keepdim, ..
        } => {
            let x = tensor(&args[0]);
            let compute = inferred.operand_dtypes[0].unwrap_or(x.dtype());
            reduce(
                *op,
                x,
                compute,
                dims.as_deref(),
                *keepdim,
                natural,
                out_ty,
                &strides,
            )?
        }
        Op::ArgReduce { op, dim, keepdim } => {
            arg_reduce(*op, tensor(&args[0]), *dim, *keepdim, out_ty, &strides)?
        }
        Op::Matmul => matmul(tensor(&args[0]), tensor(&args[1]), out_ty, &strides)?,
        Op::Cat { dim } => cat(&args, *dim, out_ty, &strides)?,
        Op::IndexSelect { dim } => {
            let x = tensor(&args[0]);
            let d = if x.shape().len() == 0 {
                0
            } else {
                kiln_ir::view::wrap_dim(*dim, x.shape().len())?
            };
            gather(x, tensor(&args[1]), d, out_ty, &strides)?
        }
        Op::Embedding { .. } => embedding(tensor(&args[0]), tensor(&args[1]), out_ty, &strides)?,
        Op::Index => {
            let entries: Vec<Option<&Tensor>> = args[1..].iter().map(optional).collect();
            indexing::index(tensor(&args[0]), &entries, out_ty, &strides)?
        }
        Op::IndexPut { accumulate } => {
            let n = args.len();
            let entries: Vec<Option<&Tensor>> = args[1..n - 1].iter().map(optional).collect();
            let values = tensor(&args[n - 1]);
            indexing::index_put(
                tensor(&args[0]),
                &entries,
                values,
                *accumulate,
                out_ty,
                &strides,
            )?
        }
        Op::Gather { .. }
        | Op::Scatter { .. }
        | Op::ScatterAdd { .. }
        | Op::ScatterReduce { .. }
        | Op::IndexAdd { .. }
        | Op::IndexCopy { .. }
        | Op::IndexFill { .. }
        | Op::Take => {
            let tensors: Vec<&Tensor> = args
                .iter()
                .filter_map(|a| match a {
                    Arg::Tensor(t) => Some(*t),
                    _ => None,
                })
                .collect();
            let value = args.iter().find_map(|a| match a {
                Arg::Scalar(s) => Some(s.to_scalar()),
                _ => None,
            });
            indexing::run(&inst.op, &tensors, value, out_ty, &strides)?
                .ok_or_else(|| Error::new(ErrorKind::Backend, "not an indexing op"))?
        }
        Op::Full { value, .. } => fill(out_ty, &strides, |_| {
            convert(Elem::from_scalar(*value), out_ty.dtype)
        })?,
        Op::TrilIndices { .. } | Op::TriuIndices { .. } => {
            let (rows, cols) = kiln_ir::infer::tri_positions(&inst.op)?;
            let n = rows.len();
            fill(out_ty, &strides, |i| {
                let i = i as usize;
                Elem::I(i128::from(if i < n { rows[i] } else { cols[i - n] }))
            })?
        }
        Op::Arange { start, step, .. } => {
            let (s, st) = (Elem::from_scalar(*start), Elem::from_scalar(*step));
            // An integer result computes in int64 from start and step
            // converted first (truncated, as PyTorch's `Scalar::to`), so
            // `arange(5, 0, -0.5, dtype=int32)` is ten 5s; its length came
            // from the values as given.
            let integral = !out_ty.dtype.is_floating_point() && !out_ty.dtype.is_complex();
            let truncated = |e: Elem| match e {
                Elem::I(i) => i,
                Elem::B(b) => i128::from(b),
                other => other.f64().trunc() as i128,
            };
            fill(out_ty, &strides, |i| {
                if integral {
                    Elem::I(truncated(s) + i as i128 * truncated(st))
                } else {
                    Elem::F(s.f64() + i as f64 * st.f64())
                }
            })?
        }
        // A composite on dtypes its expansion does not compute: an empty
        // result needs no arithmetic, any other is PyTorch's error, which
        // inference already gave.
        op if op.is_composite() && out_ty.numel() == 0 => {
            Tensor::zeros_strided(&out_ty.shape, Some(&strides), natural, out_ty.device)?
        }
        op if op.is_view() || op.is(kiln_ir::Traits::COPY) => {
            let x = tensor(&args[0]);
            match &layouts[0] {
                ResultLayout::View(g) => x.view(g.clone())?.with_device(out_ty.device),
                ResultLayout::Fresh(s) => {
                    // A copy in a new layout, converting dtype for `to`.
                    // Logical order is preserved by every copying op (reshape too).
                    let mut out =
                        Tensor::zeros_strided(&out_ty.shape, Some(s), natural, out_ty.device)?;
                    write_values(
                        &mut out,
                        x.values().into_iter().map(|v| convert(v, natural)),
                    )?;
                    out
                }
            }
        }
        other => {
            return Err(Error::new(
                ErrorKind::Backend,
                format!("{} cannot run on {}", other.name(), natural),
            ));
        }
    };
    let dtype = types[0].dtype;
    Ok(vec![finish(result, &strides, dtype)?])
}

/// A `Tensor?` operand: the tensor, or `None` for `none`.
fn optional<'a>(arg: &Arg<'a>) -> Option<&'a Tensor> {
    match arg {
        Arg::Tensor(t) => Some(*t),
        Arg::Scalar(_) | Arg::None => None,
    }
}

fn tensor<'a>(arg: &Arg<'a>) -> &'a Tensor {
    match arg {
        Arg::Tensor(t) => t,
        Arg::Scalar(_) | Arg::None => unreachable!("inference guarantees a tensor operand here"),
    }
}

/// Zero-filled results of these types, laid out as the layout pass says
/// (the multi-result ops write into them).
fn fresh_results(types: &[TensorType], layouts: &[ResultLayout]) -> Result<Vec<Tensor>> {
    types
        .iter()
        .zip(layouts)
        .map(|(ty, l)| Tensor::zeros_strided(&ty.shape, Some(l.strides()), ty.dtype, ty.device))
        .collect()
}

/// Casts to the result dtype (out_dtype) and lays the result out as the
/// layout pass says, when it is not already.
fn finish(result: Tensor, strides: &[i64], dtype: DType) -> Result<Tensor> {
    if result.dtype() == dtype && result.strides() == strides {
        return Ok(result);
    }
    let mut out = Tensor::zeros_strided(result.shape(), Some(strides), dtype, result.device())?;
    write_values(
        &mut out,
        result.values().into_iter().map(|v| convert(v, dtype)),
    )?;
    Ok(out)
}

/// Writes values in logical order into a fresh tensor.
fn write_values(out: &mut Tensor, values: impl Iterator<Item = Elem>) -> Result<()> {
    let shape = out.shape().to_vec();
    for (index, v) in crate::tensor::Indices::new(&shape).zip(values) {
        out.set(&index, v)?;
    }
    Ok(())
}

/// An operand's values broadcast to `shape`, in logical order.
fn broadcast_elems(t: &Tensor, shape: &[i64]) -> Result<Vec<Elem>> {
    let g = t.geometry().expand(shape)?;
    Ok(t.view(g)?.values())
}

fn fill(out_ty: &TensorType, strides: &[i64], f: impl Fn(i64) -> Elem) -> Result<Tensor> {
    let mut out = Tensor::zeros_strided(&out_ty.shape, Some(strides), out_ty.dtype, out_ty.device)?;
    let n = out.numel();
    write_values(&mut out, (0..n).map(f))?;
    Ok(out)
}

/// Byte strides of a tensor broadcast to `shape` (0 along broadcast dims).
fn broadcast_byte_strides(t: &Tensor, shape: &[i64]) -> Vec<i64> {
    let offset = shape.len() - t.shape().len();
    let size = t.dtype().itemsize() as i64;
    let mut out = vec![0; shape.len()];
    for (i, (&s, &st)) in t.shape().iter().zip(t.strides()).enumerate() {
        out[offset + i] = if s == 1 { 0 } else { st * size };
    }
    out
}

/// Walks a shape in logical order, keeping one byte offset per strided
/// operand, and calls `f` with the offsets at each element.
fn walk(
    shape: &[i64],
    strides: &[Vec<i64>],
    starts: &[i64],
    mut f: impl FnMut(&[i64]) -> Result<()>,
) -> Result<()> {
    let n: i64 = shape.iter().product();
    if n == 0 {
        return Ok(());
    }
    let rank = shape.len();
    let mut index = vec![0i64; rank];
    let mut offsets = starts.to_vec();
    for _ in 0..n {
        f(&offsets)?;
        for d in (0..rank).rev() {
            index[d] += 1;
            for (o, s) in offsets.iter_mut().zip(strides) {
                *o += s[d];
            }
            if index[d] < shape[d] {
                break;
            }
            for (o, s) in offsets.iter_mut().zip(strides) {
                *o -= s[d] * shape[d];
            }
            index[d] = 0;
        }
    }
    Ok(())
}

/// The kiln-math algorithm of a unary op on an f32 tensor computed in f32,
/// where there is one. [`pointwise`] then evaluates it on raw floats: the
/// generic path's arithmetic exactly ([`elementwise::unary`] evaluates the
/// same algorithm on the same f32 value, and an f32 result rounds to
/// itself; NaN payloads aside), without an [`Elem`] and its conversions
/// per element, which cost
/// ten times the arithmetic. Why it matters: the constants a program
/// computes when it compiles (a Llama block's rotary sin and cos tables)
/// are on its compile's critical path.
fn f32_algorithm_on_f32(
    op: &Op,
    args: &[Arg],
    operand_dtypes: &[Option<DType>],
    natural: DType,
) -> Option<kiln_math::Function> {
    let Op::Unary { op: u } = op else {
        return None;
    };
    let [Arg::Tensor(x)] = args else {
        return None;
    };
    let compute = operand_dtypes.first().copied().flatten().unwrap_or(natural);
    (x.dtype() == DType::F32 && compute == DType::F32 && natural == DType::F32)
        .then(|| elementwise::f32_algorithm(*u))
        .flatten()
}

/// Each value replaced by `f` of it: 16 at a time where the CPU has
/// AVX-512F, 8 where it has AVX2 and FMA (the scalar algorithm's bits:
/// `avx512`'s and `avx2`'s tests hold every function to them), one at a
/// time elsewhere.
fn evaluate_all(f: kiln_math::Function, values: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::lanes::uses_avx512() {
        // SAFETY: the CPU has AVX-512F.
        unsafe { crate::avx512::evaluate_all(f, values) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if crate::lanes::Avx2::available() {
        // SAFETY: the CPU has AVX2 and FMA.
        unsafe { crate::avx2::evaluate_all(f, values) };
        return;
    }
    for v in values {
        *v = kiln_math::eval(f, *v);
    }
}

fn pointwise(
    op: &Op,
    args: &[Arg],
    operand_dtypes: &[Option<DType>],
    natural: DType,
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let shape = &out_ty.shape;
    let mut out = Tensor::zeros_strided(shape, Some(strides), natural, out_ty.device)?;
    let out_size = natural.itemsize() as i64;
    if let Some(f) = f32_algorithm_on_f32(op, args, operand_dtypes, natural) {
        let Arg::Tensor(x) = args[0] else {
            unreachable!("checked by f32_algorithm_on_f32")
        };
        let mut values = Vec::with_capacity(out.numel() as usize);
        let from = broadcast_byte_strides(x, shape);
        let start = x.offset() * 4;
        let bytes = x.storage().bytes();
        walk(shape, &[from], &[start], |o| {
            let o = o[0] as usize;
            values.push(f32::from_le_bytes([
                bytes[o],
                bytes[o + 1],
                bytes[o + 2],
                bytes[o + 3],
            ]));
            Ok(())
        })?;
        evaluate_all(f, &mut values);
        let to = strides.iter().map(|s| s * 4).collect();
        let out_bytes = out.bytes_mut()?;
        let mut next = values.into_iter();
        walk(shape, &[to], &[0], |o| {
            let o = o[0] as usize;
            let v = next.next().expect("one value per element");
            out_bytes[o..o + 4].copy_from_slice(&v.to_le_bytes());
            Ok(())
        })?;
        return Ok(out);
    }
    let tensors: Vec<&Tensor> = args
        .iter()
        .filter_map(|a| match a {
            Arg::Tensor(t) => Some(*t),
            Arg::Scalar(_) | Arg::None => None,
        })
        .collect();
    let mut all_strides: Vec<Vec<i64>> = tensors
        .iter()
        .map(|t| broadcast_byte_strides(t, shape))
        .collect();
    all_strides.push(strides.iter().map(|s| s * out_size).collect());
    let mut starts: Vec<i64> = tensors
        .iter()
        .map(|t| t.offset() * t.dtype().itemsize() as i64)
        .collect();
    starts.push(0);
    // Scalars are converted once, to the precision their op takes them in.
    let scalars: Vec<Option<Elem>> = args
        .iter()
        .zip(operand_dtypes.iter().chain(std::iter::repeat(&None)))
        .map(|(a, d)| match (a, d) {
            (Arg::Scalar(v), Some(d)) => Some(convert(*v, op.scalar_dtype(*d))),
            (Arg::Scalar(v), None) => Some(*v),
            _ => None,
        })
        .collect();
    let storages: Vec<&[u8]> = tensors.iter().map(|t| t.storage().bytes()).collect();
    let out_bytes = out.bytes_mut()?;
    let mut operands: Vec<Elem> = Vec::with_capacity(args.len());
    walk(shape, &all_strides, &starts, |offsets| {
        operands.clear();
        let mut next_tensor = 0;
        for (k, a) in args.iter().enumerate() {
            let v = match a {
                Arg::Scalar(_) | Arg::None => scalars[k].unwrap_or(Elem::B(false)),
                Arg::Tensor(t) => {
                    let o = offsets[next_tensor] as usize;
                    next_tensor += 1;
                    let raw = load(
                        t.dtype(),
                        &storages[next_tensor - 1][o..o + t.dtype().itemsize()],
                    );
                    match operand_dtypes.get(k).copied().flatten() {
                        Some(d) => convert(raw, d),
                        None => raw,
                    }
                }
            };
            operands.push(v);
        }
        let v = match op {
            Op::Unary { op: u } => {
                elementwise::unary(*u, operands[0], operand_dtypes[0].unwrap_or(natural))?
            }
            Op::Binary {
                op: kiln_ir::BinaryOp::Pow,
            } if matches!(args[1], Arg::Scalar(_)) => {
                let Arg::Scalar(raw) = args[1] else {
                    unreachable!("matched above")
                };
                elementwise::pow_scalar(
                    operands[0],
                    operands[1],
                    raw.to_scalar(),
                    operand_dtypes[0].unwrap_or(natural),
                )?
            }
            Op::Binary { op: b } => elementwise::binary(
                *b,
                operands[0],
                operands[1],
                operand_dtypes[0].unwrap_or(natural),
            )?,
            Op::Where => {
                if operands[0].truthy() {
                    operands[1]
                } else {
                    operands[2]
                }
            }
            Op::Cast { .. } => operands[0],
            other => unreachable!("{} is not pointwise", other.name()),
        };
        let o = *offsets.last().expect("the output offset") as usize;
        store(
            natural,
            round_result(v, natural),
            &mut out_bytes[o..o + natural.itemsize()],
        );
        Ok(())
    })?;
    Ok(out)
}

fn cat(args: &[Arg], dim: i64, out_ty: &TensorType, strides: &[i64]) -> Result<Tensor> {
    let mut out = Tensor::zeros_strided(&out_ty.shape, Some(strides), out_ty.dtype, out_ty.device)?;
    if out_ty.rank() == 0 || out.numel() == 0 {
        return Ok(out);
    }
    let d = kiln_ir::view::wrap_dim(dim, out_ty.rank())?;
    let to_size = out_ty.dtype.itemsize();
    let mut start = 0;
    for a in args {
        let t = tensor(a);
        if t.shape() == [0] && out_ty.rank() != 1 {
            continue;
        }
        // Each operand's elements walked with its slice of the result.
        let shape = t.shape();
        let from_size = t.dtype().itemsize();
        let from: Vec<i64> = t.strides().iter().map(|s| s * from_size as i64).collect();
        let to: Vec<i64> = strides.iter().map(|s| s * to_size as i64).collect();
        let bytes = t.storage().bytes();
        let out_bytes = out.bytes_mut()?;
        let starts = [t.offset() * from_size as i64, start * to[d]];
        walk(shape, &[from, to], &starts, |o| {
            let (f, o) = (o[0] as usize, o[1] as usize);
            let (source, target) = (&bytes[f..f + from_size], &mut out_bytes[o..o + to_size]);
            if t.dtype() == out_ty.dtype {
                target.copy_from_slice(source);
            } else {
                store(
                    out_ty.dtype,
                    convert(load(t.dtype(), source), out_ty.dtype),
                    target,
                );
            }
            Ok(())
        })?;
        start += shape[d];
    }
    Ok(out)
}

/// The values of an index tensor, each checked to lie in `0..size`
/// (PyTorch's IndexError otherwise; negative indices are out of range).
fn positions(index: &Tensor, size: i64) -> Result<Vec<i64>> {
    let positions: Vec<i64> = index
        .values()
        .into_iter()
        .map(|v| match v {
            Elem::I(i) => Ok(i as i64),
            other => Err(Error::new(
                ErrorKind::DType,
                format!("an index must be an integer, not {other:?}"),
            )),
        })
        .collect::<Result<_>>()?;
    if let Some(&bad) = positions.iter().find(|&&p| p < 0 || p >= size) {
        return Err(Error::new(
            ErrorKind::Runtime,
            format!("index out of range in self (index {bad} into a dim of size {size})"),
        ));
    }
    Ok(positions)
}

/// The rows of `weight` at `indices`, in the indices' shape.
fn embedding(
    weight: &Tensor,
    indices: &Tensor,
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let mut out = Tensor::zeros_strided(&out_ty.shape, Some(strides), out_ty.dtype, out_ty.device)?;
    let rows = positions(indices, weight.shape()[0])?;
    let width = weight.shape()[1].max(1) as usize;
    // Whole rows copied where the weight's rows and the result are dense
    // (the usual case: a lookup moves rows, and element by element it is
    // some 30 times slower); the same bytes the loop below would store.
    let dense = kiln_ir::layout::contiguous_strides(&out_ty.shape) == strides;
    if dense && weight.dtype() == out_ty.dtype && weight.strides().get(1) == Some(&1) {
        let item = out_ty.dtype.itemsize();
        let row_bytes = weight.shape()[1] as usize * item;
        let row_stride = weight.strides()[0];
        let src = weight.storage().bytes();
        let dst = out.bytes_mut()?;
        for (n, &r) in rows.iter().enumerate() {
            let start = (weight.offset() + r * row_stride) as usize * item;
            dst[n * row_bytes..(n + 1) * row_bytes].copy_from_slice(&src[start..start + row_bytes]);
        }
        return Ok(out);
    }
    for (n, target) in crate::tensor::Indices::new(&out_ty.shape).enumerate() {
        let column = target[target.len() - 1];
        out.set(&target, weight.get(&[rows[n / width], column]))?;
    }
    Ok(out)
}

/// The entries of `x` at `index` along dim `d`.
fn gather(
    x: &Tensor,
    index: &Tensor,
    d: usize,
    out_ty: &TensorType,
    strides: &[i64],
) -> Result<Tensor> {
    let mut out = Tensor::zeros_strided(&out_ty.shape, Some(strides), out_ty.dtype, out_ty.device)?;
    let size = if x.shape().len() == 0 {
        1
    } else {
        x.shape()[d]
    };
    let positions = positions(index, size)?;
    for target in crate::tensor::Indices::new(&out_ty.shape) {
        let mut source = target.clone();
        if x.shape().len() > 0 {
            source[d] = positions[target[d] as usize];
        }
        out.set(&target, x.get(&source))?;
    }
    Ok(out)
}

/// Runs a composite op through its expansion; `None` when it has none
/// for these dtypes.
fn run_composite(
    ctx: &InferCtx,
    inst: &kiln_ir::Inst,
    args: &[Arg],
    operand_dtypes: &[Option<DType>],
) -> Result<Option<Vec<Tensor>>> {
    let mut b = FuncBuilder::new("composite", *ctx);
    let mut operands = Vec::new();
    let mut inputs = Vec::new();
    for (k, a) in args.iter().enumerate() {
        match a {
            Arg::Tensor(t) => {
                let mut v = b.param(None, t.tensor_type())?;
                // Promotion first, as the promote pass does before decomposing.
                if let Some(d) = operand_dtypes
                    .get(k)
                    .copied()
                    .flatten()
                    .filter(|d| *d != t.dtype())
                {
                    v = b.push(Op::Cast { dtype: d }, vec![Operand::Value(v)], None)?;
                }
                operands.push(Operand::Value(v));
                inputs.push((*t).clone());
            }
            Arg::Scalar(_) | Arg::None => operands.push(inst.operands[k]),
        }
    }
    let Some(vs) = expand(&mut Emitter::new(&mut b), &inst.op, &operands)? else {
        return Ok(None);
    };
    let sub = b.finish(vs, None)?;
    run_func(&sub, ctx, &inputs).map(Some)
}
