//! A progress line on standard error while a long run works, when standard
//! error is a terminal: a spinner, the time, and a message the caller makes
//! from the time elapsed, refreshed five times a second.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Runs `work`, showing `message(elapsed)` meanwhile on a terminal.
pub fn with_progress_line<T>(message: impl Fn(Duration) -> String + Sync, work: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return work();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}").expect("the template is valid"));
    let finished = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let ticker = scope.spawn(|| {
            let started = Instant::now();
            while !finished.load(Ordering::Relaxed) {
                bar.set_message(message(started.elapsed()));
                bar.tick();
                std::thread::park_timeout(Duration::from_millis(200));
            }
        });
        let result = work();
        finished.store(true, Ordering::Relaxed);
        ticker.thread().unpark();
        let _ = ticker.join();
        bar.finish_and_clear();
        result
    })
}
