//! Where benchmark threads run.
//!
//! Every measured thread is pinned round-robin over the CPUs in the process's affinity mask:
//! thread `i` runs on `allowed[i % allowed.len()]`, so with `T ≤ cores` no two workers share a
//! core and the curves measure coherence traffic, not the scheduler. The mask is read once, on
//! the main thread, when the [`Placement`] is built, and each worker pins itself before the
//! start gate opens. The OS calls are `ordo::cpu`'s.
//!
//! Where pinning fails (not Linux, or a CPU outside the mask) the threads run unpinned and a
//! note is printed on stderr once per process.

use std::sync::atomic::{AtomicBool, Ordering};

/// How measured threads are placed on CPUs: pinned round-robin over a CPU list, or unpinned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The CPUs to pin to, in increasing order; `None` means run unpinned.
    cpus: Option<Vec<usize>>,
}

impl Placement {
    /// Pin round-robin over the calling thread's affinity mask (call it on the main thread,
    /// before any pinning).
    pub fn from_process() -> Self {
        Self::over(ordo::cpu::allowed())
    }

    /// Run every thread unpinned.
    pub fn unpinned() -> Self {
        Self { cpus: None }
    }

    /// Pin round-robin over `cpus` (sorted and deduplicated; empty means unpinned).
    pub fn over(mut cpus: Vec<usize>) -> Self {
        cpus.sort_unstable();
        cpus.dedup();
        Self { cpus: (!cpus.is_empty()).then_some(cpus) }
    }

    /// The CPUs threads are pinned to, or `None` when unpinned.
    pub fn cpus(&self) -> Option<&[usize]> {
        self.cpus.as_deref()
    }

    /// The CPU thread `index` is pinned to, or `None` when unpinned.
    pub fn cpu_for(&self, index: usize) -> Option<usize> {
        let cpus = self.cpus.as_deref()?;
        Some(cpus[index % cpus.len()])
    }

    /// Pins the calling thread as thread `index`. Returns whether it is pinned; a failure is
    /// noted once on stderr and the thread runs unpinned.
    pub fn pin_current(&self, index: usize) -> bool {
        let Some(cpu) = self.cpu_for(index) else {
            return false;
        };
        match ordo::cpu::pin_current_thread(cpu) {
            Ok(()) => true,
            Err(e) => {
                note_unpinned(&format!("cannot pin thread {index} to CPU {cpu} ({e}); running threads unpinned"));
                false
            }
        }
    }
}

fn note_unpinned(message: &str) {
    static NOTED: AtomicBool = AtomicBool::new(false);
    if !NOTED.swap(true, Ordering::Relaxed) {
        eprintln!("oplog-bench: note: {message}");
    }
}

/// One more than the largest CPU id a thread of this process may report: sizes per-CPU
/// tables of the baselines.
pub fn cpu_id_bound() -> usize {
    let allowed = ordo::cpu::allowed().last().map_or(1, |&c| c + 1);
    ordo::cpu::possible().max(allowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_over_allowed_cpus() {
        let p = Placement::over(vec![6, 2, 4, 2]);
        assert_eq!(p.cpus(), Some(&[2, 4, 6][..]));
        assert_eq!(p.cpu_for(0), Some(2));
        assert_eq!(p.cpu_for(2), Some(6));
        assert_eq!(p.cpu_for(3), Some(2));
        assert_eq!(Placement::over(vec![]).cpu_for(0), None);
        assert_eq!(Placement::unpinned().cpu_for(5), None);
    }

    #[test]
    fn pinning_places_each_thread_on_its_cpu() {
        let p = Placement::from_process();
        let target = p.cpu_for(1).unwrap();
        std::thread::spawn(move || {
            assert!(p.pin_current(1));
            assert_eq!(ordo::cpu::current(), target);
        })
        .join()
        .unwrap();
        assert!(cpu_id_bound() > target);
    }
}
