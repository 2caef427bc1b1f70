//! Prints the process-wide Ordo clock and its offset matrix.
//!
//! `cargo run --release -p ordo --example calibrate` (the `ORDO_*` variables apply, see the
//! `ordo` crate docs).
fn main() {
    let o = match ordo::try_global() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    println!("{}", o.describe());
    if let Some(c) = o.calibration() {
        for (w, r, off) in c.matrix.entries() {
            println!("writer {w} -> reader {r}: {off} ticks");
        }
    }
}
