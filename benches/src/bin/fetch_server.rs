//! The server `benches/fetch_speed.sh` fetches from: N origins
//! `oNNNNNNN.bench.test` on loopback, served over plain HTTP and HTTPS (a
//! test CA made at start, a `*.bench.test` certificate) by the fetch
//! crate's test server on many loopback addresses, each origin's
//! `/robots.txt` a real file from `../shared/realworld/robots`.
//!
//! One origin in fifty fails fast, in turn a 404, a 503, and a refused
//! connection (its name points at an address nothing listens on). There
//! are no redirects and no timeouts. Files over 500,000 bytes are left out,
//! so that every client reads every body whole.
//!
//! Everything the clients need is written into `--dir` before `ready`
//! appears there: `ca.pem`; `hosts` (names to addresses, /etc/hosts format);
//! `http.txt` and `https.txt` (the robots.txt URLs); `curl-http-NNN.cfg` and
//! `curl-https-NNN.cfg` (curl config files of `--parts` URLs each, one
//! `next` group a URL with its own `resolve` line, so that curl connects
//! where the hosts file says: curl loads a transfer's whole `resolve` list
//! when the transfer starts, so one list of 5,000 names for every transfer
//! made a part of 5,000 take minutes);
//! and with `--dns`, `dns` (the address of a DNS server on loopback that
//! answers for every name). Then it serves until killed.
//!
//! Usage: `fetch_server --dir DIR --origins N [--addresses K] [--http-port P]
//! [--https-port P] [--workers W] [--parts N] [--dns] [--shared DIR]`

use robotsieve_fetch::test_server::{DnsServer, ManyServer, Pki, Reply};
use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The largest file served (bytes): below the fetcher's 512,000-byte cap.
const LARGEST: u64 = 500_000;

/// One origin in this many fails fast.
const FAILING_EVERY: usize = 50;

/// The address of refused origins: nothing listens there.
const REFUSED: Ipv4Addr = Ipv4Addr::new(127, 2, 0, 1);

struct Args {
    dir: PathBuf,
    origins: usize,
    addresses: usize,
    http_port: u16,
    https_port: u16,
    workers: usize,
    parts: usize,
    dns: bool,
    shared: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        dir: PathBuf::new(),
        origins: 100_000,
        addresses: 1000,
        http_port: 18080,
        https_port: 18443,
        workers: 2,
        parts: 5000,
        dns: false,
        shared: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--dns" {
            args.dns = true;
            continue;
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |v: &str| v.parse::<usize>().map_err(|_| format!("{flag} {v}: not a number"));
        match flag.as_str() {
            "--dir" => args.dir = PathBuf::from(value),
            "--origins" => args.origins = number(&value)?,
            "--addresses" => args.addresses = number(&value)?,
            "--http-port" => args.http_port = number(&value)? as u16,
            "--https-port" => args.https_port = number(&value)? as u16,
            "--workers" => args.workers = number(&value)?,
            "--parts" => args.parts = number(&value)?,
            "--shared" => args.shared = Some(PathBuf::from(value)),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if args.dir.as_os_str().is_empty() {
        return Err("--dir DIR is required".into());
    }
    if !(1..=60_000).contains(&args.addresses) {
        return Err(format!("--addresses {}: between 1 and 60,000", args.addresses));
    }
    Ok(args)
}

/// What origin `i` answers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Body,
    NotFound,
    Unavailable,
    Refused,
}

fn kind(i: usize) -> Kind {
    if i % FAILING_EVERY != FAILING_EVERY - 1 {
        return Kind::Body;
    }
    match (i / FAILING_EVERY) % 3 {
        0 => Kind::NotFound,
        1 => Kind::Unavailable,
        _ => Kind::Refused,
    }
}

fn name(i: usize) -> String {
    format!("o{i:07}.bench.test")
}

/// The listening address `k` (0-based): 127.1.x.y.
fn listen_ip(k: usize) -> Ipv4Addr {
    let k = k + 1;
    Ipv4Addr::new(127, 1, (k >> 8) as u8, (k & 255) as u8)
}

fn address_of(i: usize, addresses: usize) -> Ipv4Addr {
    match kind(i) {
        Kind::Refused => REFUSED,
        _ => listen_ip(i % addresses),
    }
}

/// The real files, sorted by name, those over [`LARGEST`] left out.
fn bodies(shared: &Path) -> Result<Vec<Vec<u8>>, String> {
    let dir = shared.join("realworld/robots");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for path in names {
        let len = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?.len();
        if len <= LARGEST {
            out.push(std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?);
        }
    }
    if out.is_empty() {
        return Err(format!("{}: no robots.txt files", dir.display()));
    }
    Ok(out)
}

/// Writes `path` through `fill`, renamed into place when whole.
fn write_file(path: &Path, fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), String> {
    let partial = path.with_extension("partial");
    let mut out = BufWriter::new(std::fs::File::create(&partial).map_err(|e| format!("{}: {e}", partial.display()))?);
    fill(&mut out).and_then(|_| out.flush()).map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, path).map_err(|e| format!("{}: {e}", path.display()))
}

fn write_inputs(args: &Args) -> Result<(), String> {
    let n = args.origins;
    let ca = args.dir.join("ca.pem");
    write_file(&args.dir.join("hosts"), |out| {
        (0..n).try_for_each(|i| writeln!(out, "{} {}", address_of(i, args.addresses), name(i)))
    })?;
    for (scheme, port) in [("http", args.http_port), ("https", args.https_port)] {
        write_file(&args.dir.join(format!("{scheme}.txt")), |out| {
            (0..n).try_for_each(|i| writeln!(out, "{scheme}://{}:{port}/robots.txt", name(i)))
        })?;
        if args.parts == 0 {
            continue;
        }
        for (part, start) in (0..n).step_by(args.parts).enumerate() {
            let end = (start + args.parts).min(n);
            write_file(&args.dir.join(format!("curl-{scheme}-{part:03}.cfg")), |out| {
                for i in start..end {
                    if i > start {
                        writeln!(out, "next")?;
                    }
                    writeln!(out, "resolve = \"{}:{port}:{}\"", name(i), address_of(i, args.addresses))?;
                    writeln!(out, "url = \"{scheme}://{}:{port}/robots.txt\"", name(i))?;
                    writeln!(out, "output = \"/dev/null\"\ncacert = \"{}\"", ca.display())?;
                    writeln!(out, "write-out = \"%{{http_code}}\\n\"\nsilent")?;
                }
                Ok(())
            })?;
        }
    }
    Ok(())
}

fn serve(args: Args) -> Result<(), String> {
    let shared = args
        .shared
        .clone()
        .or_else(robotsieve_testkit::shared_dir)
        .ok_or("the shared data is not found: set ROBOTSIEVE_SHARED or pass --shared DIR")?;
    let bodies = Arc::new(bodies(&shared)?);
    std::fs::create_dir_all(&args.dir).map_err(|e| format!("{}: {e}", args.dir.display()))?;
    let _ = std::fs::remove_file(args.dir.join("ready"));
    write_inputs(&args)?;
    let pki = Pki::new(&args.dir, &["*.bench.test"]);
    let listen = |port: u16| -> Vec<SocketAddr> {
        (0..args.addresses.min(args.origins.max(1))).map(|k| SocketAddr::new(IpAddr::V4(listen_ip(k)), port)).collect()
    };
    let routes = move |host: &str, _path: &str| {
        let index = host.strip_prefix('o').and_then(|h| h.split('.').next()).and_then(|d| d.parse::<usize>().ok());
        match index.map(|i| (i, kind(i))) {
            Some((i, Kind::Body)) => {
                Reply::Full(200, vec![("content-type".into(), "text/plain".into())], bodies[i % bodies.len()].clone())
            }
            Some((_, Kind::Unavailable)) => Reply::status(503, "unavailable\n"),
            _ => Reply::status(404, "not found\n"),
        }
    };
    let _server = ManyServer::start(&pki, &listen(args.http_port), &listen(args.https_port), args.workers, routes)
        .map_err(|e| e.to_string())?;
    let _dns = if args.dns {
        let names: HashMap<String, IpAddr> =
            (0..args.origins).map(|i| (name(i), IpAddr::V4(address_of(i, args.addresses)))).collect();
        let dns = DnsServer::start(names, false);
        write_file(&args.dir.join("dns"), |out| writeln!(out, "{}", dns.addr))?;
        Some(dns)
    } else {
        None
    };
    write_file(&args.dir.join("ready"), |out| writeln!(out, "{}", std::process::id()))?;
    loop {
        std::thread::park();
    }
}

fn main() -> ExitCode {
    match parse_args().and_then(serve) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fetch_server: {e}");
            ExitCode::from(2)
        }
    }
}
