//! Greedy generation with a key/value cache of static length: a
//! [`CausalLm`] runs a step of new positions over caches of `max_len`
//! positions (written in place of their positions, the step's start an
//! input), and a [`Generator`] feeds it, keeping one compiled program per
//! step length, so a prompt and any number of one-token steps take two
//! programs (the way XLA serves language models).

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use kiln_ir::{DType, Error, ErrorKind, Result};
use kiln_runtime::Tensor as HostTensor;

use super::{CompiledModel, StaticKvCache, TracedModel, VarStore};
use crate::tensor::Tensor;
use crate::trace::TensorSpec;
use kiln_ir::Device;

/// A decoder-only language model that runs over key/value caches of
/// static length ([`StaticKvCache`], one per layer).
pub trait CausalLm {
    /// How many layers keep a cache, and the shape of a layer's keys (and
    /// of its values) for `max_len` positions at batch 1: `[1, kv_heads,
    /// max_len, head_dim]`.
    fn cache_shape(&self, max_len: i64) -> (usize, Vec<i64>);

    /// Logits `[batch, len, vocab]` for `input_ids` at positions
    /// `start ..` (a 0-D int64 tensor), and each layer's cache with the
    /// new positions written.
    fn forward_static(
        &self,
        input_ids: &Tensor,
        start: &Tensor,
        caches: &[StaticKvCache],
    ) -> (Tensor, Vec<StaticKvCache>);

    /// Traces one step of `len` positions at batch 1: inputs `input_ids`
    /// `[1, len]`, `start` (int64, 0-D), then `cache.{layer}.k` and
    /// `cache.{layer}.v` in `dtype`; results: the logits, then each layer's
    /// written keys and values. The program is the same for every start.
    fn trace_step(
        &self,
        vs: &VarStore,
        len: i64,
        max_len: i64,
        dtype: DType,
    ) -> Result<TracedModel> {
        let (layers, shape) = self.cache_shape(max_len);
        let mut specs = vec![
            TensorSpec::new([1, len], DType::I64).name("input_ids"),
            TensorSpec::new([], DType::I64).name("start"),
        ];
        for i in 0..layers {
            specs.push(TensorSpec::new(shape.clone(), dtype).name(format!("cache.{i}.k")));
            specs.push(TensorSpec::new(shape.clone(), dtype).name(format!("cache.{i}.v")));
        }
        vs.trace(&specs, |xs| {
            let caches: Vec<StaticKvCache> = xs[2..]
                .chunks(2)
                .map(|kv| StaticKvCache {
                    k: kv[0].clone(),
                    v: kv[1].clone(),
                })
                .collect();
            let (logits, caches) = self.forward_static(&xs[0], &xs[1], &caches);
            let mut outputs = vec![logits];
            outputs.extend(caches.into_iter().flat_map(|c| [c.k, c.v]));
            outputs
        })
    }
}

/// Runs a [`CausalLm`] position by position (batch 1) with caches of
/// static length: one compiled program per chunk length, traced and
/// compiled when first met and reused for every later step of that length.
pub struct Generator<'a, M: CausalLm> {
    model: &'a M,
    vs: &'a VarStore,
    dtype: DType,
    max_len: i64,
    /// Each layer's keys and values.
    cache: Vec<HostTensor>,
    len: i64,
    steps: HashMap<i64, CompiledModel>,
}

impl<'a, M: CausalLm> Generator<'a, M> {
    /// A generator whose caches hold `max_len` positions (zeros, so the
    /// masked positions are finite); activations and caches in `dtype`,
    /// the weights' dtype.
    pub fn new(model: &'a M, vs: &'a VarStore, dtype: DType, max_len: i64) -> Result<Self> {
        let (layers, shape) = model.cache_shape(max_len);
        let cache = (0..2 * layers)
            .map(|_| HostTensor::zeros(&shape, dtype))
            .collect::<Result<_>>()?;
        Ok(Generator {
            model,
            vs,
            dtype,
            max_len,
            cache,
            len: 0,
            steps: HashMap::new(),
        })
    }

    /// How many positions the caches hold.
    pub fn len(&self) -> i64 {
        self.len
    }

    /// Whether the caches are empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many programs were compiled: one per chunk length fed.
    pub fn programs(&self) -> usize {
        self.steps.len()
    }

    /// Runs `ids` after the cached positions; returns their logits
    /// `[1, len, vocab]` and keeps their keys and values.
    pub fn feed(&mut self, ids: &[i64]) -> Result<HostTensor> {
        let len = ids.len() as i64;
        if self.len + len > self.max_len {
            return Err(Error::new(
                ErrorKind::Input,
                format!(
                    "the key/value cache holds {} positions: {len} more after {} do not fit",
                    self.max_len, self.len
                ),
            ));
        }
        let step = match self.steps.entry(len) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(
                self.model
                    .trace_step(self.vs, len, self.max_len, self.dtype)?
                    .compile(Device::CPU)?,
            ),
        };
        let mut inputs = vec![
            HostTensor::from_vec(ids.to_vec(), &[1, len])?,
            HostTensor::from_vec(vec![self.len], &[])?,
        ];
        inputs.append(&mut self.cache);
        // The caches are given up: each step updates them in place.
        let mut outputs = step.run_donated(inputs)?.into_iter();
        let logits = outputs
            .next()
            .ok_or_else(|| Error::new(ErrorKind::Backend, "the step returned no logits"))?;
        self.cache = outputs.collect();
        self.len += len;
        Ok(logits)
    }

    /// Greedy decoding: feeds `prompt`, then `count` times the most likely
    /// next token (the first of equal largest logits); the tokens chosen.
    pub fn generate(&mut self, prompt: &[i64], count: usize) -> Result<Vec<i64>> {
        let mut tokens = Vec::with_capacity(count);
        if count == 0 {
            return Ok(tokens);
        }
        let mut next = argmax_last(&self.feed(prompt)?);
        tokens.push(next);
        while tokens.len() < count {
            next = argmax_last(&self.feed(&[next])?);
            tokens.push(next);
        }
        Ok(tokens)
    }
}

/// The position of the largest value in the last row of `logits` (its
/// last dim: the vocabulary), the first of equals.
pub fn argmax_last(logits: &HostTensor) -> i64 {
    let shape = logits.shape();
    if shape.contains(&0) {
        return 0;
    }
    // Read in place (a decode step's whole vocabulary, every step: no
    // copy of the logits).
    let mut index: Vec<i64> = shape.iter().map(|&n| n - 1).collect();
    let Some(last) = index.len().checked_sub(1) else {
        return 0;
    };
    let (mut best, mut top) = (0, f64::NEG_INFINITY);
    for i in 0..shape[last] {
        index[last] = i;
        let v = logits.get(&index).f64();
        if i == 0 || v > top {
            (best, top) = (i, v);
        }
    }
    best
}
