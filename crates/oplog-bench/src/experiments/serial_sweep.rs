//! `serial-sweep`: locks whose serial section is 2 % of each iteration's work on one core,
//! for serial sections of 400, 1,600 and 25,600 ticks (001 Appendix A.2, Figure A-3),
//! measured here and beside the speedup that the appendix's Markov model predicts for
//! 1..48 cores (Figure A-6).
//!
//! 001 §A.2: "the serial section is always 2% of the total time to execute the serial
//! section and the non-serial section on one core"; with 400- and 1,600-cycle sections the
//! ticket lock collapses at 13 and 24 cores, with 25,600 it does not, and (§A.6) a workload
//! that Amdahl's law lets scale far "is able to attain less than 10x scalability when the
//! serial section is 400 cycles long". Every thread loops: spin `49 × serial` ticks outside
//! the lock, take it, spin `serial` ticks inside, increment a counter the lock protects,
//! release; the counter must equal the iterations counted, so a lock that fails to exclude
//! fails the run. The locks are the `spinlock` experiment's ([`super::spinlock::locks`]):
//! `ticket` (001 Figure A-1, the figures' lock), `mcs` and `mutex`. Records carry
//! `serial_cycles`, `parallel_cycles`, `serial_pct`, `tick_unit` and, once the one-thread
//! point is measured, `speedup`.
//!
//! Two cores cannot show a collapse at 13 or 24 cores; the model stands in for the larger
//! machine, as in `spinlock`: [`Model::for_loop`] with `s` = the serial section,
//! `a` = parallel + serial work, and `c` = one cache-line transfer measured here
//! ([`transfer_cost`]). Annexes: `model` (predicted speedup for 1..48 cores per serial
//! length, with the ideal `min(n, 1/f)` for `f` = 2 % beside: Figure A-6's
//! curves), `speedup` (measured speedups at the thread counts run beside the model's);
//! figure `serial-sweep-model.svg` (the predictions, the ideal, and the ticket lock's
//! measured speedups).

use std::io;

use ordo::Ordo;
use serde_json::{Value, json};

use crate::experiments::spinlock::model::Model;
use crate::experiments::spinlock::{IMPLS, MODEL_CORES, Point, transfer_cost};
use crate::experiments::{Experiment, XAxis, global_clock};
use crate::harness::Settings;
use crate::output::plot::{Chart, Scale};
use crate::output::{Annex, Record, Series, Sink, round};
use crate::spin;

/// The serial sections swept, in ticks (001 §A.2).
pub const SERIAL_TICKS: [u64; 3] = [400, 1_600, 25_600];
/// The serial section's share of one iteration on one core, in percent (001 §A.2).
pub const SERIAL_PERCENT: u64 = 2;

/// The parallel work that makes `serial` [`SERIAL_PERCENT`] of an iteration.
pub const fn parallel_ticks(serial: u64) -> u64 {
    serial * (100 - SERIAL_PERCENT) / SERIAL_PERCENT
}

/// The ideal speedup on `n` cores: `n`, up to the lock's capacity `1/f` for a serial
/// fraction `f` of [`SERIAL_PERCENT`] (50: the lock busy all the time). This is 001 §A.6's
/// "may be able to scale to 50 cores under Amdahl's law": other cores keep doing their
/// parallel work while one holds the lock, so a fork-join `1 / (f + (1 − f)/n)` does not
/// bound this loop.
pub fn ideal(n: usize) -> f64 {
    (n as f64).min(100.0 / SERIAL_PERCENT as f64)
}

/// Measured ops/s by (serial ticks, threads, lock index).
type Measured = Vec<(u64, usize, usize, f64)>;

/// Measured speedup of lock `lock` at `serial` and `threads` over one thread, if both
/// points were measured.
fn measured_speedup(measured: &Measured, serial: u64, threads: usize, lock: usize) -> Option<f64> {
    let at = |t: usize| measured.iter().find(|m| (m.0, m.1, m.2) == (serial, t, lock)).map(|m| m.3);
    Some(at(threads)? / at(1)?)
}

/// The model of the loop with a `serial`-tick section.
fn model(serial: u64, transfer: f64) -> Model {
    Model::for_loop(parallel_ticks(serial) as f64, serial as f64, transfer)
}

/// The `model` annex: predicted speedup for 1..=48 cores, one column per serial length,
/// and the ideal.
fn model_annex(serials: &[u64], transfer: f64, source: &str) -> Annex {
    let mut columns = vec!["cores".to_owned()];
    columns.extend(serials.iter().map(|s| format!("serial_{s}")));
    columns.push("ideal".to_owned());
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut annex = Annex::new(
        "model",
        &format!(
            "ticket lock speedup predicted by 001 eq. (A.1) with the serial section {SERIAL_PERCENT} % of the work \
             (001 Figure A-6): s = serial, a = 50 s, c = {transfer:.0} ticks ({source}); the ideal min(n, 50) beside"
        ),
        &columns,
    );
    let models: Vec<Model> = serials.iter().map(|&s| model(s, transfer)).collect();
    for n in 1..=MODEL_CORES {
        let mut row = vec![json!(n)];
        row.extend(models.iter().map(|m| json!(round(2, m.speedup(n)))));
        row.push(json!(round(2, ideal(n))));
        annex.row(row);
    }
    annex
}

/// The `speedup` annex: measured speedups beside the model's, at the thread counts run.
fn speedup_annex(serials: &[u64], threads: &[usize], measured: &Measured, transfer: f64) -> Annex {
    let mut columns = vec!["serial_cycles", "threads"];
    columns.extend(IMPLS.iter().map(|e| e.id));
    columns.extend(["model", "ideal"]);
    let mut annex = Annex::new("speedup", "measured speedup over one thread beside the model's prediction", &columns);
    for &s in serials {
        let m = model(s, transfer);
        for &t in threads {
            let mut row = vec![json!(s), json!(t)];
            row.extend(
                (0..IMPLS.len())
                    .map(|i| measured_speedup(measured, s, t, i).map_or(Value::Null, |x| json!(round(2, x)))),
            );
            row.push(json!(round(2, m.speedup(t))));
            row.push(json!(round(2, ideal(t))));
            annex.row(row);
        }
    }
    annex
}

/// The series of the `model` figure: each serial length's prediction, the ideal, and
/// the ticket lock's measured speedups.
fn figure_series(serials: &[u64], threads: &[usize], measured: &Measured, transfer: f64) -> Vec<Series> {
    let cores = || (1..=MODEL_CORES).map(|n| n as f64);
    let mut series: Vec<Series> = serials
        .iter()
        .map(|&s| {
            let m = model(s, transfer);
            Series {
                label: format!("model, serial {s}"),
                points: cores().zip((1..=MODEL_CORES).map(|n| m.speedup(n))).collect(),
            }
        })
        .collect();
    series.push(Series {
        label: format!("ideal, {SERIAL_PERCENT} % serial: min(n, 50)"),
        points: cores().zip((1..=MODEL_CORES).map(ideal)).collect(),
    });
    for &s in serials {
        let points: Vec<(f64, f64)> =
            threads.iter().filter_map(|&t| Some((t as f64, measured_speedup(measured, s, t, 0)?))).collect();
        if !points.is_empty() {
            series.push(Series { label: format!("ticket measured, serial {s}"), points });
        }
    }
    series
}

/// The `serial-sweep` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct SerialSweep;

impl Experiment for SerialSweep {
    fn name(&self) -> &'static str {
        "serial-sweep"
    }

    fn description(&self) -> &'static str {
        "ticket, MCS and std mutex with a serial section of 2 % of the work (400, 1600, 25600 ticks), beside 001 \
         Appendix A's model (Figures A-3, A-6)"
    }

    fn ids(&self) -> Vec<&'static str> {
        IMPLS.iter().map(|e| e.id).collect()
    }

    fn x_axis(&self) -> XAxis {
        XAxis::Param { key: "serial_cycles", label: "serial section (clock ticks; 2 % of the work)" }
    }

    fn x_scale(&self) -> Scale {
        Scale::Log
    }

    fn log_y(&self) -> bool {
        true
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * SERIAL_TICKS.len() * IMPLS.len()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        let clock: &'static Ordo = global_clock()?;
        let mut measured: Measured = Vec::new();
        for &threads in &settings.threads {
            for &serial in &SERIAL_TICKS {
                let parallel = parallel_ticks(serial);
                for (i, entry) in IMPLS.iter().enumerate() {
                    sink.point(entry.id, threads);
                    let run = settings.at(threads);
                    let t = entry.measure(&run, Point { clock, parallel, serial });
                    measured.push((serial, threads, i, t.median));
                    let mut record = Record::new(self.name(), entry.id, &run, &t)
                        .with("serial_cycles", serial)
                        .with("parallel_cycles", parallel)
                        .with("serial_pct", SERIAL_PERCENT)
                        .with("tick_unit", spin::unit(clock));
                    if let Some(s) = measured_speedup(&measured, serial, threads, i) {
                        record = record.with("speedup", round(2, s));
                    }
                    sink.push(record)?;
                }
            }
        }
        let (transfer, source) = transfer_cost(settings, clock);
        sink.annex(model_annex(&SERIAL_TICKS, transfer, &source))?;
        sink.annex(speedup_annex(&SERIAL_TICKS, &settings.threads, &measured, transfer))?;
        let chart = Chart {
            title: "serial-sweep: ticket lock speedup at 2 % serial work, 001 Appendix A model (1..48 cores) and measured",
            x_label: "cores",
            y_label: "speedup over one core",
            x_scale: Scale::Linear,
            log_y: false,
        };
        sink.figure("model", &chart, &figure_series(&SERIAL_TICKS, &settings.threads, &measured, transfer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::spinlock::TEXT_TRANSFER_CYCLES;

    #[test]
    fn the_serial_section_is_two_percent_of_an_iteration() {
        for s in SERIAL_TICKS {
            let p = parallel_ticks(s);
            assert_eq!(s * 100, (s + p) * SERIAL_PERCENT, "serial {s}, parallel {p}");
        }
        assert_eq!((ideal(1), ideal(48), ideal(64)), (1.0, 48.0, 50.0));
    }

    /// The model reproduces 001 §A.2's shape with the text's 160-cycle transfers: the
    /// 400- and 1,600-tick sections peak, the shorter one earlier, then collapse (the text
    /// measured 13 and 24 cores); the 25,600-tick one keeps scaling to 48 cores, near the
    /// ideal.
    #[test]
    fn short_serial_sections_collapse_and_the_longest_scales() {
        let curve =
            |s: u64| -> Vec<f64> { (1..=MODEL_CORES).map(|n| model(s, TEXT_TRANSFER_CYCLES).speedup(n)).collect() };
        let peak = |c: &[f64]| c.iter().enumerate().fold((0, 0.0), |b, (i, &v)| if v > b.1 { (i + 1, v) } else { b });
        let (short, medium, long) = (curve(400), curve(1_600), curve(25_600));
        let ((short_at, short_peak), (medium_at, medium_peak)) = (peak(&short), peak(&medium));
        assert!(short_at < medium_at && medium_at < MODEL_CORES, "peaks at {short_at} and {medium_at} cores");
        assert!(short[MODEL_CORES - 1] < 0.5 * short_peak, "400: {short:?}");
        assert!(medium[MODEL_CORES - 1] < 0.5 * medium_peak, "1600: {medium:?}");
        assert!(long.windows(2).all(|w| w[1] > w[0]), "25600 collapses: {long:?}");
        assert!(long[MODEL_CORES - 1] > 0.8 * ideal(MODEL_CORES), "25600: {long:?}");
    }

    #[test]
    fn annexes_hold_the_model_and_the_measured_speedups() {
        let measured: Measured = vec![(400, 1, 0, 100.0), (400, 2, 0, 180.0), (400, 1, 1, 100.0)];
        let m = model_annex(&[400, 1_600], 160.0, "test");
        assert_eq!(m.columns, ["cores", "serial_400", "serial_1600", "ideal"]);
        assert_eq!(m.rows.len(), MODEL_CORES);
        assert_eq!(m.rows[0], vec![json!(1), json!(1.0), json!(1.0), json!(1.0)]);
        let s = speedup_annex(&[400], &[1, 2], &measured, 160.0);
        assert_eq!(s.columns, ["serial_cycles", "threads", "ticket", "mcs", "mutex", "model", "ideal"]);
        assert_eq!(s.rows[1][2], json!(1.8));
        assert_eq!(s.rows[1][3], Value::Null, "mcs at 2 threads was not measured");
        assert_eq!(s.rows[1][5], json!(round(2, model(400, 160.0).speedup(2))));
        let series = figure_series(&[400], &[1, 2], &measured, 160.0);
        assert_eq!(series.len(), 3);
        assert_eq!(series[1].label, "ideal, 2 % serial: min(n, 50)");
        assert_eq!(series[2].points, vec![(1.0, 1.0), (2.0, 1.8)]);
    }
}
