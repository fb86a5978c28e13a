//! `zest bench`: one tool called `-n` times from `-c` threads over one session; calls/s and
//! latency percentiles, with a live progress line on a terminal.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use zest_blocking::ClientApi;

use crate::commands::{print_json, with_session};
use crate::fail::Failure;
use crate::target::TargetArgs;

/// The arguments of `zest bench`.
#[derive(clap::Args, Debug)]
pub(crate) struct BenchArgs {
    /// The tool to call.
    #[arg(long)]
    pub(crate) tool: String,
    /// Its arguments, as one JSON object.
    #[arg(long = "args-json", value_name = "JSON", default_value = "{}")]
    pub(crate) args_json: String,
    /// How many calls in all.
    #[arg(short = 'n', long, default_value_t = 1000)]
    pub(crate) calls: usize,
    /// How many calls in flight at once (threads sharing the session).
    #[arg(short = 'c', long, default_value_t = 1)]
    pub(crate) concurrency: usize,
}

/// What one run measured.
struct Figures {
    latencies: Vec<Duration>,
    errors: usize,
    elapsed: Duration,
}

/// Runs the benchmark and prints its figures.
pub(crate) fn bench(target: &TargetArgs, args: &BenchArgs, as_json: bool) -> Result<(), Failure> {
    let arguments: Value = serde_json::from_str(&args.args_json)
        .map_err(|e| Failure::usage(format!("--args-json is not JSON: {e}")))?;
    if args.calls == 0 || args.concurrency == 0 {
        return Err(Failure::usage("-n and -c must be at least 1"));
    }
    let figures = with_session(target, |client| {
        // One call first: a wrong tool name or bad arguments fail here, not a thousand times.
        let first = client.call_tool(&args.tool, arguments.clone());
        let first = first.map_err(|e| Failure::call(&args.tool, &e))?;
        if first.is_error() {
            let why = format!("{} answered with an error; not benchmarking", args.tool);
            return Err(Failure::answered(why));
        }
        Ok(run(client, args, &arguments))
    })?;
    report(&figures, args, as_json);
    Ok(())
}

fn run(client: &zest_blocking::Client, args: &BenchArgs, arguments: &Value) -> Figures {
    let next = AtomicUsize::new(0);
    let errors = AtomicUsize::new(0);
    let latencies = Mutex::new(Vec::with_capacity(args.calls));
    let started = Instant::now();
    let live = std::io::stderr().is_terminal();
    thread::scope(|scope| {
        for _ in 0..args.concurrency.min(args.calls) {
            scope.spawn(|| {
                let mut mine = Vec::new();
                while next.fetch_add(1, Ordering::Relaxed) < args.calls {
                    let at = Instant::now();
                    match client.call_tool(&args.tool, arguments.clone()) {
                        Ok(r) if !r.is_error() => mine.push(at.elapsed()),
                        _ => drop(errors.fetch_add(1, Ordering::Relaxed)),
                    }
                }
                latencies.lock().unwrap_or_else(|p| p.into_inner()).extend(mine);
            });
        }
        if live {
            while next.load(Ordering::Relaxed) < args.calls {
                let done = next.load(Ordering::Relaxed).min(args.calls);
                let rate = done as f64 / started.elapsed().as_secs_f64().max(1e-9);
                eprint!("\r\x1b[2K{done}/{} calls, {rate:.0} calls/s", args.calls);
                let _ = std::io::stderr().flush();
                thread::sleep(Duration::from_millis(200));
            }
            eprint!("\r\x1b[2K");
        }
    });
    let elapsed = started.elapsed();
    let mut latencies = latencies.into_inner().unwrap_or_else(|p| p.into_inner());
    latencies.sort();
    Figures { latencies, errors: errors.into_inner(), elapsed }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index].as_secs_f64() * 1000.0
}

fn report(f: &Figures, args: &BenchArgs, as_json: bool) {
    let rate = args.calls as f64 / f.elapsed.as_secs_f64().max(1e-9);
    let (p50, p99) = (percentile(&f.latencies, 0.50), percentile(&f.latencies, 0.99));
    let max = f.latencies.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0);
    if as_json {
        print_json(&json!({
            "tool": args.tool, "calls": args.calls, "concurrency": args.concurrency,
            "errors": f.errors, "seconds": f.elapsed.as_secs_f64(), "callsPerSecond": rate,
            "p50Ms": p50, "p99Ms": p99, "maxMs": max,
        }));
        return;
    }
    println!(
        "{} calls of {} at c={} in {:.2} s",
        args.calls,
        args.tool,
        args.concurrency,
        f.elapsed.as_secs_f64()
    );
    println!("calls/s   {rate:.0}");
    println!("latency   p50 {p50:.3} ms, p99 {p99:.3} ms, max {max:.3} ms");
    println!("errors    {}", f.errors);
}
