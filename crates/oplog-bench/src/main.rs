//! `oplog-bench`: see the library's documentation (`cargo doc -p oplog-bench`).

fn main() -> std::process::ExitCode {
    oplog_bench::main()
}
