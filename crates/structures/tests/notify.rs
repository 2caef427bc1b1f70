//! The notification queue: every variant against the model, and many producers with one
//! concurrent consumer.

mod common;

use common::{LIMIT, Rng, THREADS, configs, domain, pin_round_robin, run_turns, schedule, with_watchdog};
use oplog::Config;
use oplog_model::Model;
use oplog_model::queue::{QueueModel, QueueOp};
use oplog_structures::notify::{EventQueue, MutexQueue, OpLogQueue, SegQueueBaseline};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};

/// Enqueues mostly (an event numbered by the queue's length and a random part, so that
/// most reorderings show), or dequeues.
fn next_op(rng: &mut Rng, queue: &VecDeque<u64>) -> QueueOp {
    match rng.u8(..10) {
        0..3 => QueueOp::Dequeue,
        _ => QueueOp::Enqueue(queue.len() as u64 * 1_000 + rng.u64(..1_000)),
    }
}

/// `len` and `dequeue_into` (which are not model operations) against the model's state:
/// the queue holds the model's events, and draining it in batches gives them in order.
fn drains_like_the_model(what: &str, queue: &dyn EventQueue<u64>, events: &VecDeque<u64>, batch: usize) {
    assert_eq!(queue.len(), events.len(), "{what}: len");
    let mut out = Vec::new();
    while queue.dequeue_into(&mut out, batch) == batch {}
    assert!(out.iter().eq(events.iter()), "{what}: dequeue_into in batches of {batch}");
    assert!(queue.is_empty(), "{what}: drained");
}

#[test]
fn every_variant_matches_the_model_with_threads_taking_turns() {
    with_watchdog("notify turns", LIMIT, || {
        for threads in THREADS {
            let s = schedule(&QueueModel, threads, 1_500, 3 + threads as u64, next_op);
            let mutex = MutexQueue::new();
            run_turns("mutex", &[&mutex as &dyn EventQueue<u64>], threads, &s);
            drains_like_the_model("mutex", &mutex, &s.final_state, 1 + threads);
            let segqueue = SegQueueBaseline::new();
            run_turns("segqueue", &[&segqueue as &dyn EventQueue<u64>], threads, &s);
            drains_like_the_model("segqueue", &segqueue, &s.final_state, 1 + threads);
            for (name, config) in configs() {
                let d = domain(&config);
                let (a, b) = (OpLogQueue::new(&d), OpLogQueue::new(&d));
                run_turns(&format!("oplog {name}"), &[&a as &dyn EventQueue<u64>, &b], threads, &s);
                drains_like_the_model(&format!("oplog {name}"), &a, &s.final_state, 1 + threads);
                drains_like_the_model(&format!("oplog {name}"), &b, &s.final_state, 1);
            }
        }
    });
}

/// Producers enqueue `(producer, sequence)` while one consumer dequeues in batches; every
/// event arrives once, and each producer's events arrive in the order it enqueued them.
fn producers_and_a_consumer(name: &str, queue: &dyn EventQueue<(u64, u64)>) {
    const PRODUCERS: u64 = 3;
    const EVENTS: u64 = 20_000;
    let done = AtomicBool::new(false);
    let mut received = std::thread::scope(|s| {
        let consumer = s.spawn(|| {
            pin_round_robin(0);
            let mut got = Vec::new();
            while !done.load(Ordering::Acquire) {
                if queue.dequeue_into(&mut got, 64) == 0 {
                    std::thread::yield_now();
                }
            }
            got
        });
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                s.spawn(move || {
                    pin_round_robin(1 + p as usize);
                    (0..EVENTS).for_each(|i| queue.enqueue((p, i)));
                })
            })
            .collect();
        producers.into_iter().for_each(|h| h.join().unwrap());
        done.store(true, Ordering::Release);
        consumer.join().unwrap()
    });
    // What the consumer had not taken yet.
    while let Some(e) = queue.dequeue() {
        received.push(e);
    }
    assert_eq!(received.len() as u64, PRODUCERS * EVENTS, "{name}");
    let mut next = [0u64; PRODUCERS as usize];
    for (p, i) in received {
        assert_eq!(i, next[p as usize], "{name}: producer {p}'s events out of order");
        next[p as usize] += 1;
    }
    assert!(queue.is_empty());
}

#[test]
fn many_producers_one_consumer_in_order() {
    with_watchdog("notify producers", LIMIT, || {
        producers_and_a_consumer("mutex", &MutexQueue::new());
        producers_and_a_consumer("segqueue", &SegQueueBaseline::new());
        producers_and_a_consumer("oplog per-cpu", &OpLogQueue::new(&domain(&Config::per_cpu())));
        producers_and_a_consumer("oplog per-thread", &OpLogQueue::new(&domain(&Config::per_thread())));
    });
}

#[test]
fn the_schedules_leave_events_queued() {
    // Otherwise `drains_like_the_model` above would check nothing.
    let s = schedule(&QueueModel, 3, 1_500, 6, next_op);
    assert!(s.final_state.len() > 100, "{}", s.final_state.len());
    assert_eq!(QueueModel.init().len(), 0);
}

#[test]
fn an_empty_queue_answers_none_and_nothing() {
    let variants: Vec<Box<dyn EventQueue<u8>>> = vec![
        Box::new(MutexQueue::new()),
        Box::new(SegQueueBaseline::new()),
        Box::new(OpLogQueue::new(&domain(&Config::per_cpu()))),
    ];
    for q in variants {
        assert_eq!(q.dequeue(), None);
        let mut out = vec![9];
        assert_eq!(q.dequeue_into(&mut out, 10), 0);
        assert_eq!(out, vec![9], "dequeue_into appends, keeping what `out` held");
        q.enqueue(1);
        q.enqueue(2);
        q.enqueue(3);
        assert_eq!(q.dequeue_into(&mut out, 2), 2);
        assert_eq!(out, vec![9, 1, 2]);
        assert_eq!(q.len(), 1);
    }
}
