//! The fault catalogue (docs/fetch.md): each row served by the test server
//! on loopback and fetched, and the record Google's rules need checked.

use flate2::write::GzEncoder;
use robotsieve_fetch::test_server::{DnsServer, FtpBehaviour, FtpServer, HttpProxy, Pki, Ports, Reply, TestServer};
use robotsieve_fetch::{run, DnsOptions, Ending, FetchOptions, ResolveOverride, RunPaths};
use serde_json::Value;
use std::collections::HashMap;
use std::io::Write;
use std::net::IpAddr;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const REAL: &str = "1.envato.market.txt";

fn real_body() -> Vec<u8> {
    match robotsieve_testkit::shared_dir() {
        Some(dir) => std::fs::read(dir.join("realworld/robots").join(REAL)).unwrap(),
        None => b"User-agent: *\nDisallow: /\n".to_vec(),
    }
}

fn big_body() -> Vec<u8> {
    // 600 KB of rules; the last one lies past 512,000 bytes.
    let mut body = b"User-agent: *\n".to_vec();
    let mut n = 0;
    while body.len() < 600_000 {
        body.extend_from_slice(format!("Disallow: /early-{n:08}\n").as_bytes());
        n += 1;
    }
    body.extend_from_slice(b"Disallow: /past-the-cut\n");
    body
}

fn gzip_bomb() -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), flate2::Compression::best());
    for _ in 0..100 {
        e.write_all(&[b'#'; 1 << 20]).unwrap();
    }
    e.finish().unwrap()
}

/// The test server's ports, known once it listens.
static PORTS: OnceLock<Ports> = OnceLock::new();

fn routes() -> impl Fn(&str, &str) -> Reply + Send + Sync + 'static {
    let real = real_body();
    let big = big_body();
    let bomb = gzip_bomb();
    move |host: &str, path: &str| {
        let ports = *PORTS.get().unwrap();
        let chain = |host: &str| -> Option<Reply> {
            // chain-N.test: N redirects through 301, 302, 307, 308, then 200.
            let n: usize = host.strip_prefix("chain-")?.strip_suffix(".test")?.parse().ok()?;
            let hop: usize = if path == "/robots.txt" { 0 } else { path.strip_prefix("/hop")?.parse().ok()? };
            Some(match hop < n {
                true => Reply::redirect([301, 302, 307, 308][hop % 4], &format!("/hop{}", hop + 1)),
                false => Reply::status(200, &format!("User-agent: *\nDisallow: /after-{n}\n")),
            })
        };
        if let Some(reply) = chain(host) {
            return reply;
        }
        match (host, path) {
            ("real.test" | "h2only.test" | "v6.test" | "xn--bcher-kva.test" | "dns.test", "/robots.txt") => {
                Reply::Full(200, vec![("cache-control".into(), "max-age=600".into())], real.clone())
            }
            ("html.test", _) => Reply::Full(
                200,
                vec![("content-type".into(), "text/html".into())],
                b"<html><body>Not here</body></html>".to_vec(),
            ),
            ("latin1.test", _) => Reply::Full(200, vec![], b"User-agent: *\nDisallow: /caf\xe9\n".to_vec()),
            ("big.test", _) => Reply::Full(200, vec![], big.clone()),
            ("bomb.test", _) => Reply::Full(200, vec![("content-encoding".into(), "gzip".into())], bomb.clone()),
            ("relative.test", "/robots.txt") => Reply::redirect(301, "sub/robots.txt"),
            ("relative.test", "/sub/robots.txt") => Reply::redirect(
                302,
                "//real.test:REPLACED/robots.txt".replace("REPLACED", &ports.http.to_string()).as_str(),
            ),
            ("loop.test", "/robots.txt") => Reply::redirect(301, "/a"),
            ("loop.test", "/a") => Reply::redirect(301, "/robots.txt"),
            ("cross.test", _) => Reply::redirect(301, &format!("https://real.test:{}/robots.txt", ports.https)),
            ("to-loopback.test", _) => Reply::redirect(302, &format!("http://127.0.0.1:{}/robots.txt", ports.http)),
            ("to-v6.test", _) => Reply::redirect(302, &format!("http://[::1]:{}/robots.txt", ports.http_v6)),
            ("to-metadata.test", _) => Reply::redirect(302, "http://169.254.169.254/latest/meta-data/"),
            ("s304.test", _) => Reply::status(304, ""),
            ("s401.test", _) => Reply::status(401, "no"),
            ("s403.test", _) => Reply::status(403, "no"),
            ("s404.test", _) => Reply::status(404, "no"),
            ("s410.test", _) => Reply::status(410, "no"),
            ("s429.test", _) => Reply::Full(429, vec![("retry-after".into(), "1".into())], Vec::new()),
            ("s500.test", _) => Reply::status(500, "oops"),
            ("s503.test", _) => Reply::Full(503, vec![("retry-after".into(), "120".into())], Vec::new()),
            ("slow.test", _) => Reply::SlowHeaders(Duration::from_secs(5)),
            ("trickle.test", _) => Reply::Trickle(Duration::from_millis(200), 100),
            ("reset.test", _) => Reply::ResetMidBody,
            ("chunked.test", _) => Reply::BrokenChunked,
            ("lie.test", _) => Reply::LyingLength,
            ("127.0.0.1" | "::1", _) => Reply::status(200, "User-agent: *\nDisallow: /internal\n"),
            _ => Reply::status(404, "no such host here"),
        }
    }
}

const HOSTS: &[&str] = &[
    "real.test",
    "html.test",
    "latin1.test",
    "big.test",
    "bomb.test",
    "relative.test",
    "loop.test",
    "cross.test",
    "to-loopback.test",
    "to-v6.test",
    "to-metadata.test",
    "s304.test",
    "s401.test",
    "s403.test",
    "s404.test",
    "s410.test",
    "s429.test",
    "s500.test",
    "s503.test",
    "slow.test",
    "trickle.test",
    "reset.test",
    "chunked.test",
    "lie.test",
    "h2only.test",
    "v6.test",
    "xn--bcher-kva.test",
    "refused.test",
    "expired.test",
    "unknown-ca.test",
    "chain-1.test",
    "chain-5.test",
    "chain-6.test",
    "chain-4.test",
];

struct World {
    server: TestServer,
    dns: DnsServer,
    silent_dns: DnsServer,
    pki: Pki,
    _dir: tempfile::TempDir,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let mut names: Vec<&str> = HOSTS.to_vec();
        names.push("127.0.0.1");
        let pki = Pki::new(dir.path(), &names);
        let server = TestServer::start(&pki, routes());
        PORTS.set(server.ports).unwrap();
        let dns_names: HashMap<String, IpAddr> =
            [("dns.test".to_owned(), "127.0.0.1".parse().unwrap())].into_iter().collect();
        let dns = DnsServer::start(dns_names, false);
        let silent_dns = DnsServer::start(HashMap::new(), true);
        World { server, dns, silent_dns, pki, _dir: dir }
    })
}

/// Options for the world: every host mapped to its listener.
fn options() -> FetchOptions {
    let w = world();
    let p = w.server.ports;
    let mut o = FetchOptions::new("robotsieve-test/1.0");
    o.retries = 0;
    o.per_ip_interval = Duration::ZERO;
    o.connect_timeout = Duration::from_secs(2);
    o.response_timeout = Duration::from_secs(1);
    o.total_timeout = Duration::from_secs(3);
    o.ca_certs = vec![w.pki.ca_file.clone()];
    let mut overrides = Vec::new();
    let lo: IpAddr = "127.0.0.1".parse().unwrap();
    for host in HOSTS {
        let (http, https) = match *host {
            "h2only.test" => (p.http, p.h2_only),
            "expired.test" => (p.http, p.expired),
            "unknown-ca.test" => (p.http, p.unknown_ca),
            "refused.test" => (p.closed, p.closed),
            _ => (p.http, p.https),
        };
        let addr = if *host == "v6.test" { "::1".parse().unwrap() } else { lo };
        let http = if *host == "v6.test" { p.http_v6 } else { http };
        overrides.push(ResolveOverride { host: host.to_string(), port: http, addr });
        overrides.push(ResolveOverride { host: host.to_string(), port: https, addr });
    }
    o.dns = DnsOptions { overrides, server: Some(w.dns.addr), timeout: Duration::from_secs(1), ..o.dns };
    o
}

/// Fetches `lines` and returns the records, in the order written.
fn fetch_with(lines: &[String], options: &FetchOptions) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, lines.join("\n")).unwrap();
    let output = dir.path().join("out.jsonl");
    let paths = RunPaths { inputs: vec![input], output: output.clone(), resume: false };
    let (ending, _) = run(options, &paths, None).unwrap();
    assert_eq!(ending, Ending::Complete);
    let text = std::fs::read_to_string(&output).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn http(host: &str) -> String {
    format!("http://{host}:{}/robots.txt", world().server.ports.http)
}

fn https(host: &str) -> String {
    format!("https://{host}:{}/robots.txt", world().server.ports.https)
}

/// The one record of fetching `url`.
fn one(url: &str) -> Value {
    let records = fetch_with(&[url.to_owned()], &options());
    assert_eq!(records.len(), 1, "{records:#?}");
    records.into_iter().next().unwrap()
}

fn error_of(record: &Value) -> &str {
    assert_eq!(record["status"], 0, "{record}");
    record["error"].as_str().unwrap()
}

#[test]
fn a_real_robots_txt_is_kept_as_served() {
    for url in [http("real.test"), https("real.test")] {
        let r = one(&url);
        assert_eq!(r["status"], 200);
        assert_eq!(r["body"].as_str().unwrap().as_bytes(), real_body().as_slice());
        assert_eq!(r["max_age"], 600);
        assert_eq!(r["attempts"], 1);
        assert!(r["fetched_at"].as_str().unwrap().ends_with('Z'));
    }
    let seen = world().server.seen_for("real.test");
    let ua = seen[0].headers.iter().find(|(k, _)| k == "user-agent").unwrap();
    assert_eq!(ua.1, "robotsieve-test/1.0");
}

#[test]
fn html_and_non_utf8_bodies_are_recorded_as_they_come() {
    let r = one(&http("html.test"));
    assert_eq!((r["status"].as_u64(), r["body"].as_str()), (Some(200), Some("<html><body>Not here</body></html>")));
    let r = one(&http("latin1.test"));
    assert!(r.get("body").is_none());
    use base64::Engine as _;
    let body = base64::engine::general_purpose::STANDARD.decode(r["body_b64"].as_str().unwrap()).unwrap();
    assert_eq!(body, b"User-agent: *\nDisallow: /caf\xe9\n");
}

#[test]
fn bodies_are_cut_at_512000_bytes_after_decoding() {
    let r = one(&http("big.test"));
    let body = r["body"].as_str().unwrap();
    assert_eq!((body.len(), r["truncated"].as_bool()), (512_000, Some(true)));
    assert!(body.contains("Disallow: /early-00000000") && !body.contains("/past-the-cut"));
    let r = one(&http("bomb.test"));
    assert_eq!((r["body"].as_str().unwrap().len(), r["truncated"].as_bool()), (512_000, Some(true)));
}

#[test]
fn redirect_chains_are_followed_for_five_hops_each_its_own_record() {
    let p = world().server.ports.http;
    let records = fetch_with(&[http("chain-1.test")], &options());
    assert_eq!(records.iter().map(|r| r["status"].as_u64().unwrap()).collect::<Vec<_>>(), [301, 200]);
    assert_eq!(records[0]["location"], "/hop1");
    assert_eq!(records[1]["url"], format!("http://chain-1.test:{p}/hop1"));
    let records = fetch_with(&[http("chain-5.test")], &options());
    assert_eq!(
        records.iter().map(|r| r["status"].as_u64().unwrap()).collect::<Vec<_>>(),
        [301, 302, 307, 308, 301, 200]
    );
    // One connection carried the whole chain.
    let seen = world().server.seen_for("chain-5.test");
    assert!(seen.windows(2).all(|w| w[0].connection == w[1].connection), "{seen:?}");
    // A sixth redirect is recorded but not followed.
    let records = fetch_with(&[http("chain-6.test")], &options());
    assert_eq!(records.len(), 6);
    assert_eq!((records[5]["status"].as_u64(), records[5]["location"].as_str()), (Some(302), Some("/hop6")));
}

#[test]
fn relative_protocol_relative_and_looping_locations() {
    let p = world().server.ports.http;
    let records = fetch_with(&[http("relative.test")], &options());
    let urls: Vec<&str> = records.iter().map(|r| r["url"].as_str().unwrap()).collect();
    assert_eq!(urls, [http("relative.test"), format!("http://relative.test:{p}/sub/robots.txt"), http("real.test")]);
    assert_eq!(records[2]["status"], 200);
    let records = fetch_with(&[http("loop.test")], &options());
    assert_eq!(records.len(), 2, "a loop stops where it comes back: {records:#?}");
    assert_eq!(records[1]["location"], "/robots.txt");
}

#[test]
fn a_redirect_to_another_host_and_scheme() {
    let records = fetch_with(&[http("cross.test")], &options());
    assert_eq!(records.len(), 2);
    assert_eq!(
        (records[1]["url"].as_str().unwrap(), records[1]["status"].as_u64()),
        (https("real.test").as_str(), Some(200))
    );
}

#[test]
fn statuses_are_recorded_as_they_come() {
    for (host, status) in [
        ("s304.test", 304),
        ("s401.test", 401),
        ("s403.test", 403),
        ("s404.test", 404),
        ("s410.test", 410),
        ("s500.test", 500),
    ] {
        let r = one(&http(host));
        assert_eq!(r["status"], status, "{host}");
        assert!(r.get("error").is_none());
    }
    let r = one(&http("s429.test"));
    assert_eq!((r["status"].as_u64(), r["retry_after"].as_u64()), (Some(429), Some(1)));
    let r = one(&http("s503.test"));
    assert_eq!((r["status"].as_u64(), r["retry_after"].as_u64()), (Some(503), Some(120)));
}

#[test]
fn retries_honour_retry_after_and_record_the_attempts() {
    let mut o = options();
    o.retries = 2;
    o.retry_backoff = Duration::from_millis(10);
    o.retry_after_cap = Duration::from_millis(300);
    let before = world().server.seen_for("s429.test").len();
    let start = Instant::now();
    let records = fetch_with(&[http("s429.test")], &o);
    assert_eq!((records.len(), records[0]["attempts"].as_u64()), (1, Some(3)));
    assert_eq!(world().server.seen_for("s429.test").len() - before, 3);
    // Retry-After: 1 capped at 300 ms, twice.
    assert!(start.elapsed() >= Duration::from_millis(600), "{:?}", start.elapsed());
    let r = fetch_with(&[http("s404.test")], &o);
    assert_eq!(r[0]["attempts"], 1, "a 404 is not retried");
}

#[test]
fn slow_trickling_and_broken_answers_are_failures_with_their_class() {
    let start = Instant::now();
    assert!(error_of(&one(&http("slow.test"))).starts_with("timeout:"));
    let trickle = one(&http("trickle.test"));
    assert!(error_of(&trickle).starts_with("timeout: the total deadline"), "{trickle}");
    assert!(start.elapsed() < Duration::from_secs(6), "the deadlines held: {:?}", start.elapsed());
    let r = one(&http("reset.test"));
    assert!(error_of(&r).starts_with("reset:"), "{r}");
    let r = one(&http("chunked.test"));
    assert!(error_of(&r).starts_with("body:"), "{r}");
    let r = one(&http("lie.test"));
    assert!(error_of(&r).starts_with("body:"), "{r}");
}

#[test]
fn connection_and_name_failures() {
    let p = world().server.ports;
    let r = one(&format!("http://refused.test:{}/robots.txt", p.closed));
    assert!(error_of(&r).starts_with("refused:"), "{r}");
    let r = one(&http("nx.test"));
    assert!(error_of(&r).starts_with("dns: nx.test: no such name"), "{r}");
    let mut o = options();
    o.dns.server = Some(world().silent_dns.addr);
    let r = fetch_with(&[http("nx.test")], &o);
    assert!(error_of(&r[0]).starts_with("dns: nx.test: "), "{}", r[0]);
}

#[test]
fn tls_failures() {
    let p = world().server.ports;
    let r = one(&format!("https://expired.test:{}/robots.txt", p.expired));
    assert!(error_of(&r).starts_with("tls:") && error_of(&r).contains("xpired"), "{r}");
    let r = one(&format!("https://unknown-ca.test:{}/robots.txt", p.unknown_ca));
    assert!(error_of(&r).starts_with("tls:") && error_of(&r).contains("UnknownIssuer"), "{r}");
}

#[test]
fn http2_ipv6_idn_and_non_default_ports() {
    let p = world().server.ports;
    let r = one(&format!("https://h2only.test:{}/robots.txt", p.h2_only));
    assert_eq!(r["status"], 200);
    assert!(world().server.seen_for("h2only.test").iter().all(|s| s.version == "HTTP/2"));
    let r = one(&format!("http://v6.test:{}/", p.http_v6));
    assert_eq!(r["status"], 200);
    let r = one(&format!("http://bücher.test:{}/robots.txt", p.http));
    assert_eq!(
        (r["status"].as_u64(), r["url"].as_str().unwrap()),
        (Some(200), format!("http://xn--bcher-kva.test:{}/robots.txt", p.http).as_str())
    );
    let seen = world().server.seen_for("xn--bcher-kva.test");
    assert_eq!(seen.last().unwrap().host, format!("xn--bcher-kva.test:{}", p.http));
}

#[test]
fn user_info_is_never_sent() {
    let p = world().server.ports;
    let r = one(&format!("http://user:secret@real.test:{}/robots.txt", p.http));
    assert_eq!(r["url"], http("real.test"));
    let seen = world().server.seen_for("real.test");
    assert!(seen.iter().all(|s| s.headers.iter().all(|(k, v)| k != "authorization" && !v.contains("secret"))));
}

#[test]
fn internal_addresses_are_blocked_on_every_hop_and_every_answer() {
    let before = world().server.seen.lock().unwrap().len();
    for host in ["to-loopback.test", "to-v6.test", "to-metadata.test"] {
        let records = fetch_with(&[http(host)], &options());
        assert_eq!(records.len(), 2, "{records:#?}");
        assert!(error_of(&records[1]).starts_with("blocked: "), "{}", records[1]);
    }
    let seen = world().server.seen.lock().unwrap()[before..].to_vec();
    assert!(
        seen.iter().all(|s| s.path == "/robots.txt" && s.host.ends_with(".test") || s.host.contains(".test:")),
        "{seen:?}"
    );
    // A DNS answer that is loopback: blocked, unless --allow-private.
    let r = one(&http("dns.test"));
    assert!(error_of(&r).starts_with("blocked: dns.test is 127.0.0.1, a loopback address"), "{r}");
    let mut o = options();
    o.dns.allow_private = true;
    assert_eq!(fetch_with(&[http("dns.test")], &o)[0]["status"], 200);
    // An IP literal nobody named.
    let r = one(&format!("http://127.0.0.1:{}/robots.txt", world().server.ports.http));
    assert!(error_of(&r).starts_with("blocked:"), "{r}");
}

#[test]
fn input_lines_bare_hosts_duplicates_and_garbage() {
    let p = world().server.ports;
    let lines = [
        format!("real.test:{}", p.http),
        http("s404.test"),
        http("s404.test"),
        format!("http://s404.test:{}/", p.http),
        "not a url at all".to_owned(),
        "https://s404.test/some/page".to_owned(),
    ];
    let records = fetch_with(&lines, &options());
    let mut urls: Vec<&str> = records.iter().map(|r| r["url"].as_str().unwrap()).collect();
    urls.sort();
    let mut want = vec![
        http("real.test"),
        format!("https://real.test:{}/robots.txt", p.http),
        http("s404.test"),
        "not a url at all".to_owned(),
        "https://s404.test/some/page".to_owned(),
    ];
    want.sort();
    assert_eq!(urls, want);
    for r in &records {
        if r["url"] == "not a url at all" || r["url"] == "https://s404.test/some/page" {
            assert!(error_of(r).contains("not an origin"), "{r}");
        }
    }
}

/// FTP servers on loopback, one per behaviour, and options mapping
/// `ftp-NAME.test` to each.
struct FtpWorld {
    with_file: FtpServer,
    pasv_only: FtpServer,
    big: FtpServer,
    no_file: FtpServer,
    refused: FtpServer,
    unavailable: FtpServer,
}

fn ftp_world() -> &'static FtpWorld {
    static FTP: OnceLock<FtpWorld> = OnceLock::new();
    FTP.get_or_init(|| FtpWorld {
        with_file: FtpServer::start(FtpBehaviour::Serve(real_body()), true),
        pasv_only: FtpServer::start(FtpBehaviour::Serve(real_body()), false),
        big: FtpServer::start(FtpBehaviour::Serve(big_body()), true),
        no_file: FtpServer::start(FtpBehaviour::NoFile, true),
        refused: FtpServer::start(FtpBehaviour::RefuseLogin, true),
        unavailable: FtpServer::start(FtpBehaviour::Unavailable, true),
    })
}

fn ftp_servers() -> [(&'static str, &'static FtpServer); 6] {
    let w = ftp_world();
    [
        ("ftp-file.test", &w.with_file),
        ("ftp-pasv.test", &w.pasv_only),
        ("ftp-big.test", &w.big),
        ("ftp-none.test", &w.no_file),
        ("ftp-refused.test", &w.refused),
        ("ftp-421.test", &w.unavailable),
    ]
}

fn ftp_options() -> FetchOptions {
    let mut o = options();
    for (host, server) in ftp_servers() {
        o.dns.overrides.push(ResolveOverride {
            host: host.into(),
            port: server.port,
            addr: "127.0.0.1".parse().unwrap(),
        });
    }
    o
}

/// The one record of fetching `host`'s FTP origin.
fn ftp_one(host: &str) -> Value {
    let (_, server) = ftp_servers().into_iter().find(|(h, _)| *h == host).unwrap();
    let records = fetch_with(&[format!("ftp://{host}:{}/", server.port)], &ftp_options());
    assert_eq!(records.len(), 1, "{records:#?}");
    assert_eq!(records[0]["url"], format!("ftp://{host}:{}/robots.txt", server.port));
    records.into_iter().next().unwrap()
}

#[test]
fn ftp_a_file_is_fetched_with_an_anonymous_login_in_passive_mode() {
    let r = ftp_one("ftp-file.test");
    assert_eq!(r["status"], 200, "{r}");
    assert_eq!(r["body"].as_str().unwrap().as_bytes(), real_body().as_slice());
    assert_eq!(r["ftp_reply"], "226 Transfer complete");
    assert!(r.get("error").is_none() && r.get("truncated").is_none(), "{r}");
    let commands = ftp_world().with_file.commands.lock().unwrap().clone();
    assert_eq!(commands[..5], ["USER anonymous", "PASS anonymous@", "TYPE I", "EPSV", "RETR /robots.txt"]);

    // No EPSV: PASV, whose reply names 10.255.255.1; the data connection
    // goes to the control connection's peer (127.0.0.1) all the same.
    let r = ftp_one("ftp-pasv.test");
    assert_eq!((r["status"].as_u64(), r["ftp_reply"].as_str()), (Some(200), Some("226 Transfer complete")), "{r}");
    let commands = ftp_world().pasv_only.commands.lock().unwrap().clone();
    assert_eq!(&commands[3..6], ["EPSV", "PASV", "RETR /robots.txt"]);
    assert_eq!(ftp_world().pasv_only.data_connections.load(std::sync::atomic::Ordering::Relaxed), 1);

    // The size cap holds over FTP too.
    let r = ftp_one("ftp-big.test");
    let body = r["body"].as_str().unwrap();
    assert_eq!((r["status"].as_u64(), body.len(), r["truncated"].as_bool()), (Some(200), 512_000, Some(true)));
    assert!(!body.contains("/past-the-cut"));
}

#[test]
fn ftp_no_file_is_404_and_refusals_are_failures_with_the_reply() {
    let r = ftp_one("ftp-none.test");
    assert_eq!((r["status"].as_u64(), r["ftp_reply"].as_str()), (Some(404), Some("550 No such file")), "{r}");
    assert!(r.get("error").is_none() && r.get("body").is_none(), "{r}");

    let r = ftp_one("ftp-refused.test");
    assert!(error_of(&r).starts_with("protocol: the FTP server answered the anonymous login"), "{r}");
    assert_eq!(r["ftp_reply"], "530 Login incorrect");

    let r = ftp_one("ftp-421.test");
    assert!(error_of(&r).starts_with("protocol: "), "{r}");
    assert_eq!(r["ftp_reply"], "421 Too many users, try later");
}

#[test]
fn ftp_keeps_the_address_rule() {
    // An FTP server at an address nobody named: blocked before any command.
    let server = &ftp_world().no_file;
    let before = server.commands.lock().unwrap().len();
    let r = one(&format!("ftp://127.0.0.1:{}/", server.port));
    assert!(error_of(&r).starts_with("blocked: 127.0.0.1 is 127.0.0.1, a loopback address"), "{r}");
    assert!(r.get("ftp_reply").is_none());
    assert_eq!(server.commands.lock().unwrap().len(), before);
}

/// Records without what differs from run to run (when, how long).
fn comparable(mut records: Vec<Value>) -> Vec<String> {
    for r in &mut records {
        let r = r.as_object_mut().unwrap();
        r.remove("fetched_at");
        r.remove("elapsed_ms");
    }
    let mut lines: Vec<String> = records.iter().map(|r| r.to_string()).collect();
    lines.sort();
    lines
}

#[test]
fn a_proxy_carries_every_hop_and_the_records_equal_the_direct_fetch() {
    let proxy = HttpProxy::start();
    let p = world().server.ports;
    let urls = [http("real.test"), https("real.test"), http("chain-4.test"), http("cross.test")];
    let direct = fetch_with(&urls, &options());
    let mut o = options();
    o.proxy = Some(format!("http://alice:s3cret@127.0.0.1:{}", proxy.port).parse().unwrap());
    let before = world().server.seen.lock().unwrap().len();
    let proxied = fetch_with(&urls, &o);
    assert_eq!(proxied.len(), 1 + 1 + 5 + 2, "{proxied:#?}");
    assert_eq!(comparable(proxied), comparable(direct));

    // Every hop went through the proxy: http in absolute form, https
    // through a tunnel, each with the proxy's credentials.
    let seen = proxy.seen.lock().unwrap().clone();
    let mut lines: Vec<&str> = seen.iter().map(|s| s.line.as_str()).collect();
    lines.sort();
    let mut want = vec![
        format!("GET http://real.test:{}/robots.txt HTTP/1.1", p.http),
        format!("CONNECT real.test:{} HTTP/1.1", p.https),
        format!("GET http://chain-4.test:{}/robots.txt HTTP/1.1", p.http),
        format!("GET http://cross.test:{}/robots.txt HTTP/1.1", p.http),
        format!("CONNECT real.test:{} HTTP/1.1", p.https),
    ];
    want.extend((1..=4).map(|n| format!("GET http://chain-4.test:{}/hop{n} HTTP/1.1", p.http)));
    want.sort();
    assert_eq!(lines, want);
    // base64("alice:s3cret")
    assert!(seen.iter().all(|s| s.authorization.as_deref() == Some("Basic YWxpY2U6czNjcmV0")), "{seen:?}");
    // The origin never saw the credentials.
    let at_origin = world().server.seen.lock().unwrap()[before..].to_vec();
    assert!(at_origin.iter().all(|s| s.headers.iter().all(|(k, _)| k != "proxy-authorization")), "{at_origin:?}");
}

#[test]
fn through_a_proxy_ip_literals_keep_the_address_rule_and_ftp_is_refused() {
    let proxy = HttpProxy::start();
    let mut o = options();
    o.proxy = Some(format!("127.0.0.1:{}", proxy.port).parse().unwrap());
    let records = fetch_with(
        &[
            format!("http://127.0.0.1:{}/robots.txt", world().server.ports.http),
            http("to-metadata.test"),
            "ftp://ftp-file.test/".to_owned(),
        ],
        &o,
    );
    let by_url = |url: &str| records.iter().find(|r| r["url"] == url).unwrap_or_else(|| panic!("{url}: {records:#?}"));
    let r = by_url(&format!("http://127.0.0.1:{}/robots.txt", world().server.ports.http));
    assert!(error_of(r).starts_with("blocked: 127.0.0.1 is 127.0.0.1, a loopback address"), "{r}");
    let r = by_url("http://169.254.169.254/latest/meta-data/");
    assert!(error_of(r).starts_with("blocked: 169.254.169.254"), "{r}");
    let r = by_url("ftp://ftp-file.test/robots.txt");
    assert_eq!(error_of(r), "protocol: ftp:// is not fetched through an HTTP proxy (--proxy)");
    // Only the redirecting origin reached the proxy.
    let seen = proxy.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].line.starts_with("GET http://to-metadata.test:"), "{seen:?}");
}
