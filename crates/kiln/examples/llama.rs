//! Llama written with `kiln::nn`: loads a safetensors checkpoint in Hugging
//! Face naming, traces the forward pass, compiles it and prints logits.
//!
//! ```text
//! cargo run -p kiln --example llama --release                      # the tiny test model
//! cargo run -p kiln --example llama --release -- model.safetensors [config.json] [--ids 1,2,3] [--generate 8]
//! ```
//!
//! The model follows transformers' `LlamaForCausalLM`: `model.embed_tokens`,
//! layers of `input_layernorm` (RMS norm), self-attention with rotary
//! embeddings and grouped-query heads (`self_attn.{q,k,v,o}_proj`),
//! `post_attention_layernorm` and a SiLU-gated MLP (`mlp.gate_proj`,
//! `mlp.up_proj`, `mlp.down_proj`), then `model.norm` and `lm_head` (tied
//! to the embeddings when the checkpoint has no `lm_head.weight`). The
//! config comes from the JSON file given, else `config.json` beside the
//! checkpoint, else `<stem>_config.json`.
//!
//! `--generate N` continues the ids greedily for N tokens with a key/value
//! cache of static length (`kiln::nn::Generator` over the model's
//! `CausalLm` implementation): the prompt runs once, then each
//! step runs one position against the cached keys and values of the
//! earlier ones, written in place; the step's start is an input, so one
//! compiled program serves every step (two programs in all: the prompt's
//! length and 1).
//!
//! `crates/kiln/tests/nn.rs` includes this file and checks the model
//! against transformers' logits.

use std::path::{Path, PathBuf};

use kiln::nn::{
    Activation, Attention, AttentionConfig, CausalLm, Embedding, Generator, Linear, Module,
    RmsNorm, RotaryEmbedding, StaticKvCache, TracedModel, VarBuilder, VarStore, config_beside,
};
use kiln::{DType, Device, Error, ErrorKind, Result, Tensor, TensorSpec};

/// The fields of transformers' `LlamaConfig` the forward pass uses.
#[derive(Clone, Debug, PartialEq)]
pub struct LlamaConfig {
    pub vocab_size: i64,
    pub hidden_size: i64,
    pub intermediate_size: i64,
    pub num_hidden_layers: i64,
    pub num_attention_heads: i64,
    pub num_key_value_heads: i64,
    pub head_dim: i64,
    pub rms_norm_eps: f64,
    pub rope_theta: f64,
    pub attention_bias: bool,
    pub mlp_bias: bool,
    pub hidden_act: Activation,
}

impl LlamaConfig {
    /// Reads a transformers `config.json` (`rope_theta` at the top, or in
    /// `rope_parameters` as transformers 5 writes it; default rope only).
    pub fn from_json_file(path: &Path) -> Result<LlamaConfig> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Error::new(ErrorKind::Input, format!("{}: {e}", path.display())))?;
        let int = |key: &str| {
            json.get(key).and_then(|v| v.as_i64()).ok_or_else(|| {
                Error::new(
                    ErrorKind::Input,
                    format!("{}: no integer '{key}'", path.display()),
                )
            })
        };
        let flag = |key: &str| json.get(key).and_then(|v| v.as_bool()).unwrap_or(false);
        let rope = json
            .get("rope_parameters")
            .or_else(|| json.get("rope_scaling"));
        if let Some(kind) = rope
            .and_then(|r| r.get("rope_type").or_else(|| r.get("type")))
            .and_then(|t| t.as_str())
        {
            if kind != "default" {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!("{}: rope_type '{kind}' is not implemented", path.display()),
                ));
            }
        }
        let rope_theta = json
            .get("rope_theta")
            .or_else(|| rope.and_then(|r| r.get("rope_theta")))
            .and_then(|v| v.as_f64())
            .unwrap_or(10000.0);
        let hidden_size = int("hidden_size")?;
        let num_attention_heads = int("num_attention_heads")?;
        let head_dim = match json.get("head_dim") {
            Some(v) if !v.is_null() => int("head_dim")?,
            _ if num_attention_heads > 0 => hidden_size / num_attention_heads,
            _ => 0,
        };
        Ok(LlamaConfig {
            vocab_size: int("vocab_size")?,
            hidden_size,
            intermediate_size: int("intermediate_size")?,
            num_hidden_layers: int("num_hidden_layers")?,
            num_attention_heads,
            num_key_value_heads: int("num_key_value_heads").unwrap_or(num_attention_heads),
            head_dim,
            rms_norm_eps: json
                .get("rms_norm_eps")
                .and_then(|v| v.as_f64())
                .unwrap_or(1e-6),
            rope_theta,
            attention_bias: flag("attention_bias"),
            mlp_bias: flag("mlp_bias"),
            hidden_act: Activation::from_name(
                json.get("hidden_act")
                    .and_then(|v| v.as_str())
                    .unwrap_or("silu"),
            )?,
        })
    }
}

#[derive(Clone, Debug)]
struct Mlp {
    gate_proj: Linear,
    up_proj: Linear,
    down_proj: Linear,
    act: Activation,
}

impl Module for Mlp {
    fn forward(&self, x: &Tensor) -> Tensor {
        let gated = self.act.forward(&self.gate_proj.forward(x)) * self.up_proj.forward(x);
        self.down_proj.forward(&gated)
    }
}

#[derive(Clone, Debug)]
struct DecoderLayer {
    input_layernorm: RmsNorm,
    self_attn: Attention,
    post_attention_layernorm: RmsNorm,
    mlp: Mlp,
}

impl DecoderLayer {
    fn load(vb: &VarBuilder, c: &LlamaConfig) -> Result<DecoderLayer> {
        let h = c.hidden_size;
        let linear = |name: &str, i: i64, o: i64| {
            if c.mlp_bias {
                Linear::load(&vb.pp("mlp").pp(name), i, o)
            } else {
                Linear::load_no_bias(&vb.pp("mlp").pp(name), i, o)
            }
        };
        let attention = AttentionConfig::new(h, c.num_attention_heads)
            .num_kv_heads(c.num_key_value_heads)
            .head_dim(c.head_dim)
            .qkv_bias(c.attention_bias)
            .o_bias(c.attention_bias);
        Ok(DecoderLayer {
            input_layernorm: RmsNorm::load(&vb.pp("input_layernorm"), h, c.rms_norm_eps)?,
            self_attn: Attention::load(&vb.pp("self_attn"), &attention)?,
            post_attention_layernorm: RmsNorm::load(
                &vb.pp("post_attention_layernorm"),
                h,
                c.rms_norm_eps,
            )?,
            mlp: Mlp {
                gate_proj: linear("gate_proj", h, c.intermediate_size)?,
                up_proj: linear("up_proj", h, c.intermediate_size)?,
                down_proj: linear("down_proj", c.intermediate_size, h)?,
                act: c.hidden_act,
            },
        })
    }

    fn forward(&self, x: &Tensor, rotary: &RotaryEmbedding) -> Tensor {
        let attn =
            self.self_attn
                .forward_with(&self.input_layernorm.forward(x), Some(rotary), None);
        let x = x + attn;
        &x + self.mlp.forward(&self.post_attention_layernorm.forward(&x))
    }

    fn forward_static(
        &self,
        x: &Tensor,
        rotary: &RotaryEmbedding,
        cache: &StaticKvCache,
        start: &Tensor,
    ) -> (Tensor, StaticKvCache) {
        let (attn, cache) = self.self_attn.forward_static(
            &self.input_layernorm.forward(x),
            Some(rotary),
            cache,
            start,
        );
        let x = x + attn;
        let y = &x + self.mlp.forward(&self.post_attention_layernorm.forward(&x));
        (y, cache)
    }
}

/// Llama with its language-model head.
#[derive(Clone, Debug)]
pub struct Llama {
    embed_tokens: Embedding,
    layers: Vec<DecoderLayer>,
    norm: RmsNorm,
    lm_head: Linear,
    rotary: RotaryEmbedding,
    num_kv_heads: i64,
    head_dim: i64,
}

impl Llama {
    /// Loads `model.*` and `lm_head.weight` under `vb`.
    pub fn load(vb: &VarBuilder, config: &LlamaConfig) -> Result<Llama> {
        let m = vb.pp("model");
        let embed_tokens =
            Embedding::load(&m.pp("embed_tokens"), config.vocab_size, config.hidden_size)?;
        let lm_head = if vb.contains("lm_head.weight") {
            Linear::load_no_bias(&vb.pp("lm_head"), config.hidden_size, config.vocab_size)?
        } else {
            Linear::new(embed_tokens.weight().clone(), None)
        };
        let layers = (0..config.num_hidden_layers)
            .map(|i| DecoderLayer::load(&m.pp("layers").pp(i), config))
            .collect::<Result<_>>()?;
        Ok(Llama {
            embed_tokens,
            layers,
            norm: RmsNorm::load(&m.pp("norm"), config.hidden_size, config.rms_norm_eps)?,
            lm_head,
            rotary: RotaryEmbedding::new(config.head_dim, config.rope_theta)?,
            num_kv_heads: config.num_key_value_heads,
            head_dim: config.head_dim,
        })
    }

    /// Logits `[batch, len, vocab]` for `input_ids` `[batch, len]`.
    pub fn forward(&self, input_ids: &Tensor) -> Tensor {
        let mut x = self.embed_tokens.forward(input_ids);
        for layer in &self.layers {
            x = layer.forward(&x, &self.rotary);
        }
        self.lm_head.forward(&self.norm.forward(&x))
    }

    /// Traces the forward pass for `[batch, len]` int64 ids: the program
    /// takes `input_ids` and binds the weights itself.
    pub fn trace(&self, vs: &VarStore, batch: i64, len: i64) -> Result<TracedModel> {
        let spec = TensorSpec::new([batch, len], DType::I64).name("input_ids");
        vs.trace(&[spec], |xs| self.forward(&xs[0]))
    }
}

impl CausalLm for Llama {
    fn cache_shape(&self, max_len: i64) -> (usize, Vec<i64>) {
        (
            self.layers.len(),
            vec![1, self.num_kv_heads, max_len, self.head_dim],
        )
    }

    fn forward_static(
        &self,
        input_ids: &Tensor,
        start: &Tensor,
        caches: &[StaticKvCache],
    ) -> (Tensor, Vec<StaticKvCache>) {
        let mut x = self.embed_tokens.forward(input_ids);
        let mut written = Vec::with_capacity(self.layers.len());
        for (layer, cache) in self.layers.iter().zip(caches) {
            let (y, cache) = layer.forward_static(&x, &self.rotary, cache, start);
            x = y;
            written.push(cache);
        }
        (self.lm_head.forward(&self.norm.forward(&x)), written)
    }
}

fn main() -> Result<()> {
    let mut paths = Vec::new();
    let mut ids: Vec<i64> = vec![1, 15, 7, 42, 3, 99, 0, 23];
    let mut generate = 0usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--generate" {
            generate = args
                .next()
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| Error::new(ErrorKind::Input, "--generate needs a count"))?;
        } else if arg == "--ids" {
            let list = args
                .next()
                .ok_or_else(|| Error::new(ErrorKind::Input, "--ids needs a list: --ids 1,2,3"))?;
            ids = list
                .split(',')
                .map(|s| {
                    s.trim().parse::<i64>().map_err(|_| {
                        Error::new(ErrorKind::Input, format!("'{s}' is not a token id"))
                    })
                })
                .collect::<Result<_>>()?;
        } else {
            paths.push(PathBuf::from(arg));
        }
    }
    let model_path = paths.first().cloned().unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/nn/llama.safetensors")
    });
    let config_path = paths
        .get(1)
        .cloned()
        .unwrap_or_else(|| config_beside(&model_path));
    let config = LlamaConfig::from_json_file(&config_path)?;

    let vs = VarStore::load(&model_path)?;
    let model = Llama::load(&vs.root(), &config)?;
    let len = ids.len() as i64;
    let traced = model.trace(&vs, 1, len)?;
    let compiled = traced.compile(Device::CPU)?;
    let input = kiln::runtime::Tensor::from_vec(ids.clone(), &[1, len])?;
    let start = std::time::Instant::now();
    let logits = compiled.run(&[input])?.remove(0);
    println!(
        "Llama from {}: {} layers, {} heads ({} key/value), hidden {}, vocab {}; run {:.1} ms",
        model_path.display(),
        config.num_hidden_layers,
        config.num_attention_heads,
        config.num_key_value_heads,
        config.hidden_size,
        config.vocab_size,
        start.elapsed().as_secs_f64() * 1e3
    );
    println!("input ids {ids:?}");
    println!("logits {:?} {}", logits.shape(), logits.dtype());
    let values: Vec<f64> = logits.values().into_iter().map(|v| v.f64()).collect();
    let vocab = config.vocab_size as usize;
    let last = &values[values.len() - vocab..];
    println!("last position: logits[..8] {:?}", &last[..vocab.min(8)]);

    if generate > 0 {
        let dtype = vs.dtype().unwrap_or(DType::F32);
        let max_len = ids.len() as i64 + generate as i64;
        let mut generator = Generator::new(&model, &vs, dtype, max_len)?;
        let start = std::time::Instant::now();
        let generated = generator.generate(&ids, generate)?;
        println!(
            "greedy continuation {generated:?} ({:.1} ms; a static cache of {max_len} positions, {} programs compiled)",
            start.elapsed().as_secs_f64() * 1e3,
            generator.programs()
        );
    }
    Ok(())
}
