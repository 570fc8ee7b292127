//! Scoped defaults: the Rust analogue of `torch.set_default_dtype` and
//! `with torch.device(...)`.
//!
//! Both are per thread and restored when the scope ends, so tests and
//! libraries cannot leak settings into each other. An explicit dtype or
//! device always wins over a default.

use std::cell::Cell;

use kiln_ir::{DType, DefaultDType, Device, Result};

thread_local! {
    static DEFAULT_DTYPE: Cell<DefaultDType> = const { Cell::new(DefaultDType::F32) };
    static DEFAULT_DEVICE: Cell<Device> = const { Cell::new(Device::CPU) };
}

/// The default dtype in effect on this thread (f32 unless a scope says otherwise).
pub fn default_dtype() -> DefaultDType {
    DEFAULT_DTYPE.with(Cell::get)
}

/// The default device in effect on this thread (cpu unless a scope says otherwise).
pub fn default_device() -> Device {
    DEFAULT_DEVICE.with(Cell::get)
}

/// Restores the previous default dtype when dropped.
#[must_use = "the default dtype is restored when the guard is dropped"]
pub struct DefaultDTypeGuard(DefaultDType);

impl Drop for DefaultDTypeGuard {
    fn drop(&mut self) {
        DEFAULT_DTYPE.with(|d| d.set(self.0));
    }
}

/// Restores the previous default device when dropped.
#[must_use = "the default device is restored when the guard is dropped"]
pub struct DefaultDeviceGuard(Device);

impl Drop for DefaultDeviceGuard {
    fn drop(&mut self) {
        DEFAULT_DEVICE.with(|d| d.set(self.0));
    }
}

/// Sets the default dtype (f32 or f64) until the guard is dropped.
pub fn set_default_dtype(dtype: DType) -> Result<DefaultDTypeGuard> {
    let new = DefaultDType::try_from(dtype)?;
    Ok(DefaultDTypeGuard(DEFAULT_DTYPE.with(|d| d.replace(new))))
}

/// Sets the default device until the guard is dropped.
pub fn set_default_device(device: Device) -> DefaultDeviceGuard {
    DefaultDeviceGuard(DEFAULT_DEVICE.with(|d| d.replace(device)))
}

/// Runs `f` with a default dtype, then restores the previous one.
pub fn with_default_dtype<R>(dtype: DType, f: impl FnOnce() -> R) -> Result<R> {
    let _guard = set_default_dtype(dtype)?;
    Ok(f())
}

/// Runs `f` with a default device, then restores the previous one.
pub fn with_default_device<R>(device: Device, f: impl FnOnce() -> R) -> R {
    let _guard = set_default_device(device);
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_nest_and_restore() {
        assert_eq!(default_dtype(), DefaultDType::F32);
        with_default_dtype(DType::F64, || {
            assert_eq!(default_dtype(), DefaultDType::F64);
            let _inner = set_default_dtype(DType::F32).unwrap();
            assert_eq!(default_dtype(), DefaultDType::F32);
        })
        .unwrap();
        assert_eq!(default_dtype(), DefaultDType::F32);
        assert!(set_default_dtype(DType::I32).is_err());
        let meta = with_default_device(Device::META, default_device);
        assert_eq!(meta, Device::META);
        assert_eq!(default_device(), Device::CPU);
    }
}
