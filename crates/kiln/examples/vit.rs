//! ViT written with `kiln::nn`: loads a safetensors checkpoint in Hugging
//! Face naming, traces the encoder on images, compiles it and prints the
//! pooled output.
//!
//! ```text
//! cargo run -p kiln --example vit --release                      # the tiny test model
//! cargo run -p kiln --example vit --release -- model.safetensors [config.json]
//! ```
//!
//! The model follows transformers' `ViTModel`: patches embedded by a
//! convolution of the patch's size and stride
//! (`embeddings.patch_embeddings.projection`), the `[CLS]` token in front,
//! learned position embeddings added; pre-norm layers (`layernorm_before`,
//! self-attention with `q_proj`/`k_proj`/`v_proj`/`o_proj` — `kiln::nn`'s
//! `Attention`, not causal — `layernorm_after`, an MLP `fc1`, gelu, `fc2`);
//! a final `layernorm` and the pooler (`pooler.dense` and tanh on the
//! `[CLS]` position). The config comes from the JSON file given, else
//! `config.json` beside the checkpoint, else `<stem>_config.json`. Names
//! may carry the `vit.` prefix (a saved classification model) or not.
//!
//! `crates/kiln/tests/nn.rs` includes this file and checks the model
//! against transformers' outputs.

use std::path::{Path, PathBuf};

use kiln::nn::{
    Activation, Attention, AttentionConfig, Conv2d, LayerNorm, Linear, Module, Param, TracedModel,
    VarBuilder, VarStore, config_beside,
};
use kiln::{ConvOptions, DType, Device, Error, ErrorKind, Result, Tensor, TensorSpec, cat};

/// The fields of transformers' `ViTConfig` the encoder uses.
#[derive(Clone, Debug, PartialEq)]
pub struct VitConfig {
    pub image_size: i64,
    pub patch_size: i64,
    pub num_channels: i64,
    pub hidden_size: i64,
    pub num_hidden_layers: i64,
    pub num_attention_heads: i64,
    pub intermediate_size: i64,
    pub layer_norm_eps: f64,
    pub qkv_bias: bool,
    pub hidden_act: Activation,
}

impl VitConfig {
    /// Reads transformers' `config.json`.
    pub fn from_json_file(path: &Path) -> Result<VitConfig> {
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
        Ok(VitConfig {
            image_size: int("image_size")?,
            patch_size: int("patch_size")?,
            num_channels: json["num_channels"].as_i64().unwrap_or(3),
            hidden_size: int("hidden_size")?,
            num_hidden_layers: int("num_hidden_layers")?,
            num_attention_heads: int("num_attention_heads")?,
            intermediate_size: int("intermediate_size")?,
            layer_norm_eps: json["layer_norm_eps"].as_f64().unwrap_or(1e-12),
            qkv_bias: json["qkv_bias"].as_bool().unwrap_or(true),
            hidden_act: Activation::from_name(json["hidden_act"].as_str().unwrap_or("gelu"))?,
        })
    }
}

#[derive(Clone, Debug)]
struct Layer {
    layernorm_before: LayerNorm,
    attention: Attention,
    layernorm_after: LayerNorm,
    fc1: Linear,
    activation: Activation,
    fc2: Linear,
}

impl Layer {
    fn load(vb: &VarBuilder, c: &VitConfig) -> Result<Layer> {
        let (h, eps) = (c.hidden_size, c.layer_norm_eps);
        let attention = AttentionConfig::new(h, c.num_attention_heads)
            .qkv_bias(c.qkv_bias)
            .o_bias(true)
            .causal(false);
        Ok(Layer {
            layernorm_before: LayerNorm::load(&vb.pp("layernorm_before"), h, eps)?,
            attention: Attention::load(&vb.pp("attention"), &attention)?,
            layernorm_after: LayerNorm::load(&vb.pp("layernorm_after"), h, eps)?,
            fc1: Linear::load(&vb.pp("mlp.fc1"), h, c.intermediate_size)?,
            activation: c.hidden_act,
            fc2: Linear::load(&vb.pp("mlp.fc2"), c.intermediate_size, h)?,
        })
    }
}

impl Module for Layer {
    fn forward(&self, x: &Tensor) -> Tensor {
        let x = x + self.attention.forward(&self.layernorm_before.forward(x));
        let h = self
            .activation
            .forward(&self.fc1.forward(&self.layernorm_after.forward(&x)));
        &x + self.fc2.forward(&h)
    }
}

/// ViT's encoder and pooler.
#[derive(Clone, Debug)]
pub struct Vit {
    patch_embeddings: Conv2d,
    cls_token: Param,
    position_embeddings: Param,
    layers: Vec<Layer>,
    layernorm: LayerNorm,
    pooler: Linear,
    config: VitConfig,
}

impl Vit {
    /// Loads the parameters under `vb` (under `vit.` when the checkpoint's
    /// names have that prefix).
    pub fn load(vb: &VarBuilder, c: &VitConfig) -> Result<Vit> {
        if c.patch_size <= 0 || c.image_size % c.patch_size != 0 {
            return Err(Error::new(
                ErrorKind::Attribute,
                format!(
                    "image_size {} is not a multiple of patch_size {}",
                    c.image_size, c.patch_size
                ),
            ));
        }
        let vb = if vb.contains("vit.embeddings.cls_token") {
            vb.pp("vit")
        } else {
            vb.clone()
        };
        let e = vb.pp("embeddings");
        let h = c.hidden_size;
        let patches = (c.image_size / c.patch_size).pow(2);
        let options = ConvOptions {
            stride: vec![c.patch_size],
            ..ConvOptions::default()
        };
        Ok(Vit {
            patch_embeddings: Conv2d::load(
                &e.pp("patch_embeddings.projection"),
                c.num_channels,
                h,
                [c.patch_size, c.patch_size],
                options,
                true,
            )?,
            cls_token: e.get("cls_token", &[1, 1, h])?,
            position_embeddings: e.get("position_embeddings", &[1, patches + 1, h])?,
            layers: (0..c.num_hidden_layers)
                .map(|i| Layer::load(&vb.pp("layers").pp(i), c))
                .collect::<Result<_>>()?,
            layernorm: LayerNorm::load(&vb.pp("layernorm"), h, c.layer_norm_eps)?,
            pooler: Linear::load(&vb.pp("pooler.dense"), h, h)?,
            config: c.clone(),
        })
    }

    /// `last_hidden_state` `[batch, patches + 1, hidden]` and
    /// `pooler_output` `[batch, hidden]` for `pixel_values` `[batch,
    /// channels, image_size, image_size]`.
    pub fn forward(&self, pixel_values: &Tensor) -> (Tensor, Tensor) {
        let batch = pixel_values
            .shape()
            .and_then(|s| s.first().copied())
            .unwrap_or(1);
        // [batch, hidden, rows, cols] → [batch, patches, hidden].
        let patches = self
            .patch_embeddings
            .forward(pixel_values)
            .flatten(2, -1)
            .transpose(1, 2);
        let cls = self
            .cls_token
            .tensor()
            .expand(&[batch, 1, self.config.hidden_size]);
        let mut x = cat(&[&cls, &patches], 1) + self.position_embeddings.tensor();
        for layer in &self.layers {
            x = layer.forward(&x);
        }
        let x = self.layernorm.forward(&x);
        let pooled = self.pooler.forward(&x.select(1, 0)).tanh();
        (x, pooled)
    }

    /// Traces the encoder for `batch` images: the program takes
    /// `pixel_values` (f32) and binds the weights itself; its results are
    /// the hidden states and the pooled output.
    pub fn trace(&self, vs: &VarStore, batch: i64) -> Result<TracedModel> {
        let c = &self.config;
        let spec = TensorSpec::new(
            [batch, c.num_channels, c.image_size, c.image_size],
            DType::F32,
        )
        .name("pixel_values");
        vs.trace(&[spec], |xs| {
            let (hidden, pooled) = self.forward(&xs[0]);
            vec![hidden, pooled]
        })
    }
}

fn main() -> Result<()> {
    let paths: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let model_path = paths.first().cloned().unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/nn/vit.safetensors")
    });
    let config_path = paths
        .get(1)
        .cloned()
        .unwrap_or_else(|| config_beside(&model_path));
    let config = VitConfig::from_json_file(&config_path)?;
    let vs = VarStore::load(&model_path)?;
    let model = Vit::load(&vs.root(), &config)?;
    let compiled = model.trace(&vs, 1)?.compile(Device::CPU)?;
    // A gradient image: pixel (c, y, x) is (c + y + x) / size − 1.
    let s = config.image_size;
    let pixels: Vec<f32> = (0..config.num_channels * s * s)
        .map(|i| ((i / (s * s)) + (i / s) % s + i % s) as f32 / s as f32 - 1.0)
        .collect();
    let image = kiln::runtime::Tensor::from_vec(pixels, &[1, config.num_channels, s, s])?;
    let start = std::time::Instant::now();
    let outputs = compiled.run(&[image])?;
    println!(
        "ViT from {}: {} layers, {} heads, hidden {}, {}x{} images in {}x{} patches; run {:.1} ms",
        model_path.display(),
        config.num_hidden_layers,
        config.num_attention_heads,
        config.hidden_size,
        s,
        s,
        config.patch_size,
        config.patch_size,
        start.elapsed().as_secs_f64() * 1e3
    );
    let pooled: Vec<f64> = outputs[1].values().into_iter().map(|v| v.f64()).collect();
    println!(
        "hidden states {:?}, pooled output[..8] {:?}",
        outputs[0].shape(),
        &pooled[..pooled.len().min(8)]
    );
    Ok(())
}
