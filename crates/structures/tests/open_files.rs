//! The open-object list: every variant against the model, files closed on another thread
//! than the one that opened them, absorption counted.

mod common;

use common::{LIMIT, Rng, THREADS, configs, domain, pin_round_robin, run_turns, schedule, with_watchdog};
use oplog::Config;
use oplog_model::open_files::{OpenFilesModel, OpenFilesOp};
use oplog_structures::applied::Stats;
use oplog_structures::open_files::{FileId, MutexOpenFiles, OpLogOpenFiles, OpenFiles, PerCoreOpenFiles};
use std::collections::BTreeSet;
use std::sync::{Barrier, mpsc};

/// Opens a closed file or closes an open one (the identity rule), or lists.
fn next_op(rng: &mut Rng, files: &BTreeSet<FileId>) -> OpenFilesOp {
    if rng.u8(..10) == 0 {
        return OpenFilesOp::List;
    }
    let f = rng.u64(..16);
    if files.contains(&f) { OpenFilesOp::Close(f) } else { OpenFilesOp::Open(f) }
}

#[test]
fn every_variant_matches_the_model_with_threads_taking_turns() {
    with_watchdog("open files turns", LIMIT, || {
        for threads in THREADS {
            let s = schedule(&OpenFilesModel, threads, 1_500, 23 + threads as u64, next_op);
            run_turns("mutex", &[&MutexOpenFiles::new() as &dyn OpenFiles], threads, &s);
            run_turns("per-core", &[&PerCoreOpenFiles::new() as &dyn OpenFiles], threads, &s);
            // Fewer lists than CPUs: CPUs share lists.
            run_turns("per-core, 1 list", &[&PerCoreOpenFiles::with_cores(1) as &dyn OpenFiles], threads, &s);
            for (name, config) in configs() {
                let d = domain(&config);
                let (a, b) = (OpLogOpenFiles::new(&d), OpLogOpenFiles::new(&d));
                run_turns(&format!("oplog {name}"), &[&a as &dyn OpenFiles, &b], threads, &s);
            }
        }
    });
}

/// Threads open files and hand some to the next thread, which closes them (a process that
/// migrated, or a descriptor passed to another process); the rest they close themselves.
fn hand_off(name: &str, files: &dyn OpenFiles) {
    const THREADS: u64 = 3;
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..THREADS).map(|_| mpsc::channel::<FileId>()).unzip();
    let done = &Barrier::new(THREADS as usize);
    let kept: BTreeSet<FileId> = std::thread::scope(|s| {
        let handles: Vec<_> = receivers
            .into_iter()
            .enumerate()
            .map(|(me, rx)| {
                let to_next = senders[(me + 1) % THREADS as usize].clone();
                s.spawn(move || {
                    pin_round_robin(me);
                    let mut kept = BTreeSet::new();
                    for i in 0..3_000u64 {
                        let f = (me as u64) << 32 | i;
                        files.open(f);
                        match i % 3 {
                            0 => to_next.send(f).unwrap(),
                            1 => files.close(f),
                            _ if i % 300 == 2 => {
                                kept.insert(f);
                            }
                            _ => files.close(f),
                        }
                        while let Ok(g) = rx.try_recv() {
                            files.close(g);
                        }
                    }
                    // Every thread has sent all it will send: close the rest handed to us.
                    done.wait();
                    while let Ok(g) = rx.try_recv() {
                        files.close(g);
                    }
                    drop(to_next);
                    kept
                })
            })
            .collect();
        drop(senders);
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(files.open_files(), kept.into_iter().collect::<Vec<_>>(), "{name}");
}

#[test]
fn files_closed_by_another_thread() {
    with_watchdog("open files hand-off", LIMIT, || {
        hand_off("mutex", &MutexOpenFiles::new());
        hand_off("per-core", &PerCoreOpenFiles::new());
        hand_off("oplog per-cpu", &OpLogOpenFiles::new(&domain(&Config::per_cpu())));
        hand_off("oplog per-thread", &OpLogOpenFiles::new(&domain(&Config::per_thread())));
    });
}

#[test]
fn open_then_close_on_one_thread_never_reaches_the_set() {
    pin_round_robin(0);
    let files = OpLogOpenFiles::new(&domain(&Config::per_cpu()));
    for f in 0..5_000 {
        files.open(f);
        files.close(f);
    }
    files.open(7);
    assert_eq!(files.open_files(), vec![7]);
    assert_eq!(files.logged().stats(), Stats { executed: 1, absorbed_globally: 0 });
}
