//! `robotsieve.fetch` and `robotsieve.fetch_iter`: the fetch crate's run
//! from Python, with the limits as keyword arguments (the command line's
//! flags and defaults, `robotsieve fetch --help`), the GIL released while
//! fetching, and records as dicts.

use crate::RobotsieveError;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict};
use robotsieve_fetch::{FetchOptions, Record, ResolveOverride, RunError, Summary};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

/// The limits `fetch` and `fetch_iter` take, each with the command line's
/// default (its flag is `--` and the name with `-` for `_`).
fn defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let o = FetchOptions::new("");
    let d = PyDict::new(py);
    d.set_item("concurrency", o.concurrency)?;
    d.set_item("per_ip_connections", o.per_ip_connections)?;
    d.set_item("per_ip_interval_ms", o.per_ip_interval.as_millis() as u64)?;
    d.set_item("max_waiting", o.max_waiting)?;
    d.set_item("connect_timeout", o.connect_timeout.as_secs_f64())?;
    d.set_item("response_timeout", o.response_timeout.as_secs_f64())?;
    d.set_item("total_timeout", o.total_timeout.as_secs_f64())?;
    d.set_item("retries", o.retries)?;
    d.set_item("retry_backoff", o.retry_backoff.as_secs_f64())?;
    d.set_item("retry_wait_cap", o.retry_after_cap.as_secs_f64())?;
    d.set_item("dns_timeout", o.dns.timeout.as_secs_f64())?;
    d.set_item("ca_cert", Vec::<String>::new())?;
    d.set_item("resolve", Vec::<String>::new())?;
    d.set_item("hosts_file", py.None())?;
    d.set_item("dns_server", py.None())?;
    d.set_item("allow_private", o.dns.allow_private)?;
    Ok(d)
}

/// The default limits, as a dict (`robotsieve.FETCH_DEFAULTS`).
#[pyfunction]
pub fn fetch_defaults(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    defaults(py)
}

fn bad(name: &str, value: &Bound<'_, PyAny>, what: &str) -> PyErr {
    PyValueError::new_err(format!("{name} must be {what}, not {}", value.repr().map_or("?".into(), |r| r.to_string())))
}

/// A whole number at least `min` (a bool is refused).
fn whole(name: &str, value: &Bound<'_, PyAny>, min: u64) -> PyResult<u64> {
    let n = match value.is_instance_of::<PyBool>() {
        true => None,
        false => value.extract::<u64>().ok().filter(|n| *n >= min),
    };
    n.ok_or_else(|| bad(name, value, &format!("a whole number of at least {min}")))
}

/// Seconds (an int or a float, finite, not negative; positive when `positive`).
fn seconds(name: &str, value: &Bound<'_, PyAny>, positive: bool) -> PyResult<Duration> {
    let s = match value.is_instance_of::<PyBool>() {
        true => None,
        false => value.extract::<f64>().ok(),
    };
    s.filter(|s| !positive || *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| bad(name, value, if positive { "a positive number of seconds" } else { "a number of seconds" }))
}

/// One string, or a list of them.
fn strings(name: &str, value: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(one) = value.extract::<PathBuf>() {
        return Ok(vec![one.to_string_lossy().into_owned()]);
    }
    value
        .extract::<Vec<PathBuf>>()
        .map(|v| v.into_iter().map(|p| p.to_string_lossy().into_owned()).collect())
        .map_err(|_| bad(name, value, "a string or a list of strings"))
}

/// `FetchOptions` from the user agent and the limits given, each checked:
/// an unknown name or a bad value raises ValueError naming it.
pub fn options(user_agent: &str, limits: Option<&Bound<'_, PyDict>>) -> PyResult<FetchOptions> {
    if user_agent.trim().is_empty() {
        return Err(PyValueError::new_err(
            "user_agent must say who is fetching (e.g. \"mybot/1.0 (+https://example.org/bot)\")",
        ));
    }
    let mut o = FetchOptions::new(user_agent);
    let Some(limits) = limits else { return Ok(o) };
    for (key, value) in limits.iter() {
        let name: String = key.extract()?;
        let name = name.as_str();
        let value = &value;
        match name {
            "concurrency" => o.concurrency = whole(name, value, 1)? as usize,
            "per_ip_connections" => o.per_ip_connections = whole(name, value, 1)? as usize,
            "per_ip_interval_ms" => o.per_ip_interval = Duration::from_millis(whole(name, value, 0)?),
            "max_waiting" => o.max_waiting = whole(name, value, 1)? as usize,
            "connect_timeout" => o.connect_timeout = seconds(name, value, true)?,
            "response_timeout" => o.response_timeout = seconds(name, value, true)?,
            "total_timeout" => o.total_timeout = seconds(name, value, true)?,
            "retries" => {
                o.retries =
                    u32::try_from(whole(name, value, 0)?).map_err(|_| bad(name, value, "a whole number of retries"))?
            }
            "retry_backoff" => o.retry_backoff = seconds(name, value, false)?,
            "retry_wait_cap" => o.retry_after_cap = seconds(name, value, false)?,
            "dns_timeout" => o.dns.timeout = seconds(name, value, true)?,
            "allow_private" => {
                o.dns.allow_private =
                    value.downcast::<PyBool>().map_err(|_| bad(name, value, "True or False"))?.is_true()
            }
            "ca_cert" => {
                for path in strings(name, value)? {
                    std::fs::metadata(&path).map_err(|e| PyValueError::new_err(format!("ca_cert {path}: {e}")))?;
                    o.ca_certs.push(path.into());
                }
            }
            "resolve" => {
                for entry in strings(name, value)? {
                    let entry: ResolveOverride =
                        entry.parse().map_err(|e: String| PyValueError::new_err(format!("resolve: {e}")))?;
                    o.dns.overrides.push(entry);
                }
            }
            "hosts_file" if value.is_none() => {}
            "hosts_file" => {
                let path: PathBuf = value.extract().map_err(|_| bad(name, value, "a path"))?;
                o.dns.hosts = robotsieve_fetch::read_hosts_file(&path)
                    .map_err(|e| PyValueError::new_err(format!("hosts_file {e}")))?;
            }
            "dns_server" if value.is_none() => {}
            "dns_server" => {
                let text: String = value.extract().map_err(|_| bad(name, value, "\"ADDR:PORT\""))?;
                o.dns.server =
                    Some(text.parse().map_err(|_| bad(name, value, "\"ADDR:PORT\" (an IP address and a port)"))?);
            }
            other => {
                let known: Vec<String> = defaults(limits.py())?.keys().iter().map(|k| k.to_string()).collect();
                return Err(PyValueError::new_err(format!(
                    "{other:?} is no fetch limit (the limits: {})",
                    known.join(", ")
                )));
            }
        }
    }
    Ok(o)
}

fn run_error(e: RunError) -> PyErr {
    RobotsieveError::new_err(e.to_string())
}

fn summary_json(summary: &Summary) -> String {
    serde_json::to_string(summary).expect("the summary serialises")
}

/// Fetches `urls` into `output` as `robotsieve fetch -o OUTPUT` does
/// (`OUTPUT.partial` while running, renamed at the end; .gz/.zst by the
/// name); returns the `--stats` summary as JSON text. The GIL is released
/// while fetching.
#[pyfunction]
#[pyo3(signature = (urls, user_agent, output, limits=None))]
pub fn fetch_to_file(
    py: Python<'_>,
    urls: Vec<String>,
    user_agent: &str,
    output: PathBuf,
    limits: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    let options = options(user_agent, limits)?;
    let summary = py.allow_threads(|| robotsieve_fetch::fetch_to_file(&options, urls, &output)).map_err(run_error)?;
    Ok(summary_json(&summary))
}

/// The records of a fetch as they complete (`robotsieve.fetch_iter`): a
/// thread runs the fetch and hands each origin's records over a bounded
/// channel; `__next__` waits for them with the GIL released, looking for
/// Ctrl-C every 100 ms. Dropping the iterator stops the fetch.
#[pyclass(frozen, module = "robotsieve._native")]
pub struct RecordIter {
    state: Mutex<IterState>,
}

struct IterState {
    chains: Option<Receiver<Vec<Record>>>,
    pending: std::collections::VecDeque<Record>,
    worker: Option<JoinHandle<Result<Summary, RunError>>>,
    summary: Option<String>,
}

/// Starts fetching `urls` on a thread; see [`RecordIter`].
#[pyfunction]
#[pyo3(signature = (urls, user_agent, limits=None))]
pub fn fetch_iter(urls: Vec<String>, user_agent: &str, limits: Option<&Bound<'_, PyDict>>) -> PyResult<RecordIter> {
    let options = options(user_agent, limits)?;
    let (tx, rx) = sync_channel::<Vec<Record>>(256);
    let worker = std::thread::Builder::new()
        .name("robotsieve-fetch".into())
        .spawn(move || {
            robotsieve_fetch::fetch_records(&options, urls, |chain| {
                tx.send(chain).map_err(|_| RunError("the records' reader stopped".into()))
            })
        })
        .map_err(|e| RobotsieveError::new_err(format!("cannot start the fetch thread: {e}")))?;
    let state = IterState { chains: Some(rx), pending: Default::default(), worker: Some(worker), summary: None };
    Ok(RecordIter { state: Mutex::new(state) })
}

#[pymethods]
impl RecordIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(record) = state.pending.pop_front() {
                return record_dict(py, &record).map(Some);
            }
            let Some(chains) = state.chains.take() else { return Ok(None) };
            let (chains, next) = py.allow_threads(move || {
                let next = chains.recv_timeout(Duration::from_millis(100));
                (chains, next)
            });
            match next {
                Ok(chain) => {
                    state.chains = Some(chains);
                    state.pending.extend(chain);
                }
                Err(RecvTimeoutError::Timeout) => {
                    state.chains = Some(chains);
                    py.check_signals()?;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let worker = state.worker.take().expect("the worker is joined once");
                    let result = py.allow_threads(|| worker.join());
                    let summary = result
                        .map_err(|_| RobotsieveError::new_err("the fetch thread panicked"))?
                        .map_err(run_error)?;
                    state.summary = Some(summary_json(&summary));
                    return Ok(None);
                }
            }
        }
    }

    /// The run's summary as JSON text once every record has been read, else None.
    #[getter]
    fn summary_json(&self) -> Option<String> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).summary.clone()
    }
}

/// A record as a dict: every field of the record line, `None` where the
/// line leaves it out, and `body` as bytes (the line's `body`, or its
/// `body_b64` decoded).
fn record_dict<'py>(py: Python<'py>, r: &Record) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("url", &r.url)?;
    d.set_item("status", r.status)?;
    d.set_item("body", PyBytes::new(py, &r.body))?;
    d.set_item("truncated", r.truncated)?;
    d.set_item("fetched_at", r.fetched_at.map(|t| t.to_string()))?;
    d.set_item("location", r.location.as_deref())?;
    d.set_item("error", r.error.as_deref())?;
    d.set_item("max_age", r.max_age)?;
    d.set_item("retry_after", r.retry_after)?;
    d.set_item("attempts", r.attempts)?;
    d.set_item("elapsed_ms", r.elapsed_ms)?;
    d.set_item("ftp_reply", r.ftp_reply.as_deref())?;
    Ok(d)
}

/// The registrable domain of `host` by the Public Suffix List compiled in,
/// or None (an IP address, a public suffix itself).
#[pyfunction]
pub fn registrable_domain(host: &str) -> Option<String> {
    robotsieve_fetch::registrable_domain(host)
}

/// The site key of each input line (its host's registrable domain, else
/// the host, else the line), to keep one site's lines in one task.
#[pyfunction]
pub fn sites_of_lines(py: Python<'_>, lines: Vec<Option<String>>) -> Vec<Option<String>> {
    py.allow_threads(|| lines.iter().map(|l| l.as_deref().map(robotsieve_fetch::site_of_line)).collect())
}

/// Checks the user agent and limits as `fetch` would (ValueError naming a
/// bad one), without fetching: the Spark driver checks before its tasks.
#[pyfunction]
#[pyo3(signature = (user_agent, limits=None))]
pub fn check_fetch_options(user_agent: &str, limits: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    options(user_agent, limits).map(|_| ())
}
