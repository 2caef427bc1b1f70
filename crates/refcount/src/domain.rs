//! [`Domain`]: a family of [`Rc`](crate::Rc) objects sharing per-core delta caches, review
//! queues, epochs, and a background reviewer.
//!
//! # Review
//!
//! A domain reviews every core (flush, then examine the queues: see [`crate::refcache`]) from a
//! background thread it owns, every [`Config::review_period`] (10 ms by default, as sv6), and
//! whenever [`Domain::review`] or [`Domain::collect`] is called. Destructors of freed objects
//! run on the thread that reviews. With `review_period(None)` nothing is reviewed unless asked.
//!
//! Reviews of one domain take turns (a review lock), so that [`Domain::collect`] sees every
//! queued object. A destructor may review its own domain or drop its last handle (the nesting
//! is detected). Do not call [`Domain::review`] or [`Domain::collect`], or drop the last
//! handle, while holding a lock that a destructor of the domain's objects takes: a destructor
//! running in another thread's review would wait for that lock while you wait for the review.
//!
//! # Lifetime and shutdown
//!
//! Every object keeps its domain's engine alive. Dropping the last [`Domain`] handle shuts the
//! domain down: it frees, on the dropping thread, every object whose references are all gone
//! ([`Domain::collect`]). Objects still referenced stay valid; the background reviewer (started
//! then if the domain had none) keeps reviewing until the last of them is freed, then exits.

use crate::CoreMode;
use crate::config::{ConfigError, Layout, MAX_CACHE_ENTRIES, layout_setters};
use crate::refcache::{Panic, Refcache};
use oplog_percore::primitive::Mutex;
use std::fmt;
use std::panic::resume_unwind;
use std::sync::atomic::{AtomicBool, Ordering as StdOrdering};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::Duration;

/// Default entries per core delta cache (16 bytes each).
pub const DEFAULT_CACHE_ENTRIES: usize = 1024;

/// Default period of the background reviewer (sv6's, 002 §8.1).
pub const DEFAULT_REVIEW_PERIOD: Duration = Duration::from_millis(10);

/// Settings for a [`Domain`]; start from [`Config::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    layout: Layout,
    cache_entries: usize,
    review_period: Option<Duration>,
}

impl Default for Config {
    fn default() -> Self {
        Self::new()
    }
}

impl Config {
    /// Per-thread cores, [`DEFAULT_CACHE_ENTRIES`] entries per cache, a background review
    /// every [`DEFAULT_REVIEW_PERIOD`].
    pub fn new() -> Self {
        Config {
            layout: Layout::per_thread(),
            cache_entries: DEFAULT_CACHE_ENTRIES,
            review_period: Some(DEFAULT_REVIEW_PERIOD),
        }
    }

    /// Entries in each core's delta cache: a power of two from 1 to 2²⁰. More entries mean
    /// fewer collisions (each one a write to a shared object) and more memory per core.
    pub fn cache_entries(mut self, n: usize) -> Self {
        self.cache_entries = n;
        self
    }

    /// How often the background thread reviews; `None` for no background thread (reviews
    /// happen only in [`Domain::review`] and [`Domain::collect`]).
    pub fn review_period(mut self, period: Option<Duration>) -> Self {
        self.review_period = period;
        self
    }
}

layout_setters!(Config);

/// The engine shared by a domain's handles, objects and reviewer.
pub(crate) struct Inner {
    pub(crate) refcache: Refcache,
    period: Option<Duration>,
    /// Set when the last [`Domain`] handle is dropped: the reviewer exits once it holds the
    /// last reference to the engine. Control state of the reviewer thread, no part of the
    /// algorithm: a plain std atomic.
    owner_gone: AtomicBool,
    /// Set to stop the reviewer at once (the domain was dropped with no object left).
    stop: AtomicBool,
}

/// What dropping the last [`Domain`] handle acts on.
struct Owner {
    inner: Arc<Inner>,
    reviewer: Mutex<Option<thread::JoinHandle<()>>>,
}

/// A family of [`Rc`](crate::Rc) objects sharing Refcache's per-core caches, review queues,
/// epochs and reviewer. Cheap to clone (a shared handle); see the module docs for review and
/// shutdown.
#[derive(Clone)]
pub struct Domain {
    owner: Arc<Owner>,
}

impl fmt::Debug for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Domain")
            .field("mode", &self.mode())
            .field("cache_entries", &self.cache_entries())
            .field("review_period", &self.review_period())
            .field("epoch", &self.epoch())
            .finish()
    }
}

impl Domain {
    /// A domain configured by `config`, with its background reviewer running if it has a
    /// period.
    ///
    /// # Errors
    /// When a setting is out of range; the error names it and the value.
    pub fn new(config: Config) -> Result<Domain, ConfigError> {
        config.layout.validate()?;
        if !config.cache_entries.is_power_of_two() || config.cache_entries > MAX_CACHE_ENTRIES {
            return Err(ConfigError::CacheEntries(config.cache_entries));
        }
        if let Some(p) = config.review_period
            && p.is_zero()
        {
            return Err(ConfigError::ReviewPeriod(p));
        }
        let inner = Arc::new(Inner {
            refcache: Refcache::new(config.layout, config.cache_entries),
            period: config.review_period,
            owner_gone: AtomicBool::new(false),
            stop: AtomicBool::new(false),
        });
        let reviewer = config.review_period.map(|period| spawn_reviewer(inner.clone(), period));
        let owner = Owner { inner, reviewer: Mutex::new(reviewer, "Domain.reviewer") };
        Ok(Domain { owner: Arc::new(owner) })
    }

    /// The process-wide domain (default [`Config`]), used by [`Rc::new`](crate::Rc::new).
    /// It is never shut down.
    pub fn global() -> &'static Domain {
        static GLOBAL: OnceLock<Domain> = OnceLock::new();
        GLOBAL.get_or_init(|| Domain::new(Config::new()).expect("the default configuration is valid"))
    }

    pub(crate) fn inner(&self) -> &Arc<Inner> {
        &self.owner.inner
    }

    /// One review of every core (002 Figure 8-3 `review`, run for each core in turn): flush
    /// every delta cache, then free every queued object whose count has stayed a clean zero
    /// for two epochs. Returns how many objects it freed. Each call advances the epoch by at
    /// least one, so an object whose last reference is gone is freed by the second call at the
    /// latest.
    ///
    /// # Panics
    /// If a destructor panics: the review finishes first, then the first panic is resumed.
    pub fn review(&self) -> usize {
        match self.owner.inner.refcache.review_all() {
            Ok(pass) => pass.freed,
            Err(p) => resume_unwind(p),
        }
    }

    /// Reviews until every object whose references are all gone has been freed (including
    /// objects released by the destructors this runs). Returns how many it freed. Objects that
    /// other threads keep reviving stay queued.
    ///
    /// # Panics
    /// If a destructor panics: the collection finishes first, then the first panic is resumed.
    pub fn collect(&self) -> usize {
        self.owner.inner.refcache.collect().unwrap_or_else(|p| resume_unwind(p))
    }

    /// Objects waiting on review queues (or being examined): their global count was seen at
    /// zero and they are not yet known to be free or alive.
    pub fn queued(&self) -> usize {
        self.owner.inner.refcache.queued()
    }

    /// Objects this domain has freed so far.
    pub fn freed(&self) -> u64 {
        self.owner.inner.refcache.freed()
    }

    /// The global epoch (starts at 1; advances once every core has flushed).
    pub fn epoch(&self) -> u64 {
        self.owner.inner.refcache.epoch()
    }

    /// Per-CPU or per-thread cores.
    pub fn mode(&self) -> CoreMode {
        self.owner.inner.refcache.cores().mode()
    }

    /// Whether per-thread cores are entered without an atomic read-modify-write (per-thread
    /// domains where `membarrier` exists).
    pub fn owner_fast_path(&self) -> bool {
        self.owner.inner.refcache.cores().owner_fast_path()
    }

    /// Entries per core delta cache.
    pub fn cache_entries(&self) -> usize {
        self.owner.inner.refcache.cache_entries()
    }

    /// The background review period (`None`: reviews only when asked).
    pub fn review_period(&self) -> Option<Duration> {
        self.owner.inner.period
    }

    /// Bytes held by the per-core states created so far (delta caches, review queues,
    /// locks): the domain's fixed cost, which does not grow with the number of objects.
    pub fn footprint(&self) -> usize {
        self.owner.inner.refcache.footprint()
    }

    /// Indices of the cores created so far (per-CPU: every CPU; per-thread: the shared index
    /// 0 and each index a thread has claimed).
    pub fn cores(&self) -> Vec<usize> {
        self.owner.inner.refcache.cores().created()
    }
}

impl Inner {
    /// Reviews every core, reporting (not propagating) a destructor's panic: for reviewer
    /// threads, where there is no caller to give it to. The panic hook has already printed it.
    fn review_in_background(&self) {
        if let Err(p) = self.refcache.review_all() {
            report_panic(&p);
        }
    }
}

fn report_panic(p: &Panic) {
    let msg = p.downcast_ref::<&str>().copied().or_else(|| p.downcast_ref::<String>().map(String::as_str));
    eprintln!("oplog-refcount: a destructor panicked during a background review: {}", msg.unwrap_or("(no message)"));
}

/// Starts the background reviewer of `inner`: it reviews every `period` until stopped, or until
/// the domain's last handle is dropped and the last object freed.
fn spawn_reviewer(inner: Arc<Inner>, period: Duration) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name("refcache-review".into())
        .spawn(move || {
            loop {
                thread::park_timeout(period);
                if inner.stop.load(StdOrdering::Acquire) {
                    break;
                }
                // Only this thread holds the engine once the handles and objects are gone.
                if inner.owner_gone.load(StdOrdering::Acquire) && Arc::strong_count(&inner) == 1 {
                    break;
                }
                inner.review_in_background();
            }
        })
        .expect("cannot spawn the Refcache review thread")
}

impl Drop for Owner {
    /// Shuts the domain down (see the module docs).
    fn drop(&mut self) {
        let inner = &self.inner;
        inner.owner_gone.store(true, StdOrdering::Release);
        let result = inner.refcache.collect();
        let mut reviewer = self.reviewer.lock().take();
        let holders = 1 + usize::from(reviewer.is_some());
        if Arc::strong_count(inner) == holders {
            // No object is left, and no new one can be made without a handle: stop and join the
            // reviewer (unless this is it, dropping its domain from a destructor).
            inner.stop.store(true, StdOrdering::Release);
            if let Some(r) = reviewer.take() {
                r.thread().unpark();
                if r.thread().id() != thread::current().id() {
                    let _ = r.join();
                }
            }
        } else if reviewer.is_none() {
            // Objects are still referenced: someone must free them when they are released.
            let period = inner.period.unwrap_or(DEFAULT_REVIEW_PERIOD);
            drop(spawn_reviewer(inner.clone(), period));
        }
        if let Err(p) = result {
            if thread::panicking() {
                report_panic(&p);
            } else {
                resume_unwind(p);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn bad_settings_are_rejected_by_name() {
        let err = Domain::new(Config::new().cache_entries(100)).unwrap_err();
        assert_eq!(err, ConfigError::CacheEntries(100));
        assert!(err.to_string().contains("power of two"), "{err}");
        assert_eq!(
            Domain::new(Config::new().review_period(Some(Duration::ZERO))).unwrap_err(),
            ConfigError::ReviewPeriod(Duration::ZERO)
        );
        assert_eq!(Domain::new(Config::new().max_threads(0)).unwrap_err(), ConfigError::MaxThreads(0));
        assert_eq!(Domain::new(Config::new().mode(CoreMode::PerCpu).cpus(0)).unwrap_err(), ConfigError::Cpus(0));
    }

    /// The default configuration without a background reviewer; under Miri with room for 4
    /// threads' states instead of the default 1,024. The table of per-thread slots is the
    /// same code whatever its length, and the default per-thread mode, its shared core and
    /// the review are checked the same way; a 1,025-slot table cost each of the two tests
    /// below half a minute under Miri.
    fn default_without_reviewer() -> Config {
        let config = Config::new().review_period(None);
        if cfg!(miri) { config.max_threads(4) } else { config }
    }

    #[test]
    fn a_domain_reports_its_configuration() {
        let d =
            Domain::new(Config::new().mode(CoreMode::PerCpu).cpus(3).cache_entries(64).review_period(None)).unwrap();
        assert_eq!((d.mode(), d.cache_entries(), d.review_period(), d.epoch()), (CoreMode::PerCpu, 64, None, 1));
        assert_eq!(d.cores(), vec![0, 1, 2]);
        assert!(d.footprint() >= 3 * 64 * 16);
        assert_eq!(d.owner_fast_path(), oplog_percore::per_cpu_fast_path());
        let t = Domain::new(default_without_reviewer()).unwrap();
        assert_eq!(t.cores(), vec![0], "per-thread: only the shared core until a thread claims one");
        assert!(format!("{t:?}").contains("PerThread"));
    }

    #[test]
    fn reviews_advance_the_epoch() {
        let d = Domain::new(default_without_reviewer()).unwrap();
        assert_eq!(d.review(), 0);
        assert_eq!(d.epoch(), 2);
        assert_eq!(d.collect(), 0);
        assert_eq!(d.queued(), 0);
    }
}
