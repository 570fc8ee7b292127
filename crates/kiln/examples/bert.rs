//! BERT written with `kiln::nn`: loads a safetensors checkpoint in Hugging
//! Face naming, traces the encoder with its padding mask, compiles it and
//! prints the pooled output.
//!
//! ```text
//! cargo run -p kiln --example bert --release                      # the tiny test model
//! cargo run -p kiln --example bert --release -- model.safetensors [config.json] [--ids 101,2023,102]
//! ```
//!
//! The model follows transformers' `BertModel`: word, position and token
//! type embeddings summed and normalized (`embeddings.*`), layers of
//! self-attention (`attention.self.{query,key,value}`, then
//! `attention.output.dense` with a residual `LayerNorm`), an MLP
//! (`intermediate.dense`, gelu, `output.dense`, residual `LayerNorm`), and
//! the pooler (`pooler.dense` and tanh on the first position). The
//! `attention_mask` (1: a token, 0: padding) keeps every position from
//! attending to padding, as transformers' extended mask does; the config
//! comes from the JSON file given, else `config.json` beside the
//! checkpoint, else `<stem>_config.json`. Names may carry the `bert.`
//! prefix (a saved task model) or not.
//!
//! `crates/kiln/tests/nn.rs` includes this file and checks the model
//! against transformers' outputs.

use std::path::{Path, PathBuf};

use kiln::nn::{
    Activation, Embedding, LayerNorm, Linear, Module, TracedModel, VarBuilder, VarStore,
    config_beside, merge_heads, split_heads,
};
use kiln::{AttentionOptions, DType, Device, Error, ErrorKind, Result, Tensor, TensorSpec};

/// The fields of transformers' `BertConfig` the encoder uses.
#[derive(Clone, Debug, PartialEq)]
pub struct BertConfig {
    pub vocab_size: i64,
    pub hidden_size: i64,
    pub num_hidden_layers: i64,
    pub num_attention_heads: i64,
    pub intermediate_size: i64,
    pub max_position_embeddings: i64,
    pub type_vocab_size: i64,
    pub layer_norm_eps: f64,
    pub hidden_act: Activation,
}

impl BertConfig {
    /// Reads transformers' `config.json`.
    pub fn from_json_file(path: &Path) -> Result<BertConfig> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| Error::new(ErrorKind::Input, format!("{}: {e}", path.display())))?;
        let int = |key: &str| {
            json[key].as_i64().ok_or_else(|| {
                Error::new(
                    ErrorKind::Input,
                    format!("{}: '{key}' must be an integer", path.display()),
                )
            })
        };
        let act = json["hidden_act"].as_str().unwrap_or("gelu");
        Ok(BertConfig {
            vocab_size: int("vocab_size")?,
            hidden_size: int("hidden_size")?,
            num_hidden_layers: int("num_hidden_layers")?,
            num_attention_heads: int("num_attention_heads")?,
            intermediate_size: int("intermediate_size")?,
            max_position_embeddings: int("max_position_embeddings")?,
            type_vocab_size: int("type_vocab_size")?,
            layer_norm_eps: json["layer_norm_eps"].as_f64().unwrap_or(1e-12),
            hidden_act: Activation::from_name(act)?,
        })
    }
}

/// A projection followed by a residual add and `LayerNorm` (BERT's
/// `*.output` blocks).
#[derive(Clone, Debug)]
struct AddNorm {
    dense: Linear,
    norm: LayerNorm,
}

impl AddNorm {
    fn load(vb: &VarBuilder, n_in: i64, n_out: i64, eps: f64) -> Result<AddNorm> {
        Ok(AddNorm {
            dense: Linear::load(&vb.pp("dense"), n_in, n_out)?,
            norm: LayerNorm::load(&vb.pp("LayerNorm"), n_out, eps)?,
        })
    }

    fn forward(&self, x: &Tensor, residual: &Tensor) -> Tensor {
        self.norm.forward(&(self.dense.forward(x) + residual))
    }
}

#[derive(Clone, Debug)]
struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attention_output: AddNorm,
    intermediate: Linear,
    activation: Activation,
    output: AddNorm,
    heads: i64,
}

impl Layer {
    fn load(vb: &VarBuilder, c: &BertConfig) -> Result<Layer> {
        let (h, i, eps) = (c.hidden_size, c.intermediate_size, c.layer_norm_eps);
        let attn = vb.pp("attention");
        Ok(Layer {
            query: Linear::load(&attn.pp("self.query"), h, h)?,
            key: Linear::load(&attn.pp("self.key"), h, h)?,
            value: Linear::load(&attn.pp("self.value"), h, h)?,
            attention_output: AddNorm::load(&attn.pp("output"), h, h, eps)?,
            intermediate: Linear::load(&vb.pp("intermediate.dense"), h, i)?,
            activation: c.hidden_act,
            output: AddNorm::load(&vb.pp("output"), i, h, eps)?,
            heads: c.num_attention_heads,
        })
    }

    /// `mask`: bool, `[batch, 1, 1, len]`, true where a key is a token.
    fn forward(&self, x: &Tensor, mask: &Tensor) -> Tensor {
        let [q, k, v] =
            [&self.query, &self.key, &self.value].map(|p| split_heads(&p.forward(x), self.heads));
        let y = q.scaled_dot_product_attention(&k, &v, Some(mask), AttentionOptions::default());
        let x = self.attention_output.forward(&merge_heads(&y), x);
        let h = self.activation.forward(&self.intermediate.forward(&x));
        self.output.forward(&h, &x)
    }
}

/// BERT's encoder and pooler.
#[derive(Clone, Debug)]
pub struct Bert {
    word_embeddings: Embedding,
    position_embeddings: Embedding,
    token_type_embeddings: Embedding,
    embeddings_norm: LayerNorm,
    layers: Vec<Layer>,
    pooler: Linear,
}

impl Bert {
    /// Loads the parameters under `vb` (under `bert.` when the
    /// checkpoint's names have that prefix).
    pub fn load(vb: &VarBuilder, c: &BertConfig) -> Result<Bert> {
        if c.num_attention_heads <= 0 || c.hidden_size % c.num_attention_heads != 0 {
            return Err(Error::new(
                ErrorKind::Attribute,
                format!(
                    "hidden_size {} is not divisible by {} heads",
                    c.hidden_size, c.num_attention_heads
                ),
            ));
        }
        let vb = if vb.contains("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb.clone()
        };
        let e = vb.pp("embeddings");
        let h = c.hidden_size;
        Ok(Bert {
            word_embeddings: Embedding::load(&e.pp("word_embeddings"), c.vocab_size, h)?,
            position_embeddings: Embedding::load(
                &e.pp("position_embeddings"),
                c.max_position_embeddings,
                h,
            )?,
            token_type_embeddings: Embedding::load(
                &e.pp("token_type_embeddings"),
                c.type_vocab_size,
                h,
            )?,
            embeddings_norm: LayerNorm::load(&e.pp("LayerNorm"), h, c.layer_norm_eps)?,
            layers: (0..c.num_hidden_layers)
                .map(|i| Layer::load(&vb.pp("encoder.layer").pp(i), c))
                .collect::<Result<_>>()?,
            pooler: Linear::load(&vb.pp("pooler.dense"), h, h)?,
        })
    }

    /// `last_hidden_state` `[batch, len, hidden]` and `pooler_output`
    /// `[batch, hidden]` for int64 `input_ids`, `token_type_ids` and
    /// `attention_mask` (`[batch, len]` each).
    pub fn forward(
        &self,
        input_ids: &Tensor,
        token_type_ids: &Tensor,
        attention_mask: &Tensor,
    ) -> (Tensor, Tensor) {
        let len = input_ids
            .shape()
            .and_then(|s| s.last().copied())
            .unwrap_or(0);
        let positions = kiln::arange(0, len, 1, Some(DType::I64));
        let x = self.word_embeddings.forward(input_ids)
            + self.position_embeddings.forward(&positions)
            + self.token_type_embeddings.forward(token_type_ids);
        let mut x = self.embeddings_norm.forward(&x);
        // Keys that are tokens, for every query: [batch, 1, 1, len].
        let mask = attention_mask
            .to_dtype(DType::Bool)
            .unsqueeze(1)
            .unsqueeze(1);
        for layer in &self.layers {
            x = layer.forward(&x, &mask);
        }
        let first = x.select(1, 0);
        let pooled = self.pooler.forward(&first).tanh();
        (x, pooled)
    }

    /// Traces the encoder for `[batch, len]` inputs: the program takes
    /// `input_ids`, `token_type_ids` and `attention_mask` (int64) and binds
    /// the weights itself; its results are the hidden states and the
    /// pooled output.
    pub fn trace(&self, vs: &VarStore, batch: i64, len: i64) -> Result<TracedModel> {
        let specs = ["input_ids", "token_type_ids", "attention_mask"]
            .map(|name| TensorSpec::new([batch, len], DType::I64).name(name));
        vs.trace(&specs, |xs| {
            let (hidden, pooled) = self.forward(&xs[0], &xs[1], &xs[2]);
            vec![hidden, pooled]
        })
    }
}

fn main() -> Result<()> {
    let mut paths = Vec::new();
    let mut ids: Vec<i64> = vec![1, 15, 7, 42, 3, 99, 0, 23];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--ids" {
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
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/nn/bert.safetensors")
    });
    let config_path = paths
        .get(1)
        .cloned()
        .unwrap_or_else(|| config_beside(&model_path));
    let config = BertConfig::from_json_file(&config_path)?;
    let vs = VarStore::load(&model_path)?;
    let model = Bert::load(&vs.root(), &config)?;
    let len = ids.len() as i64;
    let compiled = model.trace(&vs, 1, len)?.compile(Device::CPU)?;
    let host = |v: Vec<i64>| kiln::runtime::Tensor::from_vec(v, &[1, len]);
    let inputs = [
        host(ids.clone())?,
        host(vec![0; ids.len()])?,
        host(vec![1; ids.len()])?,
    ];
    let start = std::time::Instant::now();
    let outputs = compiled.run(&inputs)?;
    println!(
        "BERT from {}: {} layers, {} heads, hidden {}; run {:.1} ms",
        model_path.display(),
        config.num_hidden_layers,
        config.num_attention_heads,
        config.hidden_size,
        start.elapsed().as_secs_f64() * 1e3
    );
    println!("input ids {ids:?}");
    let pooled: Vec<f64> = outputs[1].values().into_iter().map(|v| v.f64()).collect();
    println!(
        "hidden states {:?}, pooled output[..8] {:?}",
        outputs[0].shape(),
        &pooled[..pooled.len().min(8)]
    );
    Ok(())
}
