//! Convolution tails: the pointwise kernel after a convolution in a CNN
//! (inference batch norm's per-channel scale and shift, a residual add,
//! ReLU) put in a form a native convolution applies to its output tile
//! while the values are in registers (oneDNN's post-ops), instead of a
//! pass over memory after it (ResNet-18 at batch 8: those kernels were 5
//! of 114 ms).
//!
//! For a host step of one convolution whose result `y` (buffer `Y`, f32)
//! no other step reads, the first later kernel `K` that reads `Y` is its
//! tail when:
//! - `K` is pointwise over `y`'s shape, reads `Y` at `y`'s own geometry
//!   (so its index is `y`'s index), and stores one value;
//! - once the parts of `K` that are invariant along every dim but the
//!   channel dim 1 are computed per channel (batch norm's
//!   `w · rsqrt(var + eps)` and `b − mean · that`: loads of per-channel
//!   views, constants, and ops on them), it computes
//!   `relu?((y · s + t) + r)` in f32, each part optional, the operands of
//!   each op in either order, with `s` and `t` per channel and `r` a load
//!   of another view of `y`'s shape, each intermediate used once;
//! - the steps between the convolution and `K` do not read `Y`.
//!
//! The pass then computes `s` and `t`, where they are more than loads,
//! once per channel in a new kernel (the same nodes, so the same bits),
//! rewrites `K` to load them, moves the steps between the two (each
//! writes only its own fresh results, which the convolution does not
//! read) and the new kernel before the convolution, places `K` right after
//! it, and records the [`Tail`] on the convolution's step. `K` stays: a
//! backend that does not apply the tail runs it. A tail's buffers are
//! live from the convolution's step on ([`super::slots`]), since a native
//! step writes the tail's result while it still reads its inputs.

use kiln_ir::DType;
use kiln_ir::view::Geometry;

use super::{
    Access, Buffer, BufferId, BufferRole, Expr, Kernel, KernelPlan, NodeId, Step, Store, Tail,
    TensorView,
};
use kiln_ir::{BinaryOp, UnaryOp};

/// The channel dim of a convolution's result.
const CHANNELS: usize = 1;

/// Finds every convolution's tail in the plan (see the module doc).
pub fn run(plan: &mut KernelPlan) {
    // (After a tail is found, the steps moved before its convolution are
    // looked at too: a convolution among them may have one.)
    let mut i = 0;
    while i < plan.steps.len() {
        if tail_at(plan, i).is_none() {
            i += 1;
        }
    }
}

/// Makes the kernel after convolution step `i` its tail where it is one
/// (moving the steps between before step `i`); `None` where it is not.
fn tail_at(plan: &mut KernelPlan, i: usize) -> Option<()> {
    let y = convolution(&plan.steps[i])?.clone();
    if y.dtype != DType::F32 || plan.outputs.iter().any(|v| v.buffer == y.buffer) {
        return None;
    }
    let readers: Vec<usize> = (i + 1..plan.steps.len())
        .filter(|&j| plan.steps[j].buffers().contains(&y.buffer))
        .collect();
    let [j] = readers[..] else {
        return None;
    };
    let Step::Kernel(k) = &plan.steps[j] else {
        return None;
    };
    let mut k = k.clone();
    let y_access = tail_shape(&k, &y)?;
    let channels = y.geometry.shape[CHANNELS];
    let invariant = invariant_nodes(&k, y_access);
    // The per-channel values the element nodes read, computed per channel.
    let frontier: Vec<NodeId> = (0..k.nodes.len())
        .map(|n| NodeId(n as u32))
        .filter(|&n| {
            invariant[n.index()]
                && !matches!(k.node(n).expr, Expr::Load { .. } | Expr::Const(_))
                && k.nodes
                    .iter()
                    .enumerate()
                    .any(|(m, node)| !invariant[m] && node.operands().contains(&n))
        })
        .collect();
    let chain = chain(&k, y_access, &invariant, &frontier)?;
    // The tail must not write what the convolution reads or writes, nor
    // read what it writes; the steps moved before it must not write what
    // it reads or writes; a residual in the result's buffer is the result.
    let Step::Interpret {
        inputs, outputs, ..
    } = &plan.steps[i]
    else {
        return None;
    };
    let conv_buffers: Vec<BufferId> = inputs.iter().chain(outputs).map(|v| v.buffer).collect();
    let buffer_of = |a: usize| k.args[k.accesses[a].arg];
    let [store] = &k.stores[..] else {
        return None;
    };
    let out = buffer_of(store.access);
    let reads = [chain.scale, chain.shift, chain.residual]
        .into_iter()
        .flatten()
        .filter(|&a| a != usize::MAX);
    let moved_writes: Vec<BufferId> = plan.steps[i + 1..j]
        .iter()
        .flat_map(Step::written)
        .collect();
    let in_place_elsewhere = chain.residual.is_some_and(|r| {
        let (ra, sa) = (&k.accesses[r], &k.accesses[store.access]);
        buffer_of(r) == out && (ra.strides != sa.strides || ra.offset != sa.offset)
    });
    if conv_buffers.contains(&out)
        || reads
            .map(buffer_of)
            .any(|b| outputs.iter().any(|v| v.buffer == b))
        || moved_writes.iter().any(|b| conv_buffers.contains(b))
        || in_place_elsewhere
    {
        return None;
    }
    let mut hoisted = None;
    let mut new_buffers = Vec::new();
    if !frontier.is_empty() {
        let first = plan.buffers.len();
        let (per_channel, buffers) = channel_kernel(&k, &frontier, channels, first);
        for (index, &n) in frontier.iter().enumerate() {
            let buffer = BufferId((first + index) as u32);
            let dtype = k.node(n).dtype;
            let mut strides = vec![0; k.rank()];
            strides[CHANNELS] = 1;
            k.accesses.push(Access {
                arg: k.args.len(),
                dtype,
                offset: 0,
                strides,
            });
            k.args.push(buffer);
            k.nodes[n.index()].expr = Expr::Load {
                access: k.accesses.len() - 1,
            };
            k.nodes[n.index()].compute = dtype;
        }
        k.prune();
        hoisted = Some(per_channel);
        new_buffers = buffers;
    }
    // The chain again, by the pruned kernel's numbers (it holds by
    // construction: the hoisted values are per-channel loads now, and the
    // kernel kept its shape), and the views, over y's shape, it reads.
    let y_access = tail_shape(&k, &y)?;
    let invariant = invariant_nodes(&k, y_access);
    let chain_after = self::chain(&k, y_access, &invariant, &[])?;
    debug_assert_eq!(
        (chain.relu, chain.scale.is_some(), chain.shift.is_some()),
        (
            chain_after.relu,
            chain_after.scale.is_some(),
            chain_after.shift.is_some()
        )
    );
    // (Strides along size-1 dims are y's, so that views laid out as y
    // compare equal.)
    let view = |a: usize| {
        let access = &k.accesses[a];
        let strides = (access.strides.iter().zip(&y.geometry.strides))
            .zip(&y.geometry.shape)
            .map(|((&s, &ys), &n)| if n == 1 { ys } else { s })
            .collect();
        TensorView {
            buffer: k.args[access.arg],
            dtype: access.dtype,
            geometry: Geometry {
                shape: y.geometry.shape.clone(),
                strides,
                offset: access.offset,
            },
        }
    };
    let [store] = &k.stores[..] else {
        return None;
    };
    let tail = Tail {
        scale: chain_after.scale.map(view),
        shift: chain_after.shift.map(view),
        residual: chain_after.residual.map(view),
        relu: chain_after.relu,
        out: view(store.access),
    };
    // The new order: the steps between, the per-channel kernel, the
    // convolution with its tail, then K.
    plan.buffers.extend(new_buffers);
    let between: Vec<Step> = plan.steps.drain(i + 1..j).collect();
    let mut conv = plan.steps.remove(i);
    plan.steps.remove(i);
    if let Step::Interpret { tail: slot, .. } = &mut conv {
        *slot = Some(tail);
    }
    let mut order = between;
    order.extend(hoisted.map(Step::Kernel));
    order.push(conv);
    order.push(Step::Kernel(k));
    plan.steps.splice(i..i, order);
    Some(())
}

/// The result of a host step of one convolution (of any rank, whose dim 1
/// is the output channels) without a tail yet.
fn convolution(step: &Step) -> Option<&TensorView> {
    if let Step::Interpret { tail: Some(_), .. } = step {
        return None;
    }
    let (_, inst, _, outputs) = step.lone_inst()?;
    match kiln_ir::spatial::spatial(&inst.op)? {
        kiln_ir::spatial::Spatial::Conv(_) | kiln_ir::spatial::Spatial::ConvCall(_) => {}
        _ => return None,
    }
    match outputs {
        [y] if y.geometry.shape.len() > CHANNELS => Some(y),
        _ => None,
    }
}

/// The access through which pointwise kernel `k`, over `y`'s shape with
/// one store, reads `y` at `y`'s own index (its only access of `y`'s
/// buffer).
fn tail_shape(k: &Kernel, y: &TensorView) -> Option<usize> {
    if k.outer_rank != k.rank() || k.space != y.geometry.shape || k.stores.len() != 1 {
        return None;
    }
    let mut reads = k
        .accesses
        .iter()
        .enumerate()
        .filter(|(_, a)| k.args[a.arg] == y.buffer);
    let (index, a) = reads.next()?;
    let same_strides = (a.strides.iter().zip(&y.geometry.strides))
        .zip(&y.geometry.shape)
        .all(|((s, ys), &n)| n == 1 || s == ys);
    let same = a.dtype == y.dtype
        && same_strides
        && a.offset == y.geometry.offset
        && !k.stores.iter().any(|s| s.access == index);
    (same && reads.next().is_none()).then_some(index)
}

/// Per node: whether its value is the same along every dim but the
/// channels (loads and iotas that step only along them, constants, and
/// ops of such; never a load of `y`, through access `y`, even where all
/// its other dims have size 1).
fn invariant_nodes(k: &Kernel, y: usize) -> Vec<bool> {
    let along_channels = |strides: &[i64]| {
        strides
            .iter()
            .enumerate()
            .all(|(d, &s)| d == CHANNELS || s == 0 || k.space[d] == 1)
    };
    let mut invariant: Vec<bool> = Vec::with_capacity(k.nodes.len());
    for node in &k.nodes {
        let is = match &node.expr {
            Expr::Load { access } => *access != y && along_channels(&k.accesses[*access].strides),
            Expr::Const(_) => true,
            Expr::Iota { strides, .. } => along_channels(strides),
            Expr::Reduce { .. } | Expr::ArgReduce { .. } => false,
            _ => node.operands().iter().all(|o| invariant[o.index()]),
        };
        invariant.push(is);
    }
    invariant
}

/// `relu?((y · s + t) + r)`'s parts: accesses of the per-channel loads
/// and of the residual (`frontier` nodes count as per-channel values).
struct Chain {
    scale: Option<usize>,
    shift: Option<usize>,
    residual: Option<usize>,
    relu: bool,
}

/// Matches the store's value to `relu?((y · s + t) + r)`, from the outside
/// in (see the module doc).
fn chain(k: &Kernel, y: usize, invariant: &[bool], frontier: &[NodeId]) -> Option<Chain> {
    let f32_node = |n: NodeId| {
        let node = k.node(n);
        node.dtype == DType::F32 && node.compute == DType::F32
    };
    // A per-channel operand: its access, or usize::MAX for a frontier node
    // (loaded once hoisted).
    let per_channel = |n: NodeId| -> Option<usize> {
        if !invariant[n.index()] || !f32_node(n) {
            return None;
        }
        match k.node(n).expr {
            Expr::Load { access } if k.accesses[access].dtype == DType::F32 => Some(access),
            _ if frontier.contains(&n) => Some(usize::MAX),
            _ => None,
        }
    };
    let users = |n: NodeId| {
        k.nodes.iter().filter(|m| m.operands().contains(&n)).count()
            + k.stores.iter().filter(|s| s.node == n).count()
    };
    let [Store { node, access }] = k.stores[..] else {
        return None;
    };
    if k.accesses[access].dtype != DType::F32 {
        return None;
    }
    let mut chain = Chain {
        scale: None,
        shift: None,
        residual: None,
        relu: false,
    };
    // The stages from the outside in: relu, the residual, the shift, the
    // scale; each at most once, in that order.
    let mut stage = 0;
    let mut n = node;
    loop {
        if !f32_node(n) || users(n) != 1 {
            return None;
        }
        let expr = &k.node(n).expr;
        match *expr {
            Expr::Load { access } if access == y => return Some(chain),
            Expr::Unary {
                op: UnaryOp::Relu,
                x,
            } if stage < 1 => {
                chain.relu = true;
                stage = 1;
                n = x;
            }
            Expr::Binary {
                op: BinaryOp::Add,
                a,
                b,
            } if stage < 3 => {
                let (pa, pb) = (per_channel(a), per_channel(b));
                let residual = |m: NodeId| match k.node(m).expr {
                    Expr::Load { access }
                        if access != y
                            && !invariant[m.index()]
                            && k.accesses[access].dtype == DType::F32
                            && f32_node(m)
                            && users(m) == 1 =>
                    {
                        Some(access)
                    }
                    _ => None,
                };
                if let Some(s) = pb.or(pa) {
                    // A per-channel addend: the shift.
                    chain.shift = Some(s);
                    n = if pb.is_some() { a } else { b };
                    stage = 3;
                } else if stage < 2
                    && let Some(r) = residual(b).or_else(|| residual(a))
                {
                    chain.residual = Some(r);
                    n = if residual(b).is_some() { a } else { b };
                    stage = 2;
                } else {
                    return None;
                }
            }
            Expr::Binary {
                op: BinaryOp::Mul,
                a,
                b,
            } if stage < 4 => {
                let (pa, pb) = (per_channel(a), per_channel(b));
                chain.scale = Some(pb.or(pa)?);
                n = if pb.is_some() { a } else { b };
                stage = 4;
            }
            _ => return None,
        }
    }
}

/// A kernel over the channels computing `frontier`'s nodes (the nodes
/// they need copied, each load stepping along the channels only), each
/// into a new temp buffer of one value per channel (numbered from
/// `first`, for the caller to add to the plan).
fn channel_kernel(
    k: &Kernel,
    frontier: &[NodeId],
    channels: i64,
    first: usize,
) -> (Kernel, Vec<Buffer>) {
    let mut c = Kernel {
        name: format!("{}_channels", k.name),
        space: vec![channels],
        outer_rank: 1,
        args: k.args.clone(),
        accesses: k
            .accesses
            .iter()
            .map(|a| Access {
                arg: a.arg,
                dtype: a.dtype,
                offset: a.offset,
                strides: vec![a.strides.get(CHANNELS).copied().unwrap_or(0)],
            })
            .collect(),
        nodes: k
            .nodes
            .iter()
            .map(|n| {
                let mut n = n.clone();
                if let Expr::Iota { strides, .. } = &mut n.expr {
                    *strides = vec![strides[CHANNELS]];
                }
                n
            })
            .collect(),
        stores: Vec::new(),
    };
    let mut buffers = Vec::new();
    for (index, &n) in frontier.iter().enumerate() {
        let dtype = k.node(n).dtype;
        buffers.push(Buffer {
            role: BufferRole::Temp { slot: 0 },
            bytes: channels as usize * dtype.itemsize(),
            dtype,
        });
        c.args.push(BufferId((first + index) as u32));
        c.accesses.push(Access {
            arg: c.args.len() - 1,
            dtype,
            offset: 0,
            strides: vec![1],
        });
        c.stores.push(Store {
            node: n,
            access: c.accesses.len() - 1,
        });
    }
    // (Only invariant nodes feed the frontier: the copies of the others
    // and their accesses go.)
    c.prune();
    (c, buffers)
}
