//! Emits `percore_rseq` where the restartable-sequence fast path (src/rseq.rs) applies:
//! x86-64 Linux, and neither loom, Miri (which cannot run inline assembly) nor the `trace`
//! feature (the tracer cannot see into inline assembly, so traced builds replace the
//! sequence with a stand-in that records the same memory accesses, in the same module).
//! Emits `percore_trace` for the `trace` feature outside loom (loom's primitives take
//! precedence).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(percore_rseq)");
    println!("cargo::rustc-check-cfg=cfg(percore_trace)");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let loom = std::env::var_os("CARGO_CFG_LOOM").is_some();
    let trace = std::env::var_os("CARGO_FEATURE_TRACE").is_some();
    let modelled = loom || std::env::var_os("CARGO_CFG_MIRI").is_some();
    if var("CARGO_CFG_TARGET_ARCH") == "x86_64" && var("CARGO_CFG_TARGET_OS") == "linux" && !modelled && !trace {
        println!("cargo::rustc-cfg=percore_rseq");
    }
    if trace && !loom {
        println!("cargo::rustc-cfg=percore_trace");
    }
}
