//! Serves the recorder's metrics over HTTP for a Prometheus scraper, while worker threads
//! update them through the `metrics` macros as a service would.
//!
//! `cargo run --release -p oplog-metrics --example serve -- [ADDR]` (default
//! `127.0.0.1:9898`), then `curl http://127.0.0.1:9898/metrics`, or point a scraper at it.
//! `--self-test` binds an ephemeral port, scrapes itself once, prints what it got and exits
//! (CI runs this). A port already taken is a clear error naming the address, exit status 1.
//!
//! One thread accepts connections and answers each with `render()` (`/metrics`) or 404; the
//! workers never wait for it: their updates stay on their own cores.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use metrics::Unit;
use oplog_metrics::PerCoreRecorder;

/// Where to listen unless told.
const DEFAULT_ADDR: &str = "127.0.0.1:9898";

/// What a simulated request does: count it, time it, track how many are in flight.
fn handle_request(worker: usize, i: u64) {
    let started = Instant::now();
    metrics::gauge!("demo_in_flight_requests").increment(1.0);
    let route = if i.is_multiple_of(10) { "/admin" } else { "/" };
    metrics::counter!("demo_requests_total", "route" => route).increment(1);
    // A little work, longer for some requests.
    let spins = 200 + (i % 97) * 20 * (1 + worker as u64 % 2);
    let mut x = i;
    for _ in 0..spins {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
    metrics::histogram!("demo_request_duration_seconds").record(started.elapsed().as_secs_f64());
    metrics::gauge!("demo_in_flight_requests").decrement(1.0);
}

/// Answers one connection: the metrics for `GET /metrics`, 404 otherwise.
fn answer(stream: TcpStream, recorder: &PerCoreRecorder) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // Skip the headers.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let mut stream = reader.into_inner();
    let (status, content_type, body) = match request_line.split_whitespace().take(2).collect::<Vec<_>>()[..] {
        ["GET", "/metrics"] => ("200 OK", "text/plain; version=0.0.4; charset=utf-8", recorder.render()),
        _ => ("404 Not Found", "text/plain; charset=utf-8", "try GET /metrics\n".to_owned()),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

/// Binds `addr`, or explains why not.
fn bind(addr: &str) -> Result<TcpListener, String> {
    let parsed: SocketAddr =
        addr.parse().map_err(|e| format!("`{addr}` is not an address to listen on ({e}); example: {DEFAULT_ADDR}"))?;
    TcpListener::bind(parsed).map_err(|e| match e.kind() {
        io::ErrorKind::AddrInUse => format!(
            "cannot listen on {parsed}: the port is already in use by another program; pass another \
             address, e.g. `cargo run -p oplog-metrics --example serve -- 127.0.0.1:{}`",
            parsed.port().wrapping_add(1)
        ),
        _ => format!("cannot listen on {parsed}: {e}"),
    })
}

/// Fetches `/metrics` from `addr`: the response's body.
fn scrape(addr: SocketAddr) -> io::Result<String> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(stream, "GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    if !head.starts_with("HTTP/1.1 200") {
        return Err(io::Error::other(format!("unexpected response: {head}")));
    }
    Ok(body.to_owned())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let self_test = args.iter().any(|a| a == "--self-test");
    let addr = match args.iter().find(|a| !a.starts_with("--")) {
        Some(a) => a.clone(),
        None if self_test => "127.0.0.1:0".to_owned(),
        None => DEFAULT_ADDR.to_owned(),
    };
    let listener = match bind(&addr) {
        Ok(l) => l,
        Err(message) => {
            eprintln!("serve: {message}");
            return ExitCode::FAILURE;
        }
    };
    let local = listener.local_addr().expect("a bound listener has an address");

    let recorder = PerCoreRecorder::new();
    metrics::set_global_recorder(recorder.clone()).expect("nothing else installed a recorder");
    metrics::describe_counter!("demo_requests_total", Unit::Count, "Requests handled, by route.");
    metrics::describe_gauge!("demo_in_flight_requests", Unit::Count, "Requests being handled now.");
    metrics::describe_histogram!("demo_request_duration_seconds", Unit::Seconds, "Time to handle a request.");

    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for worker in 0..2 {
            let stop = &stop;
            s.spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    handle_request(worker, i);
                    i += 1;
                }
            });
        }
        if self_test {
            std::thread::sleep(Duration::from_millis(100));
            let scraper = s.spawn(move || scrape(local));
            let served = listener.accept().and_then(|(stream, _)| answer(stream, &recorder));
            stop.store(true, Ordering::Relaxed);
            let body = scraper.join().expect("the scraper does not panic");
            return match (served, body) {
                (Ok(()), Ok(body)) if body.contains("demo_requests_total{route=\"/\"}") => {
                    print!("{body}");
                    ExitCode::SUCCESS
                }
                (served, body) => {
                    eprintln!("serve --self-test failed: served {served:?}, scraped {body:?}");
                    ExitCode::FAILURE
                }
            };
        }
        eprintln!("serving http://{local}/metrics (Ctrl-C to stop)");
        for stream in listener.incoming() {
            let result = stream.and_then(|stream| answer(stream, &recorder));
            if let Err(e) = result {
                eprintln!("serve: a connection failed: {e}");
            }
        }
        stop.store(true, Ordering::Relaxed);
        ExitCode::SUCCESS
    })
}
