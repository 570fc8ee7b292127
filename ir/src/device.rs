//! Devices: where a tensor lives, how device strings parse and print, and the
//! rule for ops whose operands live on different devices.
//!
//! PyTorch rules: `torch.device` (c10's `Device(const std::string&)`: a known
//! type name, optionally `:` and a non-negative index without sign or leading
//! zeros), and TensorIterator's device check: all operands on one device,
//! except zero-dim CPU tensors, which join any device.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind, Result};

/// A device type. Kiln runs `cpu`, `cuda` and `meta`; the others are
/// recognised (they parse and print) so that programs naming them get a clear
/// "no backend" error instead of a parse error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeviceType {
    /// `cpu`: the host processor.
    Cpu,
    /// `cuda`: an NVIDIA GPU (PyTorch's ROCm builds call AMD GPUs `cuda` too).
    Cuda,
    /// `meta`: tensors with a type and no data; a program on it can be
    /// type-checked but not run.
    Meta,
    /// `mps`: Apple's Metal Performance Shaders GPUs.
    Mps,
    /// `xpu`: Intel GPUs.
    Xpu,
    /// `xla`: devices driven through XLA by torch_xla (TPUs among them).
    Xla,
    /// `ipu`: Graphcore IPUs.
    Ipu,
    /// `mkldnn`: PyTorch's legacy oneDNN (MKL-DNN) device type.
    Mkldnn,
    /// `opengl`: a legacy device type with no PyTorch backend.
    OpenGl,
    /// `opencl`: a legacy device type with no PyTorch backend.
    OpenCl,
    /// `ideep`: Caffe2's legacy oneDNN device type.
    Ideep,
    /// `hip`: AMD's HIP (PyTorch's ROCm builds expose AMD GPUs as `cuda`).
    Hip,
    /// `ve`: NEC SX-Aurora Vector Engines.
    Ve,
    /// `fpga`: a legacy device type with no PyTorch backend.
    Fpga,
    /// `maia`: Microsoft's Maia accelerators.
    Maia,
    /// `lazy`: PyTorch's lazy tensors, which record ops to compile later.
    Lazy,
    /// `vulkan`: GPUs through the Vulkan API (PyTorch's mobile backend).
    Vulkan,
    /// `hpu`: Intel Gaudi (Habana) accelerators.
    Hpu,
    /// `mtia`: Meta's training and inference accelerators.
    Mtia,
    /// `privateuseone`: the device type PyTorch reserves for out-of-tree
    /// backends (`PrivateUse1`).
    PrivateUseOne,
}

/// Device type names, in the order PyTorch's error message lists them.
const DEVICE_TYPES: [(&str, DeviceType); 20] = [
    ("cpu", DeviceType::Cpu),
    ("cuda", DeviceType::Cuda),
    ("ipu", DeviceType::Ipu),
    ("xpu", DeviceType::Xpu),
    ("mkldnn", DeviceType::Mkldnn),
    ("opengl", DeviceType::OpenGl),
    ("opencl", DeviceType::OpenCl),
    ("ideep", DeviceType::Ideep),
    ("hip", DeviceType::Hip),
    ("ve", DeviceType::Ve),
    ("fpga", DeviceType::Fpga),
    ("maia", DeviceType::Maia),
    ("xla", DeviceType::Xla),
    ("lazy", DeviceType::Lazy),
    ("vulkan", DeviceType::Vulkan),
    ("mps", DeviceType::Mps),
    ("meta", DeviceType::Meta),
    ("hpu", DeviceType::Hpu),
    ("mtia", DeviceType::Mtia),
    ("privateuseone", DeviceType::PrivateUseOne),
];

/// The largest device index: PyTorch stores indices in a signed byte and
/// silently wraps larger ones; Kiln refuses them instead.
pub const MAX_DEVICE_INDEX: u8 = i8::MAX as u8;

impl DeviceType {
    /// The name `torch.device` strings use for this type (`cuda`).
    pub fn name(self) -> &'static str {
        DEVICE_TYPES
            .iter()
            .find(|(_, t)| *t == self)
            .map(|(n, _)| *n)
            .expect("every device type is in the table")
    }

    fn parse(name: &str) -> Result<DeviceType> {
        DEVICE_TYPES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                let names: Vec<&str> = DEVICE_TYPES.iter().map(|(n, _)| *n).collect();
                Error::new(
                    ErrorKind::Device,
                    format!(
                        "Expected one of {} device type at start of device string: {name}",
                        names.join(", ")
                    ),
                )
            })
    }

    /// Whether a Kiln backend can run tensors on this device type.
    pub fn has_backend(self) -> bool {
        matches!(self, DeviceType::Cpu | DeviceType::Cuda | DeviceType::Meta)
    }
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A device: a type and an optional index (`cuda`, `cuda:1`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Device {
    ty: DeviceType,
    index: Option<u8>,
}

impl Device {
    /// `cpu`, without an index: PyTorch's default device.
    pub const CPU: Device = Device {
        ty: DeviceType::Cpu,
        index: None,
    };
    /// `meta`, without an index.
    pub const META: Device = Device {
        ty: DeviceType::Meta,
        index: None,
    };

    /// `torch.device(type, index)`; `type` must not carry its own index.
    pub fn new(ty: DeviceType, index: Option<i64>) -> Result<Device> {
        let index = match index {
            None => None,
            Some(i) if i < 0 => bail_device("Device index must not be negative")?,
            Some(i) => Some(checked_index(i)?),
        };
        Ok(Device { ty, index })
    }

    /// `cuda:N`.
    pub fn cuda(index: u8) -> Result<Device> {
        Device::new(DeviceType::Cuda, Some(index as i64))
    }

    /// `torch.device("cuda", 1)`: a type string and an explicit index.
    pub fn from_type_index(ty: &str, index: Option<i64>) -> Result<Device> {
        if ty.contains(':') {
            return bail_device(&format!(
                "type (string) must not include an index because index was passed explicitly: {ty}"
            ));
        }
        if ty.is_empty() {
            return bail_device("Device string must not be empty");
        }
        let parsed: Device = ty.parse()?;
        Device::new(parsed.ty, index)
    }

    /// `torch.device(N)`: index N of the current accelerator. PyTorch's newest
    /// documentation makes this an error when no accelerator is present, and
    /// Kiln follows it; `accelerator` is what the caller detected.
    pub fn from_ordinal(ordinal: i64, accelerator: Option<DeviceType>) -> Result<Device> {
        if ordinal < 0 {
            return bail_device("Device index must not be negative");
        }
        match accelerator {
            Some(ty) => Device::new(ty, Some(ordinal)),
            None => bail_device(&format!(
                "device ordinal {ordinal} needs an accelerator, but none was detected"
            )),
        }
    }

    /// The type, without the index (`cuda` for `cuda:1`).
    pub fn device_type(self) -> DeviceType {
        self.ty
    }

    /// The index, when the device names one (`1` for `cuda:1`, `None` for
    /// `cuda`); see [`Device::for_tensor`] for the index a tensor reports.
    pub fn index(self) -> Option<u8> {
        self.index
    }

    /// Whether this is a `cpu` device, whatever its index.
    pub fn is_cpu(self) -> bool {
        self.ty == DeviceType::Cpu
    }

    /// Whether this is a `cuda` device, whatever its index.
    pub fn is_cuda(self) -> bool {
        self.ty == DeviceType::Cuda
    }

    /// Whether this is a `meta` device, whatever its index.
    pub fn is_meta(self) -> bool {
        self.ty == DeviceType::Meta
    }

    /// The device a tensor created on `self` reports: PyTorch drops the index
    /// of cpu and meta devices and gives accelerators their current index
    /// (Kiln's current index is always 0).
    pub fn for_tensor(self) -> Device {
        match self.ty {
            DeviceType::Cpu | DeviceType::Meta => Device {
                ty: self.ty,
                index: None,
            },
            _ => Device {
                ty: self.ty,
                index: Some(self.index.unwrap_or(0)),
            },
        }
    }
}

fn bail_device<T>(message: &str) -> Result<T> {
    Err(Error::new(ErrorKind::Device, message))
}

fn checked_index(index: i64) -> Result<u8> {
    u8::try_from(index).ok().filter(|i| *i <= MAX_DEVICE_INDEX).ok_or_else(|| {
        Error::new(
            ErrorKind::Device,
            format!(
                "device index {index} is out of range: Kiln supports indices 0..={MAX_DEVICE_INDEX} \
                 (PyTorch keeps device indices in a signed byte and wraps larger ones)"
            ),
        )
    })
}

impl FromStr for Device {
    type Err = Error;

    /// Parses `type` or `type:index` exactly as PyTorch does.
    fn from_str(s: &str) -> Result<Device> {
        if s.is_empty() {
            return bail_device("Device string must not be empty");
        }
        let invalid = || bail_device(&format!("Invalid device string: '{s}'"));
        let (name, index) = match s.split_once(':') {
            Some((name, index)) => (name, Some(index)),
            None => (s, None),
        };
        let is_type_char = |c: char| c.is_ascii_alphabetic() || c == '_';
        if name.is_empty() || !name.chars().all(is_type_char) {
            return invalid();
        }
        let index = match index {
            None => None,
            Some(digits) => {
                let well_formed = !digits.is_empty()
                    && digits.bytes().all(|b| b.is_ascii_digit())
                    && (digits == "0" || !digits.starts_with('0'));
                if !well_formed {
                    return invalid();
                }
                // PyTorch parses the index as a C int before checking it.
                let value: i32 = digits.parse().map_err(|_| {
                    Error::new(
                        ErrorKind::Device,
                        format!("Could not parse device index '{digits}' in device string '{s}'"),
                    )
                })?;
                Some(value as i64)
            }
        };
        Device::new(DeviceType::parse(name)?, index)
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}:{i}", self.ty),
            None => write!(f, "{}", self.ty),
        }
    }
}

/// PyTorch's `repr`: `device(type='cuda', index=1)`.
impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.index {
            Some(i) => write!(f, "device(type='{}', index={i})", self.ty),
            None => write!(f, "device(type='{}')", self.ty),
        }
    }
}

/// One operand's placement, as the device rule sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The device the operand's tensor lives on.
    pub device: Device,
    /// The operand's number of dims: a rank-0 CPU tensor joins any device.
    pub rank: usize,
}

/// The device an op over these operands runs on: all operands must share one
/// device, except zero-dim CPU tensors, which join any device (PyTorch's
/// "CPU scalar" rule). Scalar literals are not operands here.
pub fn common_device(operands: &[Placement]) -> Result<Device> {
    let mut chosen: Option<Device> = None;
    let mut cpu_scalar = false;
    for p in operands {
        if p.device.is_cpu() && p.rank == 0 {
            cpu_scalar = true;
            continue;
        }
        match chosen {
            None => chosen = Some(p.device),
            Some(d) if d == p.device => {}
            Some(d) => {
                return Err(Error::new(
                    ErrorKind::Device,
                    format!(
                        "Expected all tensors to be on the same device, but found at least two devices, {d} and {}!",
                        p.device
                    ),
                ));
            }
        }
    }
    match chosen {
        Some(d) => Ok(d),
        None if cpu_scalar => Ok(Device::CPU),
        None => Err(Error::new(
            ErrorKind::Arity,
            "an op needs at least one tensor operand",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        let d: Device = "cuda:1".parse().unwrap();
        assert_eq!(d.to_string(), "cuda:1");
        assert_eq!(format!("{d:?}"), "device(type='cuda', index=1)");
        assert!("cuda:01".parse::<Device>().is_err());
        assert!("cuda:128".parse::<Device>().is_err());
        assert_eq!(
            "CUDA".parse::<Device>().unwrap_err().message(),
            "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: CUDA"
        );
    }

    #[test]
    fn cpu_scalars_join_any_device() {
        let cuda = Device::cuda(0).unwrap();
        let ops = [
            Placement {
                device: cuda,
                rank: 2,
            },
            Placement {
                device: Device::CPU,
                rank: 0,
            },
        ];
        assert_eq!(common_device(&ops).unwrap(), cuda);
        let bad = [
            Placement {
                device: cuda,
                rank: 2,
            },
            Placement {
                device: Device::CPU,
                rank: 1,
            },
        ];
        assert!(common_device(&bad).is_err());
    }
}
