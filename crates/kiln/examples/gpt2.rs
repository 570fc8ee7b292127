//! GPT-2 written with `kiln::nn`: loads a safetensors checkpoint in Hugging
//! Face naming, traces the forward pass, compiles it and prints logits.
//!
//! ```text
//! cargo run -p kiln --example gpt2 --release                      # the tiny test model
//! cargo run -p kiln --example gpt2 --release -- model.safetensors [config.json] [--ids 464,2068,7586] [--kir gpt2.kir] [--generate 8]
//! ```
//!
//! `--generate N` continues the ids greedily for N tokens with a key/value
//! cache of static length (`kiln::nn::Generator`: two compiled programs,
//! the prompt's and the one-token step's; the positions must fit
//! `n_positions`), and prints the one-token steps' median time (per-token
//! decode; `benches/gpt2_decode.py` runs it beside transformers).
//!
//! `--kir PATH` writes the traced program: its arguments are `input_ids`
//! and the weights by name, so `kiln run gpt2.kir --inputs
//! model.safetensors --input input_ids=ids.npy` runs it too.
//!
//! The model follows transformers' `GPT2LMHeadModel`: token and position
//! embeddings (`wte`, `wpe`), blocks of `ln_1`, causal self-attention
//! (`attn.c_attn` projecting to q, k and v at once, `attn.c_proj`), `ln_2`
//! and an MLP (`mlp.c_fc`, gelu_new, `mlp.c_proj`), then `ln_f` and an
//! output head tied to `wte`. GPT-2's projections are `Conv1D`s, which store
//! their weight `[in, out]`: `x @ weight + bias`, not `linear`.
//!
//! The config comes from the JSON file given, else `config.json` beside the
//! checkpoint (the hub's layout), else `<stem>_config.json`. Names may carry
//! the `transformer.` prefix (a saved `GPT2LMHeadModel`) or not (the hub's
//! `model.safetensors`). There is no tokenizer: input ids are numbers.
//!
//! `crates/kiln/tests/nn.rs` includes this file and checks the model
//! against transformers' logits.

use std::path::{Path, PathBuf};

use kiln::nn::{
    Activation, CausalLm, CompiledModel, Embedding, Generator, LayerNorm, Linear, Module, Param,
    StaticKvCache, TracedModel, VarBuilder, VarStore, argmax_last, attend_static, config_beside,
    merge_heads, split_heads,
};
use kiln::{AttentionOptions, DType, Device, Error, ErrorKind, Result, Tensor, TensorSpec};

/// The fields of transformers' `GPT2Config` the forward pass uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Gpt2Config {
    pub vocab_size: i64,
    pub n_positions: i64,
    pub n_embd: i64,
    pub n_layer: i64,
    pub n_head: i64,
    /// The MLP's width (`n_inner`; `4 * n_embd` when null).
    pub n_inner: i64,
    pub layer_norm_epsilon: f64,
    pub activation: Activation,
}

impl Gpt2Config {
    /// Reads a transformers `config.json`.
    pub fn from_json_file(path: &Path) -> Result<Gpt2Config> {
        let json = read_json(path)?;
        let int = |key: &str| json_int(&json, key, path);
        let n_embd = int("n_embd")?;
        let n_inner = match json.get("n_inner") {
            Some(v) if !v.is_null() => int("n_inner")?,
            _ => 4 * n_embd,
        };
        let activation = match json.get("activation_function").and_then(|v| v.as_str()) {
            Some(name) => Activation::from_name(name)?,
            None => Activation::GeluTanh,
        };
        Ok(Gpt2Config {
            vocab_size: int("vocab_size")?,
            n_positions: int("n_positions")?,
            n_embd,
            n_layer: int("n_layer")?,
            n_head: int("n_head")?,
            n_inner,
            layer_norm_epsilon: json
                .get("layer_norm_epsilon")
                .and_then(|v| v.as_f64())
                .unwrap_or(1e-5),
            activation,
        })
    }
}

/// transformers' `Conv1D`: `x @ weight + bias` with `weight` `[in, out]`.
#[derive(Clone, Debug)]
struct Conv1D {
    weight: Param,
    bias: Param,
}

impl Conv1D {
    fn load(vb: &VarBuilder, n_in: i64, n_out: i64) -> Result<Conv1D> {
        Ok(Conv1D {
            weight: vb.get("weight", &[n_in, n_out])?,
            bias: vb.get("bias", &[n_out])?,
        })
    }
}

impl Module for Conv1D {
    fn forward(&self, x: &Tensor) -> Tensor {
        x.matmul(&self.weight.tensor()) + self.bias.tensor()
    }
}

#[derive(Clone, Debug)]
struct Gpt2Attention {
    c_attn: Conv1D,
    c_proj: Conv1D,
    n_embd: i64,
    n_head: i64,
}

impl Gpt2Attention {
    /// Queries, keys and values `[batch, heads, len, head_dim]` from the
    /// fused projection (`None` when an earlier op failed: the trace
    /// reports its error).
    fn qkv(&self, x: &Tensor) -> Option<[Tensor; 3]> {
        let qkv = self.c_attn.forward(x).split(self.n_embd, -1);
        let part = |i: usize| qkv.get(i).or(qkv.first()).cloned();
        let (Some(q), Some(k), Some(v)) = (part(0), part(1), part(2)) else {
            return None;
        };
        Some([q, k, v].map(|t| split_heads(&t, self.n_head)))
    }

    /// Attention of new positions over a cache of static length.
    fn forward_static(
        &self,
        x: &Tensor,
        cache: &StaticKvCache,
        positions: &Tensor,
    ) -> (Tensor, StaticKvCache) {
        let Some([q, k, v]) = self.qkv(x) else {
            return (x.clone(), cache.clone());
        };
        let (y, cache) = attend_static(&q, &k, &v, cache, positions, AttentionOptions::causal());
        (self.c_proj.forward(&merge_heads(&y)), cache)
    }
}

impl Module for Gpt2Attention {
    fn forward(&self, x: &Tensor) -> Tensor {
        let Some([q, k, v]) = self.qkv(x) else {
            return x.clone();
        };
        let y = q.scaled_dot_product_attention(&k, &v, None, AttentionOptions::causal());
        self.c_proj.forward(&merge_heads(&y))
    }
}

#[derive(Clone, Debug)]
struct Mlp {
    c_fc: Conv1D,
    c_proj: Conv1D,
    activation: Activation,
}

impl Module for Mlp {
    fn forward(&self, x: &Tensor) -> Tensor {
        self.c_proj
            .forward(&self.activation.forward(&self.c_fc.forward(x)))
    }
}

#[derive(Clone, Debug)]
struct Block {
    ln_1: LayerNorm,
    attn: Gpt2Attention,
    ln_2: LayerNorm,
    mlp: Mlp,
}

impl Block {
    fn load(vb: &VarBuilder, c: &Gpt2Config) -> Result<Block> {
        let e = c.n_embd;
        Ok(Block {
            ln_1: LayerNorm::load(&vb.pp("ln_1"), e, c.layer_norm_epsilon)?,
            attn: Gpt2Attention {
                c_attn: Conv1D::load(&vb.pp("attn.c_attn"), e, 3 * e)?,
                c_proj: Conv1D::load(&vb.pp("attn.c_proj"), e, e)?,
                n_embd: e,
                n_head: c.n_head,
            },
            ln_2: LayerNorm::load(&vb.pp("ln_2"), e, c.layer_norm_epsilon)?,
            mlp: Mlp {
                c_fc: Conv1D::load(&vb.pp("mlp.c_fc"), e, c.n_inner)?,
                c_proj: Conv1D::load(&vb.pp("mlp.c_proj"), c.n_inner, e)?,
                activation: c.activation,
            },
        })
    }
}

impl Block {
    fn forward_static(
        &self,
        x: &Tensor,
        cache: &StaticKvCache,
        positions: &Tensor,
    ) -> (Tensor, StaticKvCache) {
        let (attn, cache) = self
            .attn
            .forward_static(&self.ln_1.forward(x), cache, positions);
        let x = x + attn;
        (&x + self.mlp.forward(&self.ln_2.forward(&x)), cache)
    }
}

impl Module for Block {
    fn forward(&self, x: &Tensor) -> Tensor {
        let x = x + self.attn.forward(&self.ln_1.forward(x));
        &x + self.mlp.forward(&self.ln_2.forward(&x))
    }
}

/// GPT-2 with its language-model head (tied to the token embeddings).
#[derive(Clone, Debug)]
pub struct Gpt2 {
    wte: Embedding,
    wpe: Embedding,
    h: Vec<Block>,
    ln_f: LayerNorm,
    lm_head: Linear,
    n_embd: i64,
    n_head: i64,
}

impl Gpt2 {
    /// Loads the parameters under `vb` (under `transformer.` when the
    /// checkpoint's names have that prefix).
    pub fn load(vb: &VarBuilder, config: &Gpt2Config) -> Result<Gpt2> {
        if config.n_head <= 0 || config.n_embd % config.n_head != 0 {
            return Err(Error::new(
                ErrorKind::Attribute,
                format!(
                    "n_embd {} is not divisible by n_head {}",
                    config.n_embd, config.n_head
                ),
            ));
        }
        let vb = if vb.contains("transformer.wte.weight") {
            vb.pp("transformer")
        } else {
            vb.clone()
        };
        let wte = Embedding::load(&vb.pp("wte"), config.vocab_size, config.n_embd)?;
        let h = (0..config.n_layer)
            .map(|i| Block::load(&vb.pp("h").pp(i), config))
            .collect::<Result<_>>()?;
        Ok(Gpt2 {
            lm_head: Linear::new(wte.weight().clone(), None),
            wte,
            wpe: Embedding::load(&vb.pp("wpe"), config.n_positions, config.n_embd)?,
            h,
            ln_f: LayerNorm::load(&vb.pp("ln_f"), config.n_embd, config.layer_norm_epsilon)?,
            n_embd: config.n_embd,
            n_head: config.n_head,
        })
    }

    /// Logits `[batch, len, vocab]` for `input_ids` `[batch, len]`.
    pub fn forward(&self, input_ids: &Tensor) -> Tensor {
        let len = input_ids
            .shape()
            .and_then(|s| s.last().copied())
            .unwrap_or(0);
        let positions = kiln::arange(0, len, 1, Some(DType::I64));
        let mut x = self.wte.forward(input_ids) + self.wpe.forward(&positions);
        for block in &self.h {
            x = block.forward(&x);
        }
        self.lm_head.forward(&self.ln_f.forward(&x))
    }

    /// Traces the forward pass for `[batch, len]` int64 ids: the program
    /// takes `input_ids` and binds the weights itself.
    pub fn trace(&self, vs: &VarStore, batch: i64, len: i64) -> Result<TracedModel> {
        let spec = TensorSpec::new([batch, len], DType::I64).name("input_ids");
        vs.trace(&[spec], |xs| self.forward(&xs[0]))
    }
}

impl CausalLm for Gpt2 {
    fn cache_shape(&self, max_len: i64) -> (usize, Vec<i64>) {
        let head_dim = self.n_embd / self.n_head;
        (self.h.len(), vec![1, self.n_head, max_len, head_dim])
    }

    fn forward_static(
        &self,
        input_ids: &Tensor,
        start: &Tensor,
        caches: &[StaticKvCache],
    ) -> (Tensor, Vec<StaticKvCache>) {
        let len = input_ids
            .shape()
            .and_then(|s| s.last().copied())
            .unwrap_or(0);
        let positions = kiln::arange(0, len, 1, Some(DType::I64)) + start;
        let mut x = self.wte.forward(input_ids) + self.wpe.forward(&positions);
        let mut written = Vec::with_capacity(self.h.len());
        for (block, cache) in self.h.iter().zip(caches) {
            let (y, cache) = block.forward_static(&x, cache, &positions);
            x = y;
            written.push(cache);
        }
        (self.lm_head.forward(&self.ln_f.forward(&x)), written)
    }
}

fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| Error::new(ErrorKind::Input, format!("{}: {e}", path.display())))
}

fn json_int(json: &serde_json::Value, key: &str, path: &Path) -> Result<i64> {
    json.get(key).and_then(|v| v.as_i64()).ok_or_else(|| {
        Error::new(
            ErrorKind::Input,
            format!("{}: no integer '{key}'", path.display()),
        )
    })
}

/// The tiny test model's path.
pub fn bundled(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/nn")
        .join(name)
}

/// `--ids 1,2,3`.
pub fn parse_ids(text: &str) -> Result<Vec<i64>> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse::<i64>()
                .map_err(|_| Error::new(ErrorKind::Input, format!("'{s}' is not a token id")))
        })
        .collect()
}

fn main() -> Result<()> {
    let mut paths = Vec::new();
    let mut ids: Vec<i64> = vec![15, 7, 42, 3, 99, 0, 23, 8];
    let mut kir = None;
    let mut generate = 0usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--generate" {
            generate = args
                .next()
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| Error::new(ErrorKind::Input, "--generate needs a count"))?;
        } else if arg == "--kir" {
            kir = Some(
                args.next()
                    .ok_or_else(|| Error::new(ErrorKind::Input, "--kir needs a path"))?,
            );
        } else if arg == "--ids" {
            let list = args
                .next()
                .ok_or_else(|| Error::new(ErrorKind::Input, "--ids needs a list: --ids 1,2,3"))?;
            ids = parse_ids(&list)?;
        } else {
            paths.push(PathBuf::from(arg));
        }
    }
    let model_path = paths
        .first()
        .cloned()
        .unwrap_or_else(|| bundled("gpt2.safetensors"));
    let config_path = paths
        .get(1)
        .cloned()
        .unwrap_or_else(|| config_beside(&model_path));
    let config = Gpt2Config::from_json_file(&config_path)?;

    let start = std::time::Instant::now();
    let vs = VarStore::load(&model_path)?;
    let model = Gpt2::load(&vs.root(), &config)?;
    let len = ids.len() as i64;
    let traced = model.trace(&vs, 1, len)?;
    let loaded = start.elapsed();
    if let Some(path) = &kir {
        std::fs::write(path, traced.to_string())
            .map_err(|e| Error::new(ErrorKind::Io, format!("{path}: {e}")))?;
    }
    let compiled: CompiledModel = traced.compile(Device::CPU)?;
    let compiled_in = start.elapsed() - loaded;
    let input = kiln::runtime::Tensor::from_vec(ids.clone(), &[1, len])?;
    let run_start = std::time::Instant::now();
    let logits = compiled.run(&[input])?.remove(0);
    let ran = run_start.elapsed();

    println!(
        "GPT-2 from {}: {} layers, {} heads, n_embd {}, vocab {} ({} parameters)",
        model_path.display(),
        config.n_layer,
        config.n_head,
        config.n_embd,
        config.vocab_size,
        traced.weights().iter().map(|w| w.numel()).sum::<i64>()
    );
    println!(
        "load and trace {:.1} ms, compile {:.1} ms, run {:.1} ms",
        loaded.as_secs_f64() * 1e3,
        compiled_in.as_secs_f64() * 1e3,
        ran.as_secs_f64() * 1e3
    );
    println!("input ids {ids:?}");
    println!("logits {:?} {}", logits.shape(), logits.dtype());
    let values: Vec<f64> = logits.values().into_iter().map(|v| v.f64()).collect();
    let vocab = config.vocab_size as usize;
    let last = &values[values.len() - vocab..];
    let mut ranked: Vec<(usize, f64)> = last.iter().copied().enumerate().collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    println!("last position: logits[..8] {:?}", &last[..vocab.min(8)]);
    println!(
        "last position: top 5 next tokens {:?}",
        &ranked[..vocab.min(5)]
    );
    if generate > 0 {
        let dtype = vs.dtype().unwrap_or(DType::F32);
        let max_len = len + generate as i64;
        let mut generator = Generator::new(&model, &vs, dtype, max_len)?;
        // Greedy decoding as `Generator::generate` does it, each one-token
        // step timed (the first compiles the step's program).
        let start = std::time::Instant::now();
        let mut next = argmax_last(&generator.feed(&ids)?);
        let mut generated = vec![next];
        let mut steps = Vec::new();
        while generated.len() < generate {
            let t = std::time::Instant::now();
            next = argmax_last(&generator.feed(&[next])?);
            steps.push(t.elapsed().as_secs_f64() * 1e3);
            generated.push(next);
        }
        println!(
            "greedy continuation {generated:?} ({:.1} ms; a static cache of {max_len} positions, {} programs compiled)",
            start.elapsed().as_secs_f64() * 1e3,
            generator.programs()
        );
        if steps.len() > 1 {
            let mut warm = steps[1..].to_vec();
            warm.sort_by(f64::total_cmp);
            println!(
                "one-token steps: median {:.2} ms, min {:.2} ms over {} steps (after the first, {:.1} ms, which compiled the step)",
                warm[warm.len() / 2],
                warm[0],
                warm.len(),
                steps[0]
            );
        }
    }
    Ok(())
}
