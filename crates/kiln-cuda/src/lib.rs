//! `kiln-cuda`: the CUDA backend (CUDA C, NVRTC, cudarc).
