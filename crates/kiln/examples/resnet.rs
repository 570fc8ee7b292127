//! ResNet written with `kiln::nn`: torchvision's `ResNet` (ResNet-18, 34,
//! 50, 101, 152, and the ResNeXt and wide variants, which differ only in
//! their bottlenecks' widths and groups) loaded from a safetensors file of
//! its `state_dict`, traced, compiled and run on images.
//!
//! ```text
//! cargo run -p kiln --example resnet --release                    # ResNet-18, random weights
//! cargo run -p kiln --example resnet --release -- resnet50.safetensors --batch 8
//! cargo run -p kiln --example resnet --release -- w.safetensors --input x.safetensors --output y.safetensors
//! ```
//!
//! A torchvision checkpoint becomes a safetensors file with
//! `safetensors.torch.save_file(torchvision.models.resnet18(weights="DEFAULT").state_dict(), "resnet18.safetensors")`.
//! The architecture is read from the names and shapes in the file: the
//! blocks per stage (`layer1.0`, `layer1.1`, ...), bottleneck blocks where
//! `layer1.0.conv3.weight` exists, their widths and groups from the 3×3
//! convolutions' shapes, the classes from `fc.weight`. The model is
//! torchvision's: a 7×7/2 convolution, batch norm, ReLU and a 3×3/2 max
//! pool; four stages of blocks whose first block may downsample (a strided
//! 1×1 convolution and batch norm on the shortcut; torchvision's v1.5
//! bottleneck strides its 3×3 convolution); a global average pool and
//! `fc`. Batch norm runs in eval mode with the running statistics.
//!
//! `--input` takes a safetensors file with a float32 tensor `input`
//! `[batch, 3, height, width]`; `--output` writes the logits as `logits`.
//! `python/tests/test_nn_examples.py` runs this binary on torchvision's
//! ResNet-18 with random weights and compares the logits with PyTorch's;
//! `crates/kiln/tests/nn.rs` checks one block against torchvision's
//! `BasicBlock` without torch.

use clap::Parser;

#[path = "support/classify.rs"]
mod classify;
#[path = "support/random_weights.rs"]
mod random_weights;
use kiln::nn::{
    AdaptiveAvgPool2d, BatchNorm2d, Conv2d, Linear, MaxPool2d, Module, TracedModel, VarBuilder,
    VarStore,
};
use kiln::{ConvOptions, DType, Error, ErrorKind, PoolOptions, Result, Tensor, TensorSpec};
use random_weights::RandomWeights;

/// torchvision's BatchNorm2d epsilon.
const EPS: f64 = 1e-5;

/// A convolution without bias followed by its batch norm (every
/// convolution of a ResNet is one).
#[derive(Clone, Debug)]
pub struct ConvBn {
    conv: Conv2d,
    bn: BatchNorm2d,
}

impl ConvBn {
    /// `conv{suffix}.weight` `[cout, cin/groups, k, k]` and `bn{suffix}.*` under `vb`.
    fn load(
        vb: &VarBuilder,
        (conv, bn): (&str, &str),
        (cin, cout, k): (i64, i64, i64),
        options: ConvOptions,
    ) -> Result<ConvBn> {
        Ok(ConvBn {
            conv: Conv2d::load(&vb.pp(conv), cin, cout, [k, k], options, false)?,
            bn: BatchNorm2d::load(&vb.pp(bn), cout, EPS)?,
        })
    }
}

impl Module for ConvBn {
    fn forward(&self, x: &Tensor) -> Tensor {
        self.bn.forward(&self.conv.forward(x))
    }
}

/// One residual block: torchvision's `BasicBlock` (two 3×3 convolutions)
/// or `Bottleneck` (1×1 down to `width`, 3×3 with the stride and groups,
/// 1×1 up to four times the stage's planes).
#[derive(Clone, Debug)]
pub struct Block {
    convs: Vec<ConvBn>,
    downsample: Option<ConvBn>,
}

impl Block {
    /// The block under `vb` (`layerN.i`), from `cin` channels, for a stage
    /// of `planes` with this `stride`; bottlenecks read their width and
    /// groups from the checkpoint's shapes.
    pub fn load(
        vb: &VarBuilder,
        cin: i64,
        planes: i64,
        stride: i64,
        bottleneck: bool,
    ) -> Result<(Block, i64)> {
        let same = |s: i64| ConvOptions::default().stride(&[s]).padding(&[1]);
        let (convs, cout) = if bottleneck {
            let width = *vb.shape_of("conv1.weight")?.first().unwrap_or(&planes);
            let per_group = vb
                .shape_of("conv2.weight")?
                .get(1)
                .copied()
                .unwrap_or(width);
            let groups = if per_group > 0 && width % per_group == 0 {
                width / per_group
            } else {
                return Err(Error::new(
                    ErrorKind::Input,
                    format!(
                        "{}: conv2.weight takes {per_group} channels per group, which does not divide its {width} channels",
                        vb.prefix()
                    ),
                ));
            };
            let cout = planes * 4;
            let convs = vec![
                ConvBn::load(
                    vb,
                    ("conv1", "bn1"),
                    (cin, width, 1),
                    ConvOptions::default(),
                )?,
                ConvBn::load(
                    vb,
                    ("conv2", "bn2"),
                    (width, width, 3),
                    same(stride).groups(groups),
                )?,
                ConvBn::load(
                    vb,
                    ("conv3", "bn3"),
                    (width, cout, 1),
                    ConvOptions::default(),
                )?,
            ];
            (convs, cout)
        } else {
            let convs = vec![
                ConvBn::load(vb, ("conv1", "bn1"), (cin, planes, 3), same(stride))?,
                ConvBn::load(vb, ("conv2", "bn2"), (planes, planes, 3), same(1))?,
            ];
            (convs, planes)
        };
        // torchvision adds the shortcut's convolution exactly when the
        // block changes the resolution or the channels.
        let downsample = if stride != 1 || cin != cout {
            let options = ConvOptions::default().stride(&[stride]);
            Some(ConvBn::load(
                vb,
                ("downsample.0", "downsample.1"),
                (cin, cout, 1),
                options,
            )?)
        } else {
            None
        };
        Ok((Block { convs, downsample }, cout))
    }
}

impl Module for Block {
    fn forward(&self, x: &Tensor) -> Tensor {
        let last = self.convs.len() - 1;
        let mut y = x.clone();
        for (i, conv) in self.convs.iter().enumerate() {
            y = conv.forward(&y);
            if i != last {
                y = y.relu();
            }
        }
        let identity = match &self.downsample {
            Some(down) => down.forward(x),
            None => x.clone(),
        };
        (&y + &identity).relu()
    }
}

/// A ResNet as torchvision builds it.
#[derive(Clone, Debug)]
pub struct ResNet {
    stem: ConvBn,
    maxpool: MaxPool2d,
    stages: Vec<Vec<Block>>,
    avgpool: AdaptiveAvgPool2d,
    fc: Linear,
    /// Blocks per stage, as read from the checkpoint.
    pub blocks: [usize; 4],
    /// Whether the blocks are bottlenecks (ResNet-50 and deeper).
    pub bottleneck: bool,
    /// Output classes (`fc.weight`'s rows).
    pub num_classes: i64,
}

impl ResNet {
    /// Loads the model whose parameters are under `vb`, its architecture
    /// read from the names and shapes present.
    pub fn load(vb: &VarBuilder) -> Result<ResNet> {
        let bottleneck = vb.contains("layer1.0.conv3.weight");
        let mut blocks = [0usize; 4];
        for (stage, count) in blocks.iter_mut().enumerate() {
            while vb.contains(&format!("layer{}.{}.conv1.weight", stage + 1, *count)) {
                *count += 1;
            }
            if *count == 0 {
                return Err(Error::new(
                    ErrorKind::Input,
                    format!(
                        "{}: no layer{}.0.conv1.weight: not a torchvision ResNet state_dict",
                        vb.store().source(),
                        stage + 1
                    ),
                ));
            }
        }
        let stem_options = ConvOptions::default().stride(&[2]).padding(&[3]);
        let stem = ConvBn::load(vb, ("conv1", "bn1"), (3, 64, 7), stem_options)?;
        let mut cin = 64;
        let mut stages = Vec::new();
        for (stage, &count) in blocks.iter().enumerate() {
            let planes = 64 << stage;
            let vb = vb.pp(format!("layer{}", stage + 1));
            let mut layer = Vec::new();
            for i in 0..count {
                let stride = if stage > 0 && i == 0 { 2 } else { 1 };
                let (block, cout) = Block::load(&vb.pp(i), cin, planes, stride, bottleneck)?;
                layer.push(block);
                cin = cout;
            }
            stages.push(layer);
        }
        let num_classes = *vb.shape_of("fc.weight")?.first().unwrap_or(&1000);
        Ok(ResNet {
            stem,
            maxpool: MaxPool2d::new(PoolOptions::new(&[3]).stride(&[2]).padding(&[1])),
            stages,
            avgpool: AdaptiveAvgPool2d::new([1, 1]),
            fc: Linear::load(&vb.pp("fc"), cin, num_classes)?,
            blocks,
            bottleneck,
            num_classes,
        })
    }

    /// Traces the model for `batch` images of `size`×`size` pixels: the
    /// program takes `input` (f32 `[batch, 3, size, size]`) and returns the
    /// logits `[batch, num_classes]`.
    pub fn trace(&self, vs: &VarStore, batch: i64, size: [i64; 2]) -> Result<TracedModel> {
        let spec = TensorSpec::new([batch, 3, size[0], size[1]], DType::F32).name("input");
        vs.trace(&[spec], |xs| self.forward(&xs[0]))
    }
}

impl Module for ResNet {
    fn forward(&self, x: &Tensor) -> Tensor {
        let mut x = self.maxpool.forward(&self.stem.forward(x).relu());
        for block in self.stages.iter().flatten() {
            x = block.forward(&x);
        }
        self.fc.forward(&self.avgpool.forward(&x).flatten(1, -1))
    }
}

/// ResNet-18's parameters in torchvision's names, filled with a fixed
/// pseudo-random draw (He-scaled convolutions, batch-norm statistics near
/// their initial values): the demo runs without a download.
pub fn random_resnet18(num_classes: i64) -> Result<VarStore> {
    let mut w = RandomWeights::new(18);
    w.conv_bn(("conv1", "bn1"), [64, 3, 7, 7])?;
    let mut cin = 64;
    for stage in 0..4 {
        let planes = 64 << stage;
        for i in 0..2 {
            let p = format!("layer{}.{i}", stage + 1);
            let n = |s: &str| format!("{p}.{s}");
            w.conv_bn((&n("conv1"), &n("bn1")), [planes, cin, 3, 3])?;
            w.conv_bn((&n("conv2"), &n("bn2")), [planes, planes, 3, 3])?;
            if stage > 0 && i == 0 {
                w.conv_bn(
                    (&n("downsample.0"), &n("downsample.1")),
                    [planes, cin, 1, 1],
                )?;
            }
            cin = planes;
        }
    }
    let scale = 1.0 / (cin as f32).sqrt();
    w.add("fc.weight", &[num_classes, cin], 0.0, scale)?;
    w.add("fc.bias", &[num_classes], 0.0, scale)?;
    Ok(w.into_store("random ResNet-18"))
}

fn main() -> Result<()> {
    let args = classify::Args::parse();
    let vs = match &args.checkpoint {
        Some(path) => VarStore::load(path)?,
        None => random_resnet18(1000)?,
    };
    let model = ResNet::load(&vs.root())?;
    let depth = model.blocks.iter().sum::<usize>() * if model.bottleneck { 3 } else { 2 } + 2;
    classify::run(
        &args,
        &format!("ResNet-{depth}"),
        &vs,
        model.num_classes,
        |batch, size| model.trace(&vs, batch, size),
    )
}
