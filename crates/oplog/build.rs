//! Emits `oplog_rseq` where the restartable-sequence fast path (src/rseq.rs) applies:
//! x86-64 Linux, and neither loom nor Miri (which cannot run inline assembly).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(oplog_rseq)");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let modelled = std::env::var_os("CARGO_CFG_LOOM").is_some() || std::env::var_os("CARGO_CFG_MIRI").is_some();
    if var("CARGO_CFG_TARGET_ARCH") == "x86_64" && var("CARGO_CFG_TARGET_OS") == "linux" && !modelled {
        println!("cargo::rustc-cfg=oplog_rseq");
    }
}
