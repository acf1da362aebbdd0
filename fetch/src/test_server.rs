//! The test server of the fetcher's tests and the CLI's (feature
//! `test-server`, never in a normal build): virtual hosts on loopback over
//! HTTP/1.1 (written by hand so that every fault can be made byte by byte)
//! and HTTP/2 (hyper), TLS with a CA made at test time (rcgen), and a DNS
//! server on loopback. Nothing it serves leaves loopback.

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::collections::HashMap;
use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio_rustls::rustls;

/// What a route answers.
#[derive(Clone)]
pub enum Reply {
    /// Status, headers, body.
    Full(u16, Vec<(String, String)>, Vec<u8>),
    /// The headers only after this delay.
    SlowHeaders(Duration),
    /// A body sent one byte every `Duration`, `usize` bytes in all.
    Trickle(Duration, usize),
    /// Headers and part of the body, then a TCP reset.
    ResetMidBody,
    /// `Transfer-Encoding: chunked` with a chunk size that is no number.
    BrokenChunked,
    /// `Content-Length: 1000`, 100 bytes, then the connection closed.
    LyingLength,
}

impl Reply {
    /// A plain answer with a text body.
    pub fn status(status: u16, body: &str) -> Reply {
        Reply::Full(status, vec![("content-type".into(), "text/plain".into())], body.as_bytes().to_vec())
    }

    /// A redirect.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::Full(status, vec![("location".into(), location.into())], Vec::new())
    }
}

/// A request the server saw.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The `Host` (or `:authority`) header.
    pub host: String,
    /// The path.
    pub path: String,
    /// Header lines, lower-case names.
    pub headers: Vec<(String, String)>,
    /// The connection it came on (numbered per server).
    pub connection: u64,
    /// `HTTP/1.1` or `HTTP/2`.
    pub version: &'static str,
}

/// What the server answers for a host and a path.
type Routes = Arc<dyn Fn(&str, &str) -> Reply + Send + Sync>;

/// Test certificates: a CA, and server certificates it signed (a good one,
/// an expired one) and one from a CA nobody trusts.
pub struct Pki {
    /// The CA certificate (PEM file).
    pub ca_file: PathBuf,
    good: Arc<rustls::ServerConfig>,
    h2_only: Arc<rustls::ServerConfig>,
    expired: Arc<rustls::ServerConfig>,
    unknown: Arc<rustls::ServerConfig>,
}

fn server_config(cert: &rcgen::Certificate, key: &rcgen::KeyPair, alpn: &[&[u8]]) -> Arc<rustls::ServerConfig> {
    let key = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(crate::http::crypto_provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.der().clone()], key)
        .unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

impl Pki {
    /// Makes the certificates for `names` (DNS names and IP addresses).
    pub fn new(dir: &Path, names: &[&str]) -> Pki {
        let ca = |cn: &str| {
            let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
            params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            params.distinguished_name.push(rcgen::DnType::CommonName, cn);
            let key = rcgen::KeyPair::generate().unwrap();
            (params.self_signed(&key).unwrap(), key)
        };
        let (ca_cert, ca_key) = ca("robotsieve test CA");
        let (other_cert, other_key) = ca("nobody's CA");
        let leaf = |issuer: &rcgen::Certificate, issuer_key: &rcgen::KeyPair, expired: bool| {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            let mut params = rcgen::CertificateParams::new(names).unwrap();
            if expired {
                params.not_before = rcgen::date_time_ymd(2020, 1, 1);
                params.not_after = rcgen::date_time_ymd(2021, 1, 1);
            }
            let key = rcgen::KeyPair::generate().unwrap();
            (params.signed_by(&key, issuer, issuer_key).unwrap(), key)
        };
        let (good, good_key) = leaf(&ca_cert, &ca_key, false);
        let (expired, expired_key) = leaf(&ca_cert, &ca_key, true);
        let (unknown, unknown_key) = leaf(&other_cert, &other_key, false);
        let ca_file = dir.join("ca.pem");
        std::fs::write(&ca_file, ca_cert.pem()).unwrap();
        Pki {
            ca_file,
            good: server_config(&good, &good_key, &[b"h2", b"http/1.1"]),
            h2_only: server_config(&good, &good_key, &[b"h2"]),
            expired: server_config(&expired, &expired_key, &[b"http/1.1"]),
            unknown: server_config(&unknown, &unknown_key, &[b"http/1.1"]),
        }
    }
}

/// The listeners' ports.
#[derive(Clone, Copy, Debug)]
pub struct Ports {
    /// Plain HTTP on 127.0.0.1.
    pub http: u16,
    /// HTTPS (h2 and http/1.1) on 127.0.0.1.
    pub https: u16,
    /// HTTPS offering only h2.
    pub h2_only: u16,
    /// HTTPS with an expired certificate.
    pub expired: u16,
    /// HTTPS with a certificate from an unknown CA.
    pub unknown_ca: u16,
    /// Plain HTTP on [::1].
    pub http_v6: u16,
    /// A port nothing listens on (127.0.0.1).
    pub closed: u16,
}

/// The running server.
pub struct TestServer {
    /// Its ports.
    pub ports: Ports,
    /// Every request seen.
    pub seen: Arc<Mutex<Vec<Seen>>>,
    /// Connections accepted.
    pub connections: Arc<AtomicU64>,
    _runtime: tokio::runtime::Runtime,
}

struct Shared {
    routes: Routes,
    /// Where requests are recorded; `None` records nothing (the benchmark's
    /// server, which would otherwise grow by every request it answers).
    seen: Option<Arc<Mutex<Vec<Seen>>>>,
    connections: Arc<AtomicU64>,
}

impl Shared {
    fn record(&self, seen: impl FnOnce() -> Seen) {
        if let Some(log) = &self.seen {
            log.lock().unwrap().push(seen());
        }
    }
}

impl TestServer {
    /// Starts the listeners on a runtime of their own.
    pub fn start(pki: &Pki, routes: impl Fn(&str, &str) -> Reply + Send + Sync + 'static) -> TestServer {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicU64::new(0));
        let shared =
            Arc::new(Shared { routes: Arc::new(routes), seen: Some(seen.clone()), connections: connections.clone() });
        let ports = runtime.block_on(async {
            let listen = |addr: &str, tls: Option<Arc<rustls::ServerConfig>>| {
                let addr: SocketAddr = addr.parse().unwrap();
                let shared = shared.clone();
                async move {
                    let listener = TcpListener::bind(addr).await.unwrap();
                    let port = listener.local_addr().unwrap().port();
                    tokio::spawn(accept(listener, tls, shared));
                    port
                }
            };
            let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            Ports {
                http: listen("127.0.0.1:0", None).await,
                https: listen("127.0.0.1:0", Some(pki.good.clone())).await,
                h2_only: listen("127.0.0.1:0", Some(pki.h2_only.clone())).await,
                expired: listen("127.0.0.1:0", Some(pki.expired.clone())).await,
                unknown_ca: listen("127.0.0.1:0", Some(pki.unknown.clone())).await,
                http_v6: listen("[::1]:0", None).await,
                closed,
            }
        });
        TestServer { ports, seen, connections, _runtime: runtime }
    }

    /// The requests seen for `host` (the Host header's name, port dropped).
    pub fn seen_for(&self, host: &str) -> Vec<Seen> {
        let seen = self.seen.lock().unwrap();
        seen.iter().filter(|s| s.host.split(':').next() == Some(host)).cloned().collect()
    }
}

/// The benchmark's server (`benches/fetch_speed.sh`): the same HTTP/1.1 and
/// HTTP/2 serving as [`TestServer`], on many loopback addresses at once
/// (plain HTTP on some, HTTPS with the test CA's certificate on others),
/// recording no request, so that it stays small and flat however many
/// requests it answers.
pub struct ManyServer {
    /// Connections accepted.
    pub connections: Arc<AtomicU64>,
    _runtime: tokio::runtime::Runtime,
}

impl ManyServer {
    /// Listens on every address of `plain` (HTTP) and `tls` (HTTPS offering
    /// h2 and http/1.1), each with the port it names, on a runtime of
    /// `workers` threads; an address that cannot be bound is an error naming
    /// it.
    pub fn start(
        pki: &Pki,
        plain: &[SocketAddr],
        tls: &[SocketAddr],
        workers: usize,
        routes: impl Fn(&str, &str) -> Reply + Send + Sync + 'static,
    ) -> std::io::Result<ManyServer> {
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(workers.max(1)).enable_all().build()?;
        let connections = Arc::new(AtomicU64::new(0));
        let shared = Arc::new(Shared { routes: Arc::new(routes), seen: None, connections: connections.clone() });
        let both = plain.iter().map(|a| (a, None)).chain(tls.iter().map(|a| (a, Some(pki.good.clone()))));
        for (&addr, config) in both {
            let listener = runtime
                .block_on(TcpListener::bind(addr))
                .map_err(|e| std::io::Error::new(e.kind(), format!("cannot listen on {addr}: {e}")))?;
            runtime.spawn(accept(listener, config, shared.clone()));
        }
        Ok(ManyServer { connections, _runtime: runtime })
    }
}

async fn accept(listener: TcpListener, tls: Option<Arc<rustls::ServerConfig>>, shared: Arc<Shared>) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else { continue };
        let id = shared.connections.fetch_add(1, Ordering::Relaxed);
        let shared = shared.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => serve_http1(tcp, id, shared).await,
                Some(config) => {
                    let Ok(stream) = tokio_rustls::TlsAcceptor::from(config).accept(tcp).await else { return };
                    if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
                        serve_http2(stream, id, shared).await
                    } else {
                        serve_http1(stream, id, shared).await
                    }
                }
            }
        });
    }
}

async fn serve_http2<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(stream: S, id: u64, shared: Arc<Shared>) {
    let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
        let shared = shared.clone();
        async move {
            let host = request.uri().authority().map(|a| a.to_string()).unwrap_or_default();
            let path = request.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
            shared.record(|| Seen {
                host: host.clone(),
                path: path.clone(),
                headers: request
                    .headers()
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned()))
                    .collect(),
                connection: id,
                version: "HTTP/2",
            });
            let name = host.split(':').next().unwrap_or("").to_owned();
            let (status, headers, body) = match (shared.routes)(&name, &path) {
                Reply::Full(status, headers, body) => (status, headers, body),
                _ => (500, Vec::new(), b"this fault is HTTP/1.1 only".to_vec()),
            };
            let mut response = hyper::Response::builder().status(status);
            for (k, v) in headers {
                response = response.header(k, v);
            }
            Ok::<_, std::convert::Infallible>(response.body(Full::new(Bytes::from(body))).unwrap())
        }
    });
    let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// HTTP/1.1 by hand: reads request heads, answers by route, keeps the
/// connection open until a fault or the client closes it.
async fn serve_http1<S: AsyncRead + AsyncWrite + Unpin + Send + 'static>(mut stream: S, id: u64, shared: Arc<Shared>) {
    let mut buf = Vec::new();
    loop {
        let head_end = loop {
            if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        buf.drain(..head_end);
        let mut lines = head.split("\r\n");
        let path = lines.next().unwrap_or("").split(' ').nth(1).unwrap_or("").to_owned();
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        let host = headers.iter().find(|(k, _)| k == "host").map(|(_, v)| v.clone()).unwrap_or_default();
        shared.record(|| Seen { host: host.clone(), path: path.clone(), headers, connection: id, version: "HTTP/1.1" });
        let name = if host.starts_with('[') {
            host.split(']').next().unwrap_or("").trim_start_matches('[').to_owned()
        } else {
            host.split(':').next().unwrap_or("").to_owned()
        };
        match (shared.routes)(&name, &path) {
            Reply::Full(status, headers, body) => {
                let mut out = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\n", body.len()).into_bytes();
                for (k, v) in headers {
                    write!(out, "{k}: {v}\r\n").unwrap();
                }
                out.extend_from_slice(b"\r\n");
                out.extend_from_slice(&body);
                if stream.write_all(&out).await.is_err() {
                    return;
                }
            }
            Reply::SlowHeaders(delay) => {
                tokio::time::sleep(delay).await;
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").await;
            }
            Reply::Trickle(every, n) => {
                let _ = stream.write_all(format!("HTTP/1.1 200 OK\r\ncontent-length: {n}\r\n\r\n").as_bytes()).await;
                for _ in 0..n {
                    tokio::time::sleep(every).await;
                    if stream.write_all(b"#").await.is_err() {
                        return;
                    }
                }
            }
            Reply::ResetMidBody => {
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\nUser-agent: *\nDisallow: /private\n")
                    .await;
                let _ = stream.flush().await;
                tokio::time::sleep(Duration::from_millis(100)).await;
                reset(stream);
                return;
            }
            Reply::BrokenChunked => {
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nUser-\r\nzz\r\nagent\r\n")
                    .await;
                tokio::time::sleep(Duration::from_millis(100)).await;
                return;
            }
            Reply::LyingLength => {
                let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n").await;
                let _ = stream.write_all(&[b'x'; 100]).await;
                let _ = stream.shutdown().await;
                return;
            }
        }
    }
}

/// Closes with a TCP reset (SO_LINGER 0) where the stream is plain TCP.
fn reset<S: 'static>(stream: S) {
    let any: Box<dyn std::any::Any> = Box::new(stream);
    if let Ok(tcp) = any.downcast::<TcpStream>() {
        // A zero linger never blocks the drop: the socket is reset at once.
        #[allow(deprecated)]
        let _ = tcp.set_linger(Some(Duration::ZERO));
        drop(tcp);
    }
}

/// A DNS server on 127.0.0.1: A records from `names`, NXDOMAIN for the
/// rest; `silent` answers nothing at all.
pub struct DnsServer {
    /// Its address.
    pub addr: SocketAddr,
    _runtime: tokio::runtime::Runtime,
}

impl DnsServer {
    /// Starts the server.
    pub fn start(names: HashMap<String, IpAddr>, silent: bool) -> DnsServer {
        use hickory_resolver::proto::op::{Message, MessageType, ResponseCode};
        use hickory_resolver::proto::rr::{RData, Record};
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let socket = runtime.block_on(UdpSocket::bind("127.0.0.1:0")).unwrap();
        let addr = socket.local_addr().unwrap();
        runtime.spawn(async move {
            let mut buf = vec![0u8; 4096];
            loop {
                let Ok((n, from)) = socket.recv_from(&mut buf).await else { continue };
                if silent {
                    continue;
                }
                let Ok(query) = Message::from_vec(&buf[..n]) else { continue };
                let mut answer = Message::new();
                answer.set_id(query.id()).set_message_type(MessageType::Response).set_recursion_available(true);
                answer.set_recursion_desired(query.recursion_desired());
                for q in query.queries() {
                    answer.add_query(q.clone());
                    let name = q.name().to_ascii().trim_end_matches('.').to_ascii_lowercase();
                    match names.get(&name) {
                        Some(IpAddr::V4(ip)) if q.query_type() == hickory_resolver::proto::rr::RecordType::A => {
                            answer.add_answer(Record::from_rdata(q.name().clone(), 60, RData::A((*ip).into())));
                        }
                        Some(_) => {}
                        None => {
                            answer.set_response_code(ResponseCode::NXDomain);
                        }
                    }
                }
                let _ = socket.send_to(&answer.to_vec().unwrap(), from).await;
            }
        });
        DnsServer { addr, _runtime: runtime }
    }
}

/// What an [`FtpServer`] does with a client.
#[derive(Clone, Debug)]
pub enum FtpBehaviour {
    /// Anonymous login accepted; `RETR /robots.txt` sends these bytes.
    Serve(Vec<u8>),
    /// Anonymous login accepted; `RETR` answers `550`.
    NoFile,
    /// `PASS` answers `530 Login incorrect`.
    RefuseLogin,
    /// The greeting is `421 Too many users, try later`.
    Unavailable,
}

/// A minimal FTP server on 127.0.0.1, written by hand on tokio: greeting,
/// `USER`/`PASS`, `TYPE`, `EPSV` (when enabled, else `502`), `PASV` (whose
/// reply names the address 10.255.255.1, which a client must not use: the
/// data listener is on 127.0.0.1), `RETR`, `QUIT`.
pub struct FtpServer {
    /// The control port.
    pub port: u16,
    /// Every command received, in order (`PASS` included).
    pub commands: Arc<Mutex<Vec<String>>>,
    /// Data connections accepted.
    pub data_connections: Arc<AtomicU64>,
    _runtime: tokio::runtime::Runtime,
}

impl FtpServer {
    /// Starts a server that behaves as `behaviour`; `epsv` false answers
    /// `EPSV` with `502`, so that the client falls back to `PASV`.
    pub fn start(behaviour: FtpBehaviour, epsv: bool) -> FtpServer {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let commands = Arc::new(Mutex::new(Vec::new()));
        let data_connections = Arc::new(AtomicU64::new(0));
        let (seen, data_count) = (commands.clone(), data_connections.clone());
        runtime.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                tokio::spawn(serve_ftp(tcp, behaviour.clone(), epsv, seen.clone(), data_count.clone()));
            }
        });
        FtpServer { port, commands, data_connections, _runtime: runtime }
    }
}

async fn serve_ftp(
    tcp: TcpStream,
    behaviour: FtpBehaviour,
    epsv: bool,
    seen: Arc<Mutex<Vec<String>>>,
    data_count: Arc<AtomicU64>,
) {
    use tokio::io::AsyncBufReadExt;
    let (read, mut write) = tcp.into_split();
    let mut lines = tokio::io::BufReader::new(read).lines();
    if matches!(behaviour, FtpBehaviour::Unavailable) {
        let _ = write.write_all(b"421 Too many users, try later\r\n").await;
        return;
    }
    let _ = write.write_all(b"220-robotsieve test FTP\r\n220 ready\r\n").await;
    let mut passive: Option<TcpListener> = None;
    while let Ok(Some(line)) = lines.next_line().await {
        seen.lock().unwrap().push(line.clone());
        let (verb, argument) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        let reply: String = match verb.to_ascii_uppercase().as_str() {
            "USER" => "331 Send your address as the password".into(),
            "PASS" if matches!(behaviour, FtpBehaviour::RefuseLogin) => "530 Login incorrect".into(),
            "PASS" => "230 Logged in".into(),
            "TYPE" => "200 Type set".into(),
            "EPSV" if !epsv => "502 Not implemented".into(),
            "EPSV" | "PASV" => {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                let port = listener.local_addr().unwrap().port();
                passive = Some(listener);
                match verb.eq_ignore_ascii_case("EPSV") {
                    true => format!("229 Entering Extended Passive Mode (|||{port}|)"),
                    false => format!("227 Entering Passive Mode (10,255,255,1,{},{})", port >> 8, port & 0xff),
                }
            }
            "RETR" => {
                let file = match (&behaviour, argument) {
                    (FtpBehaviour::Serve(bytes), "/robots.txt") => Some(bytes.clone()),
                    _ => None,
                };
                match (file, passive.take()) {
                    (None, _) => "550 No such file".into(),
                    (Some(_), None) => "425 Use PASV first".into(),
                    (Some(bytes), Some(listener)) => {
                        let accepted = tokio::time::timeout(Duration::from_secs(5), listener.accept()).await;
                        let Ok(Ok((mut data, _))) = accepted else {
                            let _ = write.write_all(b"425 No data connection\r\n").await;
                            continue;
                        };
                        data_count.fetch_add(1, Ordering::Relaxed);
                        let _ = write.write_all(b"150 Opening BINARY mode data connection\r\n").await;
                        let sent = data.write_all(&bytes).await;
                        drop(data);
                        match sent {
                            Ok(()) => "226 Transfer complete".into(),
                            Err(_) => "426 Connection closed; transfer aborted".into(),
                        }
                    }
                }
            }
            "QUIT" => {
                let _ = write.write_all(b"221 Goodbye\r\n").await;
                return;
            }
            _ => "502 Not implemented".into(),
        };
        if write.write_all(format!("{reply}\r\n").as_bytes()).await.is_err() {
            return;
        }
    }
}

/// A request an [`HttpProxy`] received.
#[derive(Clone, Debug)]
pub struct ProxySeen {
    /// The request line: `GET http://host:port/path HTTP/1.1` or
    /// `CONNECT host:port HTTP/1.1`.
    pub line: String,
    /// Its `Proxy-Authorization`, if any.
    pub authorization: Option<String>,
}

/// An HTTP proxy on 127.0.0.1 for the tests: `CONNECT` tunnels and
/// absolute-form requests, each forwarded to 127.0.0.1 at the port its
/// target names (the proxy's own resolver: every name is loopback), with
/// `Proxy-Authorization` dropped. Answers are relayed by their
/// `Content-Length` (or until the origin closes).
pub struct HttpProxy {
    /// Its port.
    pub port: u16,
    /// Every request received, in order.
    pub seen: Arc<Mutex<Vec<ProxySeen>>>,
    _runtime: tokio::runtime::Runtime,
}

impl HttpProxy {
    /// Starts the proxy.
    pub fn start() -> HttpProxy {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        runtime.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { continue };
                tokio::spawn(serve_proxy(tcp, log.clone()));
            }
        });
        HttpProxy { port, seen, _runtime: runtime }
    }
}

/// Reads up to the end of a head (`\r\n\r\n`) into `buf`; the head's
/// length, or `None` when the stream ends first.
async fn read_head<S: AsyncRead + Unpin>(stream: &mut S, buf: &mut Vec<u8>) -> Option<usize> {
    loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(p + 4);
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// The port of `host:port` or `[v6]:port` (`default` when none is written).
fn port_of(authority: &str, default: u16) -> u16 {
    match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(':') => port.parse().unwrap_or(default),
        _ => default,
    }
}

async fn serve_proxy(mut client: TcpStream, seen: Arc<Mutex<Vec<ProxySeen>>>) {
    let mut buf = Vec::new();
    loop {
        let Some(head_end) = read_head(&mut client, &mut buf).await else { return };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        buf.drain(..head_end);
        let mut lines = head.split("\r\n");
        let line = lines.next().unwrap_or("").to_owned();
        let headers: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
        let authorization = headers
            .iter()
            .find_map(|h| h.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("proxy-authorization")))
            .map(|(_, v)| v.trim().to_owned());
        seen.lock().unwrap().push(ProxySeen { line: line.clone(), authorization });
        let mut words = line.split(' ');
        let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        if method == "CONNECT" {
            let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", port_of(target, 443))).await else {
                let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n").await;
                return;
            };
            if client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await.is_err()
                || upstream.write_all(&buf).await.is_err()
            {
                return;
            }
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            return;
        }
        let Some(rest) = target.strip_prefix("http://") else {
            let _ = client.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n").await;
            return;
        };
        let (authority, path) = rest.find('/').map_or((rest, "/"), |p| (&rest[..p], &rest[p..]));
        let mut forwarded = format!("{method} {path} HTTP/1.1\r\n");
        for header in headers.iter().filter(|h| !h.to_ascii_lowercase().starts_with("proxy-authorization:")) {
            forwarded.push_str(header);
            forwarded.push_str("\r\n");
        }
        forwarded.push_str("\r\n");
        let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", port_of(authority, 80))).await else {
            let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n").await;
            continue;
        };
        if upstream.write_all(forwarded.as_bytes()).await.is_err() {
            return;
        }
        let mut answer = Vec::new();
        let Some(answer_head) = read_head(&mut upstream, &mut answer).await else { return };
        let length = String::from_utf8_lossy(&answer[..answer_head]).split("\r\n").find_map(|h| {
            let (k, v) = h.split_once(':')?;
            k.eq_ignore_ascii_case("content-length").then(|| v.trim().parse::<usize>().ok()).flatten()
        });
        match length {
            Some(length) => {
                while answer.len() < answer_head + length {
                    let mut chunk = [0u8; 16384];
                    match upstream.read(&mut chunk).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => answer.extend_from_slice(&chunk[..n]),
                    }
                }
                if client.write_all(&answer).await.is_err() {
                    return;
                }
            }
            None => {
                let _ = client.write_all(&answer).await;
                let _ = tokio::io::copy(&mut upstream, &mut client).await;
                return;
            }
        }
    }
}
