//! The [`Ordo`] clock: a per-core clock plus the boundary measured for it, and the
//! process-wide instance.

use crate::calibrate::{self, OffsetMatrix};
use crate::settings::{Settings, SettingsError, SourceChoice};
use crate::{Clock, cpu, hw};
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Which clock an [`Ordo`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The invariant per-core hardware clock (`rdtscp` on x86-64, `cntvct_el0` on aarch64).
    Hardware,
    /// The OS monotonic clock, in nanoseconds. Linux keeps it monotonic across CPUs, so its
    /// boundary is 0; two CPUs can read the same value, so it does not order raw readings
    /// strictly.
    Monotonic,
}

/// How an [`Ordo`]'s boundary was obtained.
#[derive(Clone, Debug, PartialEq)]
pub enum Basis {
    /// Measured on this machine (003 Figure 4).
    Measured(Calibration),
    /// Pinned by configuration (`ORDO_BOUNDARY`) or by the constructor's caller.
    Pinned,
    /// Given by the OS: the monotonic clock is synchronized across CPUs by the kernel.
    OsClock,
}

/// The result of measuring the boundary.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// Signed minimum offsets between every ordered pair of allowed CPUs.
    pub matrix: OffsetMatrix,
    /// Exchanges per ordered pair.
    pub runs: usize,
    /// Wall time the measurement took.
    pub elapsed: Duration,
}

/// The Ordo clock: timestamps from a per-core clock with a known uncertainty window.
///
/// Build one with [`Ordo::calibrate`], [`Ordo::with_boundary`], [`Ordo::monotonic`] or
/// [`Ordo::from_settings`]; most code uses the process-wide [`global`] instance.
#[derive(Clone, Debug)]
pub struct Ordo {
    source: Source,
    boundary: u64,
    raw_order_is_causal: bool,
    /// Whether `rdtscp`'s `TSC_AUX` holds the CPU number (only x86-64 has it to read).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    cpu_in_aux: bool,
    basis: Basis,
    ticks_per_ns: f64,
    fallback: Option<String>,
}

/// Why the process-wide clock could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// A malformed environment variable.
    Setting(SettingsError),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Setting(e) => write!(f, "invalid Ordo clock configuration: {e}"),
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<SettingsError> for ConfigError {
    fn from(e: SettingsError) -> Self {
        ConfigError::Setting(e)
    }
}

/// `boundary`, if it is at most [`MAX_BOUNDARY`](crate::settings::MAX_BOUNDARY).
fn checked_boundary(boundary: u64) -> u64 {
    let max = crate::settings::MAX_BOUNDARY;
    assert!(boundary <= max, "an Ordo boundary of {boundary} ticks is above the limit of {max}");
    boundary
}

static GLOBAL: OnceLock<Result<Arc<Ordo>, ConfigError>> = OnceLock::new();

/// The process-wide clock, built on first use from the environment ([`Settings::from_env`])
/// and, unless pinned, calibrated once over the CPUs this process may run on.
///
/// # Errors
/// When an `ORDO_*` variable is malformed; the same error is returned on every call.
pub fn try_global() -> Result<&'static Arc<Ordo>, &'static ConfigError> {
    GLOBAL
        .get_or_init(|| {
            let settings = Settings::from_env()?;
            Ok(Arc::new(Ordo::from_settings(&settings)))
        })
        .as_ref()
}

/// The process-wide clock (see [`try_global`]).
///
/// # Panics
/// When an `ORDO_*` variable is malformed, with a message naming it. Programs that want
/// to report this themselves call [`try_global`] first.
pub fn global() -> &'static Arc<Ordo> {
    match try_global() {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    }
}

impl Ordo {
    /// Builds the clock the settings ask for. Falls back to the OS monotonic clock, and says
    /// why in [`Ordo::fallback`], when the hardware clock is requested but is missing, not
    /// invariant, or cannot be calibrated (a calibration thread could not be pinned).
    ///
    /// # Panics
    /// When a pinned boundary is above [`MAX_BOUNDARY`](crate::settings::MAX_BOUNDARY)
    /// (settings read by [`Settings::from_env`] never are).
    pub fn from_settings(settings: &Settings) -> Ordo {
        let monotonic = |reason: Option<String>| {
            let mut o = Ordo::monotonic();
            if let Some(b) = settings.boundary {
                o.boundary = checked_boundary(b);
                o.basis = Basis::Pinned;
            }
            o.fallback = reason;
            o
        };
        match settings.source {
            SourceChoice::Monotonic => monotonic(None),
            SourceChoice::Hardware if !hw::hardware_clock_available() => {
                monotonic(Some(format!("no invariant hardware clock ({}) on this CPU", hw::HARDWARE_NAME)))
            }
            SourceChoice::Hardware => match settings.boundary {
                Some(b) => Ordo::with_boundary(b),
                None => match Ordo::calibrate(&cpu::allowed(), settings.calibration_runs) {
                    Ok(o) => o,
                    Err(e) => monotonic(Some(format!("calibration failed: {e}"))),
                },
            },
        }
    }

    /// The hardware clock with its boundary measured over `cpus` (003 Figure 4), `runs`
    /// exchanges per ordered pair.
    ///
    /// # Errors
    /// When there is no invariant hardware clock, `cpus` is empty, `runs` is 0, or a
    /// calibration thread cannot be pinned to one of `cpus`.
    pub fn calibrate(cpus: &[usize], runs: usize) -> std::io::Result<Ordo> {
        use std::io::{Error, ErrorKind};
        if !hw::hardware_clock_available() {
            return Err(Error::new(ErrorKind::Unsupported, "no invariant hardware clock on this CPU"));
        }
        if cpus.is_empty() || runs == 0 {
            return Err(Error::new(ErrorKind::InvalidInput, "calibration needs at least one CPU and one run"));
        }
        let mut cpus = cpus.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        let start = Instant::now();
        let matrix = calibrate::measure(&cpus, runs, hw::read)?;
        let calibration = Calibration { matrix, runs, elapsed: start.elapsed() };
        let mut o = Ordo::with_boundary(calibration.matrix.boundary());
        o.raw_order_is_causal = calibration.matrix.all_positive();
        o.basis = Basis::Measured(calibration);
        Ok(o)
    }

    /// The hardware clock with a pinned boundary. Raw order is assumed to respect
    /// communication (the texts' own assumption, 000 §6.1), since nothing was measured.
    ///
    /// # Panics
    /// When this machine has no invariant hardware clock, or `boundary` is above
    /// [`MAX_BOUNDARY`](crate::settings::MAX_BOUNDARY).
    pub fn with_boundary(boundary: u64) -> Ordo {
        assert!(hw::hardware_clock_available(), "no invariant hardware clock ({}) on this CPU", hw::HARDWARE_NAME);
        Ordo {
            source: Source::Hardware,
            boundary: checked_boundary(boundary),
            raw_order_is_causal: true,
            cpu_in_aux: cpu::tsc_aux_is_cpu(),
            basis: Basis::Pinned,
            ticks_per_ns: hw::estimate_ticks_per_ns(2_000_000),
            fallback: None,
        }
    }

    /// The OS monotonic clock: boundary 0 (the kernel keeps it synchronized), readings in
    /// nanoseconds, and raw order not strict (two CPUs may read the same value).
    pub fn monotonic() -> Ordo {
        Ordo {
            source: Source::Monotonic,
            boundary: 0,
            raw_order_is_causal: false,
            cpu_in_aux: false,
            basis: Basis::OsClock,
            ticks_per_ns: 1.0,
            fallback: None,
        }
    }

    /// Which clock this reads.
    pub fn source(&self) -> Source {
        self.source
    }

    /// How the boundary was obtained (with the whole offset matrix when measured).
    pub fn basis(&self) -> &Basis {
        &self.basis
    }

    /// The measured calibration, if the boundary was measured.
    pub fn calibration(&self) -> Option<&Calibration> {
        match &self.basis {
            Basis::Measured(c) => Some(c),
            _ => None,
        }
    }

    /// Why the hardware clock was requested but not used, if so.
    pub fn fallback(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// Clock ticks per nanosecond (estimated against the OS clock for the hardware clock).
    pub fn ticks_per_ns(&self) -> f64 {
        self.ticks_per_ns
    }

    /// The boundary in nanoseconds.
    pub fn boundary_ns(&self) -> f64 {
        self.boundary as f64 / self.ticks_per_ns
    }

    /// A one-line description for reports.
    pub fn describe(&self) -> String {
        let source = match self.source {
            Source::Hardware => hw::HARDWARE_NAME,
            Source::Monotonic => "monotonic",
        };
        let basis = match &self.basis {
            Basis::Measured(c) => {
                let n = c.matrix.cpus().len();
                format!("measured over {n} CPUs x {} runs in {:.0?}", c.runs, c.elapsed)
            }
            Basis::Pinned => "pinned".to_string(),
            Basis::OsClock => "kernel-synchronized".to_string(),
        };
        let mut s = format!(
            "{source} clock, boundary {} ticks ({:.1} ns, {basis}); raw order respects communication: {}",
            self.boundary,
            self.boundary_ns(),
            if self.raw_order_is_causal { "yes" } else { "no" }
        );
        if let Some(f) = &self.fallback {
            s.push_str(&format!("; hardware clock not used: {f}"));
        }
        s
    }
}

impl Clock for Ordo {
    #[inline]
    fn get_time(&self) -> u64 {
        match self.source {
            Source::Hardware => hw::read(),
            Source::Monotonic => hw::monotonic_ns(),
        }
    }

    #[inline]
    fn stamp(&self) -> u64 {
        match self.source {
            Source::Hardware => hw::read_unfenced(),
            Source::Monotonic => hw::monotonic_ns(),
        }
    }

    #[inline]
    fn get_time_and_cpu(&self) -> (u64, Option<usize>) {
        #[cfg(target_arch = "x86_64")]
        if self.cpu_in_aux {
            let (t, aux) = hw::read_with_aux();
            return (t, Some((aux & cpu::TSC_AUX_CPU_MASK) as usize));
        }
        (self.get_time(), None)
    }

    fn boundary(&self) -> u64 {
        self.boundary
    }

    fn raw_order_is_causal(&self) -> bool {
        self.raw_order_is_causal
    }

    fn name(&self) -> &'static str {
        match self.source {
            Source::Hardware => hw::HARDWARE_NAME,
            Source::Monotonic => "monotonic",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TimeOrder;

    /// On one CPU a stamp is taken after the reading before it and before the reading
    /// after it: it waits for the earlier instructions, and the next reading waits for it.
    #[test]
    fn a_stamp_falls_between_the_readings_around_it() {
        let hardware = hw::hardware_clock_available().then(|| Ordo::with_boundary(0));
        for o in hardware.into_iter().chain([Ordo::monotonic()]) {
            let cpu = cpu::allowed()[0];
            std::thread::spawn(move || {
                cpu::pin_current_thread(cpu).unwrap();
                for _ in 0..10_000 {
                    let (before, stamp, after) = (o.get_time(), o.stamp(), o.get_time());
                    assert!(before <= stamp && stamp <= after, "{before} {stamp} {after} ({})", o.name());
                }
            })
            .join()
            .unwrap();
        }
    }

    #[test]
    fn calibration_yields_a_full_matrix_and_a_non_negative_boundary() {
        if !hw::hardware_clock_available() {
            return;
        }
        let cpus = cpu::allowed();
        let o = Ordo::calibrate(&cpus, 2000).expect("calibration on this machine");
        let c = o.calibration().expect("measured");
        assert_eq!(c.matrix.cpus(), &cpus[..]);
        for &i in &cpus {
            for &j in &cpus {
                assert_eq!(c.matrix.offset(i, j).is_some(), i != j, "entry ({i},{j})");
            }
        }
        assert_eq!(o.boundary(), c.matrix.boundary());
        assert_eq!(o.raw_order_is_causal(), c.matrix.all_positive());
        assert!(o.describe().contains("measured over"), "{}", o.describe());
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot pin threads")]
    fn calibration_leaves_the_calling_threads_affinity_alone() {
        // Regression: calibration used to pin the calling thread to the last reader CPU,
        // so every thread it spawned afterwards ran on that one CPU.
        if !hw::hardware_clock_available() || cpu::allowed().len() < 2 {
            return;
        }
        std::thread::spawn(|| {
            let before = cpu::allowed();
            Ordo::calibrate(&before, 100).expect("calibration on this machine");
            assert_eq!(cpu::allowed(), before, "calibration changed the calling thread's CPU affinity");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn calibration_refuses_no_cpus_or_no_runs() {
        if !hw::hardware_clock_available() {
            return;
        }
        for (cpus, runs) in [(&[][..], 10), (&[0][..], 0)] {
            let Err(err) = Ordo::calibrate(cpus, runs) else {
                panic!("calibrating {cpus:?} with {runs} runs was accepted")
            };
            assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
            assert_eq!(err.to_string(), "calibration needs at least one CPU and one run");
        }
    }

    #[test]
    fn new_time_is_certainly_after_on_every_core() {
        let o = if hw::hardware_clock_available() { Ordo::with_boundary(5_000) } else { Ordo::monotonic() };
        let t = o.get_time();
        let n = o.new_time(t);
        assert_eq!(o.cmp_time(n, t), TimeOrder::After);
        // Another core reading after seeing `n` is at least n - boundary > t.
        let seen = std::thread::spawn({
            let o = o.clone();
            move || o.get_time()
        })
        .join()
        .unwrap();
        assert!(seen + o.boundary() > t);
    }

    /// 016 item 2: `ORDO_BOUNDARY=18446744073709551615` was accepted and every wait then hung.
    /// The largest boundary accepted is waited out (one second: the monotonic clock ticks in
    /// nanoseconds), under a watchdog.
    #[test]
    #[cfg_attr(miri, ignore = "spins for a wall-clock second")]
    fn the_largest_boundary_accepted_is_waited_out() {
        let settings = Settings {
            source: SourceChoice::Monotonic,
            boundary: Some(crate::settings::MAX_BOUNDARY),
            ..Settings::default()
        };
        let o = Ordo::from_settings(&settings);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let t = o.get_time();
            tx.send((t, o.new_time(t))).unwrap();
        });
        let (t, n) = rx.recv_timeout(Duration::from_secs(60)).expect("new_time with the largest boundary hung");
        assert!(n > t + crate::settings::MAX_BOUNDARY);
    }

    #[test]
    #[should_panic(expected = "an Ordo boundary of 18446744073709551615 ticks is above the limit of 1000000000")]
    fn a_boundary_above_the_limit_is_refused_by_the_constructors() {
        let settings = Settings { source: SourceChoice::Monotonic, boundary: Some(u64::MAX), ..Settings::default() };
        let _ = Ordo::from_settings(&settings);
    }

    #[test]
    fn get_time_and_cpu_reports_the_pinned_cpu() {
        let o = if hw::hardware_clock_available() { Ordo::with_boundary(0) } else { return };
        for &c in &cpu::allowed() {
            let o = o.clone();
            let seen = std::thread::spawn(move || {
                cpu::pin_current_thread(c).unwrap();
                o.get_time_and_cpu().1
            })
            .join()
            .unwrap();
            if cpu::tsc_aux_is_cpu() {
                assert_eq!(seen, Some(c));
            } else {
                assert_eq!(seen, None);
            }
        }
    }

    #[test]
    fn the_monotonic_fallback_waits_for_a_strictly_later_reading() {
        let o = Ordo::monotonic();
        assert!(!o.raw_order_is_causal());
        let t = o.get_time();
        assert!(o.new_time(t) > t);
        assert_eq!(o.basis(), &Basis::OsClock);
    }

    #[test]
    fn settings_choose_the_source_and_pin_the_boundary() {
        let o =
            Ordo::from_settings(&Settings { source: SourceChoice::Monotonic, boundary: Some(7), calibration_runs: 1 });
        assert_eq!((o.source(), o.boundary(), o.basis()), (Source::Monotonic, 7, &Basis::Pinned));
        if hw::hardware_clock_available() {
            let o = Ordo::from_settings(&Settings {
                source: SourceChoice::Hardware,
                boundary: Some(42),
                calibration_runs: 1,
            });
            assert_eq!((o.source(), o.boundary(), o.basis()), (Source::Hardware, 42, &Basis::Pinned));
            assert!(o.raw_order_is_causal());
        }
    }

    #[test]
    fn the_global_clock_is_built_once() {
        // The test environment does not set malformed ORDO_* variables.
        let a = try_global().expect("valid environment");
        let b = global();
        assert!(Arc::ptr_eq(a, b));
    }
}
