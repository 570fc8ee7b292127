//! Temp memory: buffers whose lives do not overlap share a slot.

use super::{Buffer, BufferId, BufferRole, KernelPlan, Step};

/// Gives every temp buffer of the plan a slot.
pub fn run(plan: &mut KernelPlan) {
    plan.slots = assign_slots(&mut plan.buffers, &plan.steps);
}

/// Gives temps memory slots by liveness: a temp's slot is free again after
/// the last step that reads it.
fn assign_slots(buffers: &mut [Buffer], steps: &[Step]) -> Vec<usize> {
    let mut first = vec![usize::MAX; buffers.len()];
    let mut last = vec![0usize; buffers.len()];
    let mut touch = |b: BufferId, step: usize| {
        first[b.index()] = first[b.index()].min(step);
        last[b.index()] = last[b.index()].max(step);
    };
    // (A tail's buffers are live from its convolution's step, where a
    // native step may write its result while reading the inputs.)
    for (i, step) in steps.iter().enumerate() {
        step.buffers().into_iter().for_each(|b| touch(b, i));
    }
    let mut slots: Vec<usize> = Vec::new();
    // Which step each slot is busy until.
    let mut busy_until: Vec<usize> = Vec::new();
    let mut order: Vec<usize> = (0..buffers.len())
        .filter(|&b| matches!(buffers[b].role, BufferRole::Temp { .. }))
        .collect();
    order.sort_by_key(|&b| first[b]);
    for b in order {
        let free = (0..slots.len())
            .filter(|&s| busy_until[s] < first[b])
            .min_by_key(|&s| slots[s].abs_diff(buffers[b].bytes));
        let slot = match free {
            Some(s) => {
                slots[s] = slots[s].max(buffers[b].bytes);
                s
            }
            None => {
                slots.push(buffers[b].bytes);
                busy_until.push(0);
                slots.len() - 1
            }
        };
        busy_until[slot] = last[b];
        buffers[b].role = BufferRole::Temp { slot };
    }
    slots
}
