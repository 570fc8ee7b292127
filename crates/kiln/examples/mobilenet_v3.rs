//! MobileNetV3 written with `kiln::nn`: torchvision's `mobilenet_v3_small`
//! and `mobilenet_v3_large` loaded from a safetensors file of their
//! `state_dict`, traced, compiled and run on images.
//!
//! ```text
//! cargo run -p kiln --example mobilenet_v3 --release                   # small, random weights
//! cargo run -p kiln --example mobilenet_v3 --release -- w.safetensors --input x.safetensors --output y.safetensors
//! ```
//!
//! The model is torchvision's: a 3×3/2 convolution to 16 channels with
//! batch norm and hardswish (`features.0`); inverted residual blocks
//! (`features.1` to `features.11` for the small model, `.15` for the
//! large), each an optional 1×1 expansion, a depthwise k×k convolution
//! (with the block's stride), an optional squeeze-and-excitation (global
//! average pool, 1×1 convolutions `fc1` and `fc2` with ReLU between,
//! hardsigmoid, times the input) and a 1×1 projection without activation,
//! plus the input when the stride is 1 and the channels are kept; a 1×1
//! convolution with hardswish; the global average pool; the classifier
//! (`classifier.0`, hardswish, dropout, `classifier.3`). Batch norms take
//! torchvision's ε = 0.001.
//!
//! Channels, kernel sizes and which blocks expand or squeeze come from the
//! checkpoint's shapes; the strides and activations are torchvision's
//! table for the variant (known by its number of blocks), the one thing a
//! state_dict does not say. `python/tests/test_nn_examples.py` runs this
//! binary on both torchvision models with random weights and compares the
//! logits with PyTorch's.

use clap::Parser;

#[path = "support/classify.rs"]
mod classify;
#[path = "support/random_weights.rs"]
mod random_weights;
use random_weights::RandomWeights;

use kiln::nn::{
    AdaptiveAvgPool2d, BatchNorm2d, Conv2d, Linear, Module, TracedModel, VarBuilder, VarStore,
};
use kiln::{ConvOptions, DType, Error, ErrorKind, Result, Tensor, TensorSpec};

/// torchvision's MobileNetV3 batch-norm epsilon.
const EPS: f64 = 0.001;

/// One inverted residual block of torchvision's table: kernel, expanded
/// channels, output channels, squeeze-and-excitation, hardswish (else
/// ReLU), stride.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockConfig {
    pub kernel: i64,
    pub expanded: i64,
    pub out: i64,
    pub se: bool,
    pub hardswish: bool,
    pub stride: i64,
}

const fn b(kernel: i64, expanded: i64, out: i64, se: bool, hs: bool, stride: i64) -> BlockConfig {
    BlockConfig {
        kernel,
        expanded,
        out,
        se,
        hardswish: hs,
        stride,
    }
}

/// `mobilenet_v3_small`'s blocks (torchvision's `_mobilenet_v3_conf`).
pub const SMALL: [BlockConfig; 11] = [
    b(3, 16, 16, true, false, 2),
    b(3, 72, 24, false, false, 2),
    b(3, 88, 24, false, false, 1),
    b(5, 96, 40, true, true, 2),
    b(5, 240, 40, true, true, 1),
    b(5, 240, 40, true, true, 1),
    b(5, 120, 48, true, true, 1),
    b(5, 144, 48, true, true, 1),
    b(5, 288, 96, true, true, 2),
    b(5, 576, 96, true, true, 1),
    b(5, 576, 96, true, true, 1),
];

/// `mobilenet_v3_large`'s blocks.
pub const LARGE: [BlockConfig; 15] = [
    b(3, 16, 16, false, false, 1),
    b(3, 64, 24, false, false, 2),
    b(3, 72, 24, false, false, 1),
    b(5, 72, 40, true, false, 2),
    b(5, 120, 40, true, false, 1),
    b(5, 120, 40, true, false, 1),
    b(3, 240, 80, false, true, 2),
    b(3, 200, 80, false, true, 1),
    b(3, 184, 80, false, true, 1),
    b(3, 184, 80, false, true, 1),
    b(3, 480, 112, true, true, 1),
    b(3, 672, 112, true, true, 1),
    b(5, 672, 160, true, true, 2),
    b(5, 960, 160, true, true, 1),
    b(5, 960, 160, true, true, 1),
];

/// torchvision's `_make_divisible(v, 8)`: the squeeze width.
fn make_divisible(v: i64) -> i64 {
    let rounded = ((v + 4) / 8 * 8).max(8);
    if (rounded as f64) < 0.9 * v as f64 {
        rounded + 8
    } else {
        rounded
    }
}

/// A convolution, its batch norm, and an activation (torchvision's
/// `Conv2dNormActivation`: `.0` and `.1`).
#[derive(Clone, Debug)]
struct ConvBnAct {
    conv: Conv2d,
    bn: BatchNorm2d,
    act: Option<fn(&Tensor) -> Tensor>,
}

impl ConvBnAct {
    fn load(
        vb: &VarBuilder,
        (cin, cout, k): (i64, i64, i64),
        (stride, groups): (i64, i64),
        act: Option<fn(&Tensor) -> Tensor>,
    ) -> Result<ConvBnAct> {
        let options = ConvOptions::default()
            .stride(&[stride])
            .padding(&[(k - 1) / 2])
            .groups(groups);
        Ok(ConvBnAct {
            conv: Conv2d::load(&vb.pp(0), cin, cout, [k, k], options, false)?,
            bn: BatchNorm2d::load(&vb.pp(1), cout, EPS)?,
            act,
        })
    }
}

impl Module for ConvBnAct {
    fn forward(&self, x: &Tensor) -> Tensor {
        let y = self.bn.forward(&self.conv.forward(x));
        match self.act {
            Some(act) => act(&y),
            None => y,
        }
    }
}

fn relu(x: &Tensor) -> Tensor {
    x.relu()
}

fn hardswish(x: &Tensor) -> Tensor {
    x.hardswish()
}

/// Squeeze-and-excitation: the input times hardsigmoid(fc2(relu(fc1(avg)))).
#[derive(Clone, Debug)]
struct SqueezeExcitation {
    pool: AdaptiveAvgPool2d,
    fc1: Conv2d,
    fc2: Conv2d,
}

impl Module for SqueezeExcitation {
    fn forward(&self, x: &Tensor) -> Tensor {
        let s = self.fc1.forward(&self.pool.forward(x)).relu();
        let scale = self.fc2.forward(&s).hardsigmoid();
        x * &scale
    }
}

/// An inverted residual block.
#[derive(Clone, Debug)]
pub struct InvertedResidual {
    expand: Option<ConvBnAct>,
    depthwise: ConvBnAct,
    se: Option<SqueezeExcitation>,
    project: ConvBnAct,
    residual: bool,
}

impl InvertedResidual {
    /// The block under `vb` (`features.i`) from `cin` channels.
    pub fn load(vb: &VarBuilder, cin: i64, c: &BlockConfig) -> Result<InvertedResidual> {
        let act: fn(&Tensor) -> Tensor = if c.hardswish { hardswish } else { relu };
        let vb = vb.pp("block");
        let mut layer = 0;
        let expand = if c.expanded != cin {
            layer += 1;
            Some(ConvBnAct::load(
                &vb.pp(0),
                (cin, c.expanded, 1),
                (1, 1),
                Some(act),
            )?)
        } else {
            None
        };
        let depthwise = ConvBnAct::load(
            &vb.pp(layer),
            (c.expanded, c.expanded, c.kernel),
            (c.stride, c.expanded),
            Some(act),
        )?;
        layer += 1;
        let se = if c.se {
            let squeeze = make_divisible(c.expanded / 4);
            let se = vb.pp(layer);
            layer += 1;
            Some(SqueezeExcitation {
                pool: AdaptiveAvgPool2d::new([1, 1]),
                fc1: Conv2d::load(
                    &se.pp("fc1"),
                    c.expanded,
                    squeeze,
                    [1, 1],
                    ConvOptions::default(),
                    true,
                )?,
                fc2: Conv2d::load(
                    &se.pp("fc2"),
                    squeeze,
                    c.expanded,
                    [1, 1],
                    ConvOptions::default(),
                    true,
                )?,
            })
        } else {
            None
        };
        let project = ConvBnAct::load(&vb.pp(layer), (c.expanded, c.out, 1), (1, 1), None)?;
        Ok(InvertedResidual {
            expand,
            depthwise,
            se,
            project,
            residual: c.stride == 1 && cin == c.out,
        })
    }
}

impl Module for InvertedResidual {
    fn forward(&self, x: &Tensor) -> Tensor {
        let mut y = match &self.expand {
            Some(e) => e.forward(x),
            None => x.clone(),
        };
        y = self.depthwise.forward(&y);
        if let Some(se) = &self.se {
            y = se.forward(&y);
        }
        y = self.project.forward(&y);
        if self.residual { &y + x } else { y }
    }
}

/// MobileNetV3 as torchvision builds it.
#[derive(Clone, Debug)]
pub struct MobileNetV3 {
    stem: ConvBnAct,
    blocks: Vec<InvertedResidual>,
    last: ConvBnAct,
    pool: AdaptiveAvgPool2d,
    fc1: Linear,
    fc2: Linear,
    /// `"small"` or `"large"`.
    pub variant: &'static str,
    /// Output classes.
    pub num_classes: i64,
}

impl MobileNetV3 {
    /// The variant's block table, from the number of blocks the
    /// checkpoint has.
    fn table(vb: &VarBuilder) -> Result<(&'static str, &'static [BlockConfig])> {
        let blocks = (1..)
            .take_while(|i| vb.contains(&format!("features.{i}.block.0.0.weight")))
            .count();
        match blocks {
            11 => Ok(("small", &SMALL)),
            15 => Ok(("large", &LARGE)),
            n => Err(Error::new(
                ErrorKind::Input,
                format!(
                    "{}: {n} inverted residual blocks (features.1.block ...): not torchvision's mobilenet_v3_small (11) or mobilenet_v3_large (15)",
                    vb.store().source()
                ),
            )),
        }
    }

    /// Loads the model whose parameters are under `vb`.
    pub fn load(vb: &VarBuilder) -> Result<MobileNetV3> {
        let (variant, table) = MobileNetV3::table(vb)?;
        let f = vb.pp("features");
        let stem = ConvBnAct::load(&f.pp(0), (3, 16, 3), (2, 1), Some(hardswish))?;
        let mut cin = 16;
        let mut blocks = Vec::new();
        for (i, c) in table.iter().enumerate() {
            blocks.push(InvertedResidual::load(&f.pp(i + 1), cin, c)?);
            cin = c.out;
        }
        let last_channels = 6 * cin;
        let last = ConvBnAct::load(
            &f.pp(table.len() + 1),
            (cin, last_channels, 1),
            (1, 1),
            Some(hardswish),
        )?;
        let hidden = *vb.shape_of("classifier.0.weight")?.first().unwrap_or(&1024);
        let num_classes = *vb.shape_of("classifier.3.weight")?.first().unwrap_or(&1000);
        Ok(MobileNetV3 {
            stem,
            blocks,
            last,
            pool: AdaptiveAvgPool2d::new([1, 1]),
            fc1: Linear::load(&vb.pp("classifier.0"), last_channels, hidden)?,
            fc2: Linear::load(&vb.pp("classifier.3"), hidden, num_classes)?,
            variant,
            num_classes,
        })
    }

    /// Traces the model for `batch` images of `size` pixels: the program
    /// takes `input` (f32 `[batch, 3, height, width]`) and returns the
    /// logits.
    pub fn trace(&self, vs: &VarStore, batch: i64, size: [i64; 2]) -> Result<TracedModel> {
        let spec = TensorSpec::new([batch, 3, size[0], size[1]], DType::F32).name("input");
        vs.trace(&[spec], |xs| self.forward(&xs[0]))
    }
}

impl Module for MobileNetV3 {
    fn forward(&self, x: &Tensor) -> Tensor {
        let mut x = self.stem.forward(x);
        for block in &self.blocks {
            x = block.forward(&x);
        }
        let x = self.pool.forward(&self.last.forward(&x)).flatten(1, -1);
        // Dropout between the two linear layers is the identity in eval.
        self.fc2.forward(&self.fc1.forward(&x).hardswish())
    }
}

/// mobilenet_v3_small's parameters in torchvision's names, random.
pub fn random_small(num_classes: i64) -> Result<VarStore> {
    let mut w = RandomWeights::new(3);
    w.conv_bn(("features.0.0", "features.0.1"), [16, 3, 3, 3])?;
    let mut cin = 16;
    for (i, c) in SMALL.iter().enumerate() {
        let p = format!("features.{}.block", i + 1);
        let mut layer = 0;
        let conv_bn = |w: &mut RandomWeights, layer: usize, shape: [i64; 4]| {
            w.conv_bn(
                (&format!("{p}.{layer}.0"), &format!("{p}.{layer}.1")),
                shape,
            )
        };
        if c.expanded != cin {
            conv_bn(&mut w, layer, [c.expanded, cin, 1, 1])?;
            layer += 1;
        }
        conv_bn(&mut w, layer, [c.expanded, 1, c.kernel, c.kernel])?;
        layer += 1;
        if c.se {
            let squeeze = make_divisible(c.expanded / 4);
            let se = format!("{p}.{layer}");
            let (s1, s2) = (
                1.0 / (c.expanded as f32).sqrt(),
                1.0 / (squeeze as f32).sqrt(),
            );
            w.add(
                &format!("{se}.fc1.weight"),
                &[squeeze, c.expanded, 1, 1],
                0.0,
                s1,
            )?;
            w.add(&format!("{se}.fc1.bias"), &[squeeze], 0.0, s1)?;
            w.add(
                &format!("{se}.fc2.weight"),
                &[c.expanded, squeeze, 1, 1],
                0.0,
                s2,
            )?;
            w.add(&format!("{se}.fc2.bias"), &[c.expanded], 0.0, s2)?;
            layer += 1;
        }
        conv_bn(&mut w, layer, [c.out, c.expanded, 1, 1])?;
        cin = c.out;
    }
    let last = format!("features.{}", SMALL.len() + 1);
    w.conv_bn(
        (&format!("{last}.0"), &format!("{last}.1")),
        [6 * cin, cin, 1, 1],
    )?;
    let s = 1.0 / ((6 * cin) as f32).sqrt();
    w.add("classifier.0.weight", &[1024, 6 * cin], 0.0, s)?;
    w.add("classifier.0.bias", &[1024], 0.0, s)?;
    w.add("classifier.3.weight", &[num_classes, 1024], 0.0, 1.0 / 32.0)?;
    w.add("classifier.3.bias", &[num_classes], 0.0, 1.0 / 32.0)?;
    Ok(w.into_store("random mobilenet_v3_small"))
}

fn main() -> Result<()> {
    let args = classify::Args::parse();
    let vs = match &args.checkpoint {
        Some(path) => VarStore::load(path)?,
        None => random_small(1000)?,
    };
    let model = MobileNetV3::load(&vs.root())?;
    let name = format!("MobileNetV3-{}", model.variant);
    classify::run(&args, &name, &vs, model.num_classes, |batch, size| {
        model.trace(&vs, batch, size)
    })
}
