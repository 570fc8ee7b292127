//! Random weights for the examples' demos: named tensors of uniform
//! pseudo-random values from Kiln's reproducible stream (the same on every
//! machine), with He-scaled convolutions and batch-norm statistics near
//! their initial values, so a demo runs without a download.

use kiln::Result;
use kiln::nn::VarStore;
use kiln::runtime::random::Stream;

/// Named tensors of uniform pseudo-random values (Kiln's reproducible
/// stream, so the demo prints the same logits on every machine).
pub struct RandomWeights {
    stream: Stream,
    tensors: Vec<(String, kiln::runtime::Tensor)>,
}

impl RandomWeights {
    /// An empty set drawing from `seed`.
    pub fn new(seed: u64) -> RandomWeights {
        RandomWeights {
            stream: Stream::new(seed),
            tensors: Vec::new(),
        }
    }

    /// The tensors as a store (`source` names it in messages).
    pub fn into_store(self, source: &str) -> VarStore {
        VarStore::from_tensors(source, self.tensors)
    }

    /// `name`: values uniform in `[center − scale, center + scale)`.
    pub fn add(&mut self, name: &str, shape: &[i64], center: f32, scale: f32) -> Result<()> {
        let n = shape.iter().product::<i64>() as usize;
        let values = (0..n)
            .map(|_| center + scale * self.stream.unit() as f32)
            .collect();
        let tensor = kiln::runtime::Tensor::from_vec(values, shape)?;
        self.tensors.push((name.to_string(), tensor));
        Ok(())
    }

    /// A bias-free convolution of `shape` and its batch norm.
    pub fn conv_bn(&mut self, (conv, bn): (&str, &str), shape: [i64; 4]) -> Result<()> {
        let fan_in = (shape[1] * shape[2] * shape[3]) as f32;
        self.add(
            &format!("{conv}.weight"),
            &shape,
            0.0,
            (6.0 / fan_in).sqrt(),
        )?;
        let c = [shape[0]];
        self.add(&format!("{bn}.weight"), &c, 1.0, 0.1)?;
        self.add(&format!("{bn}.bias"), &c, 0.0, 0.1)?;
        self.add(&format!("{bn}.running_mean"), &c, 0.0, 0.1)?;
        self.add(&format!("{bn}.running_var"), &c, 1.0, 0.1)
    }
}
