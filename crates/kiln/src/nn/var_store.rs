//! The parameter store: [`VarStore`] holds a checkpoint's tensors,
//! [`VarBuilder`] hands them out by Hugging Face name under a prefix path,
//! and [`Param`] is a loaded parameter's handle.
//!
//! Loading a model asks the store for each parameter with the shape the
//! model expects (`vb.pp("h.0").pp("attn").get("c_attn.weight", &[64, 192])`),
//! which checks the name, shape and dtype once, at load time, and declares
//! the parameter. [`VarStore::trace`] then makes every declared parameter a
//! named input of `@main` (named as in the file), and a [`Param`] used in
//! the traced closure is that input. This keeps data out of the program:
//! the weights are bound by name when it runs
//! ([`TracedModel`](super::TracedModel)).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use kiln_ir::{DType, Error, ErrorKind, Result};
use kiln_runtime::Tensor as HostTensor;

use super::model::TracedModel;
use crate::tensor::Tensor;
use crate::trace::{IntoOutputs, TensorSpec, trace};

/// A checkpoint's tensors, by name, and the parameters a model has loaded
/// from them. Cloning is cheap: clones share the store.
#[derive(Clone)]
pub struct VarStore {
    inner: Arc<Store>,
}

struct Store {
    /// Tells this store's parameters from another's.
    id: u64,
    /// Where the tensors came from, for error messages.
    source: String,
    tensors: BTreeMap<String, HostTensor>,
    /// The floating dtype every floating tensor has, if they agree.
    dtype: Option<DType>,
    declared: Mutex<Declared>,
}

#[derive(Default)]
struct Declared {
    /// Parameters in the order the model loaded them (the order of their
    /// inputs in `@main`).
    params: Vec<(String, HostTensor)>,
    index: HashMap<String, usize>,
}

/// The `config.json` of a checkpoint: `config.json` beside it (the hub's
/// layout) when there is one, else `<stem>_config.json` beside it.
pub fn config_beside(checkpoint: &Path) -> std::path::PathBuf {
    let hub = checkpoint.with_file_name("config.json");
    if hub.exists() {
        return hub;
    }
    let stem = checkpoint
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("model");
    checkpoint.with_file_name(format!("{stem}_config.json"))
}

/// The tensors of a sharded checkpoint: each listed in the index's
/// `weight_map`, read from its shard (a file beside the index).
fn read_sharded(index: &Path) -> Result<BTreeMap<String, HostTensor>> {
    let bad = |message: String| {
        Error::new(
            ErrorKind::TensorFile,
            format!("{}: {message}", index.display()),
        )
    };
    let text = std::fs::read_to_string(index)
        .map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", index.display())))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a checkpoint index: {e}")))?;
    let map = json
        .get("weight_map")
        .and_then(serde_json::Value::as_object)
        .ok_or_else(|| bad("a checkpoint index needs a \"weight_map\" object".into()))?;
    let mut by_shard: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, shard) in map {
        let shard = shard
            .as_str()
            .ok_or_else(|| bad(format!("the shard of '{name}' is not a file name")))?;
        by_shard.entry(shard).or_default().push(name);
    }
    let dir = index.parent().unwrap_or(Path::new("."));
    let mut tensors = BTreeMap::new();
    for (shard, names) in by_shard {
        let mut file = kiln_runtime::io::read_safetensors(&dir.join(shard))?;
        for name in names {
            let t = file.remove(name).ok_or_else(|| {
                bad(format!(
                    "'{name}' is listed in {shard}, which does not hold it"
                ))
            })?;
            tensors.insert(name.to_string(), t);
        }
    }
    Ok(tensors)
}

static NEXT_STORE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl VarStore {
    /// Reads every tensor of a checkpoint (f32, f16, bf16 weights, or any
    /// other dtype the file format has): one safetensors file, or a sharded
    /// checkpoint through its index (a `.json` path such as
    /// `model.safetensors.index.json`, whose `weight_map` gives the shard
    /// file beside it of every tensor, as Hugging Face writes them).
    pub fn load(path: impl AsRef<Path>) -> Result<VarStore> {
        let path = path.as_ref();
        let tensors = if path.extension().is_some_and(|e| e == "json") {
            read_sharded(path)?
        } else {
            kiln_runtime::io::read_safetensors(path)?
        };
        Ok(VarStore::from_tensors_in(
            path.display().to_string(),
            tensors,
        ))
    }

    /// The store with every floating tensor converted to `dtype` (rounded
    /// to nearest): a bf16 checkpoint run in f32, say. Other tensors are
    /// kept as they are.
    pub fn to_dtype(&self, dtype: DType) -> Result<VarStore> {
        let tensors = self
            .inner
            .tensors
            .iter()
            .map(|(name, t)| {
                let t = if t.dtype().is_floating_point() && t.dtype() != dtype {
                    let values: Vec<_> = t
                        .values()
                        .into_iter()
                        .map(|v| kiln_runtime::convert::convert(v, dtype))
                        .collect();
                    HostTensor::from_values(values, t.shape(), dtype)?
                } else {
                    t.clone()
                };
                Ok((name.clone(), t))
            })
            .collect::<Result<BTreeMap<_, _>>>()?;
        Ok(VarStore::from_tensors_in(
            format!("{} as {dtype}", self.inner.source),
            tensors,
        ))
    }

    /// A store of tensors already in memory (`source` names them in error
    /// messages, as a file name would).
    pub fn from_tensors(
        source: impl Into<String>,
        tensors: impl IntoIterator<Item = (String, HostTensor)>,
    ) -> VarStore {
        VarStore::from_tensors_in(source.into(), tensors.into_iter().collect())
    }

    fn from_tensors_in(source: String, tensors: BTreeMap<String, HostTensor>) -> VarStore {
        let mut floats = tensors
            .values()
            .map(HostTensor::dtype)
            .filter(|d| d.is_floating_point());
        let dtype = floats.next().filter(|first| floats.all(|d| d == *first));
        VarStore {
            inner: Arc::new(Store {
                id: NEXT_STORE.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                source,
                tensors,
                dtype,
                declared: Mutex::new(Declared::default()),
            }),
        }
    }

    /// A builder at the root of the names (no prefix).
    pub fn root(&self) -> VarBuilder {
        VarBuilder {
            store: self.clone(),
            path: Vec::new(),
            dtype: self.inner.dtype,
        }
    }

    /// Where the tensors came from (the file's path).
    pub fn source(&self) -> &str {
        &self.inner.source
    }

    /// The dtype all the floating tensors have, when they agree (what
    /// [`VarBuilder::get`] expects unless told otherwise).
    pub fn dtype(&self) -> Option<DType> {
        self.inner.dtype
    }

    /// The names of every tensor in the store, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.inner.tensors.keys().map(String::as_str)
    }

    /// A stored tensor, by full name.
    pub fn tensor(&self, name: &str) -> Option<&HostTensor> {
        self.inner.tensors.get(name)
    }

    /// The names of the parameters loaded so far, in load order.
    pub fn declared(&self) -> Vec<String> {
        self.lock().params.iter().map(|(n, _)| n.clone()).collect()
    }

    fn lock(&self) -> MutexGuard<'_, Declared> {
        self.inner
            .declared
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Declares `name` (once) and returns its position among the declared
    /// parameters.
    fn declare(&self, name: &str, tensor: &HostTensor) -> usize {
        let mut declared = self.lock();
        if let Some(&i) = declared.index.get(name) {
            return i;
        }
        let i = declared.params.len();
        declared.params.push((name.to_string(), tensor.clone()));
        declared.index.insert(name.to_string(), i);
        i
    }

    /// Traces `f` over inputs described by `inputs`, with every parameter
    /// loaded so far as a further input of `@main` named as in the file.
    ///
    /// Load the model first, then trace its forward pass: a [`Param`] used
    /// inside `f` is its input; one loaded during `f`, or from another
    /// store, is an error the trace returns. Run the result with the
    /// inputs alone: [`TracedModel`] binds the weights.
    pub fn trace<R: IntoOutputs>(
        &self,
        inputs: &[TensorSpec],
        f: impl FnOnce(&[Tensor]) -> R,
    ) -> Result<TracedModel> {
        let params = self.lock().params.clone();
        let mut specs = inputs.to_vec();
        specs.extend(
            params
                .iter()
                .map(|(name, t)| TensorSpec::new(t.shape().to_vec(), t.dtype()).name(name)),
        );
        let n = inputs.len();
        let traced = trace(&specs, |all| {
            let _bound = Bound::new(self.inner.id, all[n..].to_vec());
            f(&all[..n])
        })?;
        Ok(TracedModel::new(
            traced,
            n,
            params.into_iter().map(|(_, t)| t).collect(),
        ))
    }
}

impl std::fmt::Debug for VarStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VarStore")
            .field("source", &self.inner.source)
            .field("tensors", &self.inner.tensors.len())
            .field("dtype", &self.inner.dtype)
            .finish_non_exhaustive()
    }
}

/// The parameters' inputs of the trace in progress: (store, inputs).
struct Binding {
    store: u64,
    inputs: Vec<Tensor>,
}

thread_local! {
    static BINDING: RefCell<Option<Binding>> = const { RefCell::new(None) };
}

/// Binds a store's parameters for the duration of a traced closure.
struct Bound(Option<Binding>);

impl Bound {
    fn new(store: u64, inputs: Vec<Tensor>) -> Bound {
        Bound(BINDING.with(|b| b.replace(Some(Binding { store, inputs }))))
    }
}

impl Drop for Bound {
    fn drop(&mut self) {
        let previous = self.0.take();
        BINDING.with(|b| *b.borrow_mut() = previous);
    }
}

/// Hands out parameters by name under a prefix path (`vb.pp("h.0")`), as
/// candle-nn's `VarBuilder` and Hugging Face's names do. Cloning is cheap.
#[derive(Clone, Debug)]
pub struct VarBuilder {
    store: VarStore,
    path: Vec<String>,
    dtype: Option<DType>,
}

impl VarBuilder {
    /// The builder one level down: names under `prefix.` (`prefix` may hold
    /// dots itself: `vb.pp("h.0")` is `vb.pp("h").pp(0)`).
    pub fn pp(&self, prefix: impl ToString) -> VarBuilder {
        let mut path = self.path.clone();
        path.push(prefix.to_string());
        VarBuilder {
            store: self.store.clone(),
            path,
            dtype: self.dtype,
        }
    }

    /// The same builder, expecting parameters of `dtype` (a parameter of
    /// another dtype is an error; `None` accepts any).
    pub fn with_dtype(&self, dtype: Option<DType>) -> VarBuilder {
        VarBuilder {
            dtype,
            ..self.clone()
        }
    }

    /// The dtype parameters must have (by default the store's
    /// [`VarStore::dtype`]).
    pub fn dtype(&self) -> Option<DType> {
        self.dtype
    }

    /// The store it hands parameters out from.
    pub fn store(&self) -> &VarStore {
        &self.store
    }

    /// The prefix path, dotted (`""` at the root).
    pub fn prefix(&self) -> String {
        self.path.join(".")
    }

    /// The full name of `name` under this builder's prefix.
    pub fn full_name(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.prefix())
        }
    }

    /// Whether the store has `name` under this prefix.
    pub fn contains(&self, name: &str) -> bool {
        self.store.inner.tensors.contains_key(&self.full_name(name))
    }

    /// The stored shape of `name` (for reading sizes off a checkpoint);
    /// an error naming the parameter when it is missing.
    pub fn shape_of(&self, name: &str) -> Result<Vec<i64>> {
        let full = self.full_name(name);
        self.lookup(&full).map(|t| t.shape().to_vec())
    }

    /// The parameter `name` under this prefix, which must have `shape` and
    /// the expected dtype ([`VarBuilder::dtype`]).
    ///
    /// Errors ([`ErrorKind::Input`]) name the parameter and the file: a
    /// missing parameter (with a stored name it may have meant), or one
    /// stored with another shape or dtype (expected and found).
    pub fn get(&self, name: &str, shape: &[i64]) -> Result<Param> {
        let full = self.full_name(name);
        let tensor = self.lookup(&full)?;
        if tensor.shape() != shape {
            return Err(Error::new(
                ErrorKind::Input,
                format!(
                    "parameter '{full}' in {} has shape {:?}, expected {shape:?}",
                    self.store.inner.source,
                    tensor.shape()
                ),
            ));
        }
        if let Some(expected) = self.dtype {
            if tensor.dtype() != expected {
                return Err(Error::new(
                    ErrorKind::Input,
                    format!(
                        "parameter '{full}' in {} has dtype {}, expected {expected}",
                        self.store.inner.source,
                        tensor.dtype()
                    ),
                ));
            }
        }
        let index = self.store.declare(&full, tensor);
        Ok(Param {
            store: self.store.inner.id,
            index,
            name: full.into(),
            shape: shape.to_vec(),
            dtype: tensor.dtype(),
        })
    }

    fn lookup(&self, full: &str) -> Result<&HostTensor> {
        let store = &self.store.inner;
        store.tensors.get(full).ok_or_else(|| {
            // The usual slip is the prefix: `transformer.h.0...` against
            // `h.0...`, or the other way round.
            let hint = store
                .tensors
                .keys()
                .find(|k| k.ends_with(&format!(".{full}")) || full.ends_with(&format!(".{k}")))
                .map(|k| format!(" (it has '{k}')"))
                .unwrap_or_default();
            Error::new(
                ErrorKind::Input,
                format!("parameter '{full}' is missing from {}{hint}", store.source),
            )
        })
    }
}

/// A loaded parameter: its name, shape and dtype, and (inside
/// [`VarStore::trace`]) its input in the traced program.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    store: u64,
    index: usize,
    name: Arc<str>,
    shape: Vec<i64>,
    dtype: DType,
}

impl Param {
    /// The full name (`h.0.attn.c_attn.weight`), also its input's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The shape.
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }

    /// The dtype, as stored.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The parameter's value in the trace in progress. Outside
    /// [`VarStore::trace`] of its store (or when it was loaded after that
    /// trace began) the trace fails with an error naming the parameter.
    pub fn tensor(&self) -> Tensor {
        let found = BINDING.with(|b| {
            let b = b.borrow();
            let Some(binding) = b.as_ref() else {
                return Err("outside VarStore::trace");
            };
            if binding.store != self.store {
                return Err("in a trace of another VarStore");
            }
            binding
                .inputs
                .get(self.index)
                .cloned()
                .ok_or("after VarStore::trace began (load the model before tracing it)")
        });
        found.unwrap_or_else(|why| {
            super::fail(Error::new(
                ErrorKind::Input,
                format!("parameter '{}' is used {why}", self.name),
            ))
        })
    }
}
