//! One HTTP request on a connection robotsieve opens itself: TCP to an
//! address [`crate::dns`] gave, TLS with ALPN (`h2`, `http/1.1`), hyper's
//! HTTP/1.1 or HTTP/2 client over it, no redirect policy (the chain is
//! followed by [`crate::chain`]), and the body read through its
//! `Content-Encoding` with a cap counted after decoding.

use crate::body::{BodyDecoder, Decoded};
use crate::proxy::Proxy;
use crate::record::{ErrorClass, FetchError};
use crate::target::{Target, TargetScheme};
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio::time::{timeout, timeout_at, Duration, Instant};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::ServerName;

/// The TLS client configuration: the system's roots plus `--ca-cert`, ALPN
/// offering HTTP/2 and HTTP/1.1.
pub fn tls_config(extra_cas: &[impl AsRef<Path>]) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    roots.add_parsable_certificates(native.certs);
    for path in extra_cas {
        let path = path.as_ref();
        let pem = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let certs: Vec<_> = rustls_pemfile::certs(&mut &pem[..])
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{}: not PEM certificates: {e}", path.display()))?;
        if certs.is_empty() {
            return Err(format!("{}: holds no PEM certificate", path.display()));
        }
        for cert in certs {
            roots.add(cert).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    let mut config = rustls::ClientConfig::builder_with_provider(crypto_provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The cryptography TLS uses: *ring*, which builds in seconds on two cores
/// (aws-lc-rs needs cmake and minutes). Its lack of post-quantum key
/// exchange does not matter for public robots.txt files.
///
/// Key exchange offers X25519 first, as curl and browsers do: the provider's
/// own order starts with P-384, whose key share costs client and server
/// several times X25519's on every handshake (the loopback benchmark's
/// server spent three times the CPU on fetch's handshakes as on curl's).
#[allow(deprecated)]
pub fn crypto_provider() -> Arc<rustls::crypto::CryptoProvider> {
    use rustls::crypto::ring::kx_group::{SECP256R1, SECP384R1, X25519};
    let mut provider = rustls::crypto::ring::default_provider();
    provider.kx_groups = vec![X25519, SECP256R1, SECP384R1];
    Arc::new(provider)
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for T {}

enum Sender {
    Http1(http1::SendRequest<Empty<Bytes>>),
    Http2(http2::SendRequest<Empty<Bytes>>),
}

/// An open connection to one scheme, host and port at one address.
pub struct Connection {
    /// `scheme://host:port` it was opened for: what may reuse it.
    key: String,
    /// Through a proxy to a plain-http target: requests in absolute form
    /// with the proxy's `Proxy-Authorization`.
    via_proxy: Option<Arc<Proxy>>,
    sender: Sender,
    driver: JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// What a connection needs from the fetcher's settings.
#[derive(Clone)]
pub struct ClientSettings {
    /// TLS configuration.
    pub tls: Arc<rustls::ClientConfig>,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// Deadline for TCP connect plus TLS handshake, per address.
    pub connect_timeout: Duration,
    /// Deadline for the response headers after the request is sent.
    pub response_timeout: Duration,
    /// `--proxy`: every connection goes to the proxy (the addresses given
    /// to [`Connection::open`] are the proxy's).
    pub proxy: Option<Arc<Proxy>>,
}

/// The answer to one request: status, headers, decoded body.
pub struct Answer {
    /// HTTP status.
    pub status: u16,
    /// Response headers.
    pub headers: http::HeaderMap,
    /// The body, decoded and capped.
    pub body: Decoded,
}

/// The host as an authority spells it (IPv6 literals in brackets).
fn authority_host(target: &Target) -> String {
    match target.host.contains(':') {
        true => format!("[{}]", target.host),
        false => target.host.clone(),
    }
}

fn connection_key(target: &Target) -> String {
    format!("{:?}://{}:{}", target.scheme, target.host, target.port)
}

impl Connection {
    /// Whether this connection may carry a request to `target`.
    pub fn serves(&self, target: &Target) -> bool {
        self.key == connection_key(target)
            && match &self.sender {
                Sender::Http1(s) => !s.is_closed(),
                Sender::Http2(s) => !s.is_closed(),
            }
    }

    /// Opens a connection to `target` at the first of `addrs` that answers.
    pub async fn open(
        target: &Target,
        addrs: &[SocketAddr],
        settings: &ClientSettings,
        deadline: Instant,
    ) -> Result<Connection, FetchError> {
        let mut last = FetchError::new(ErrorClass::Connect, "no address to connect to");
        for &addr in addrs {
            let attempt = timeout(settings.connect_timeout, Self::open_at(target, addr, settings));
            match timeout_at(deadline, attempt).await {
                Ok(Ok(Ok(connection))) => return Ok(connection),
                Ok(Ok(Err(e))) => last = e,
                Ok(Err(_)) => {
                    last = FetchError::new(
                        ErrorClass::Timeout,
                        format!("connecting to {addr} took longer than {:?}", settings.connect_timeout),
                    )
                }
                Err(_) => {
                    return Err(FetchError::new(
                        ErrorClass::Timeout,
                        format!("the total deadline passed connecting to {addr}"),
                    ))
                }
            }
        }
        Err(last)
    }

    async fn open_at(target: &Target, addr: SocketAddr, settings: &ClientSettings) -> Result<Connection, FetchError> {
        let tcp = TcpStream::connect(addr).await.map_err(|e| {
            let class = match e.kind() {
                io::ErrorKind::ConnectionRefused => ErrorClass::Refused,
                io::ErrorKind::ConnectionReset => ErrorClass::Reset,
                io::ErrorKind::TimedOut => ErrorClass::Timeout,
                _ => ErrorClass::Connect,
            };
            FetchError::new(class, format!("{addr}: {e}"))
        })?;
        let mut tcp = tcp;
        let _ = tcp.set_nodelay(true);
        let mut via_proxy = None;
        if let Some(proxy) = &settings.proxy {
            match target.scheme {
                TargetScheme::Https => {
                    proxy.tunnel(&mut tcp, &format!("{}:{}", authority_host(target), target.port)).await?
                }
                _ => via_proxy = Some(proxy.clone()),
            }
        }
        let (io, h2): (Box<dyn Io>, bool) = match target.scheme {
            TargetScheme::Https => {
                let name = ServerName::try_from(target.host.clone())
                    .map_err(|e| FetchError::new(ErrorClass::Tls, format!("{}: {e}", target.host)))?;
                let tls = tokio_rustls::TlsConnector::from(settings.tls.clone())
                    .connect(name, tcp)
                    .await
                    .map_err(|e| classify_io(&e, ErrorClass::Tls, &format!("{addr}: TLS handshake: ")))?;
                let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
                (Box::new(tls), h2)
            }
            _ => (Box::new(tcp), false),
        };
        let io = TokioIo::new(io);
        let protocol = |e: hyper::Error| FetchError::new(ErrorClass::Protocol, format!("{addr}: handshake: {e}"));
        let (sender, driver) = if h2 {
            let (sender, conn) = http2::Builder::new(TokioExecutor::new()).handshake(io).await.map_err(protocol)?;
            (Sender::Http2(sender), tokio::spawn(async move { drop(conn.await) }))
        } else {
            let (sender, conn) = http1::Builder::new().handshake(io).await.map_err(protocol)?;
            (Sender::Http1(sender), tokio::spawn(async move { drop(conn.await) }))
        };
        Ok(Connection { key: connection_key(target), via_proxy, sender, driver })
    }

    /// Sends `GET target` and reads the answer, at most `cap` bytes of body
    /// after decoding, all before `deadline`.
    pub async fn get(
        &mut self,
        target: &Target,
        settings: &ClientSettings,
        cap: usize,
        deadline: Instant,
    ) -> Result<Answer, FetchError> {
        let absolute = matches!(self.sender, Sender::Http2(_)) || self.via_proxy.is_some();
        let builder = http::Request::get(if absolute { target.url.clone() } else { target.path.clone() });
        let builder = match self.sender {
            Sender::Http1(_) => builder.header(http::header::HOST, &target.authority),
            Sender::Http2(_) => builder,
        };
        let builder = match self.via_proxy.as_ref().and_then(|p| p.authorization()) {
            Some(authorization) => builder.header(http::header::PROXY_AUTHORIZATION, authorization),
            None => builder,
        };
        let request = builder
            .header(http::header::USER_AGENT, &settings.user_agent)
            .header(http::header::ACCEPT, "text/plain,*/*;q=0.8")
            .header(http::header::ACCEPT_ENCODING, "gzip, deflate, br")
            .body(Empty::<Bytes>::new())
            .map_err(|e| FetchError::new(ErrorClass::Protocol, format!("cannot make the request: {e}")))?;
        let sent = async {
            match &mut self.sender {
                Sender::Http1(s) => {
                    s.ready().await?;
                    s.send_request(request).await
                }
                Sender::Http2(s) => {
                    s.ready().await?;
                    s.send_request(request).await
                }
            }
        };
        let response = match timeout_at(deadline, timeout(settings.response_timeout, sent)).await {
            Err(_) => {
                return Err(FetchError::new(ErrorClass::Timeout, "the total deadline passed waiting for the response"))
            }
            Ok(Err(_)) => {
                return Err(FetchError::new(
                    ErrorClass::Timeout,
                    format!("no response headers within {:?}", settings.response_timeout),
                ))
            }
            Ok(Ok(Err(e))) => return Err(classify_hyper(&e, ErrorClass::Protocol, "response: ")),
            Ok(Ok(Ok(response))) => response,
        };
        let (parts, mut incoming) = response.into_parts();
        let mut decoder = BodyDecoder::new(parts.headers.get(http::header::CONTENT_ENCODING), cap);
        loop {
            let frame = match timeout_at(deadline, incoming.frame()).await {
                Err(_) => {
                    return Err(FetchError::new(ErrorClass::Timeout, "the total deadline passed reading the body"))
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => return Err(classify_hyper(&e, ErrorClass::Body, "body: ")),
                Ok(Some(Ok(frame))) => frame,
            };
            if let Ok(data) = frame.into_data() {
                if decoder.push(&data)? {
                    // Cut at the cap: the rest is never read.
                    self.driver.abort();
                    break;
                }
            }
        }
        let body = decoder.finish()?;
        Ok(Answer { status: parts.status.as_u16(), headers: parts.headers, body })
    }
}

/// The class of a hyper error, from the I/O error behind it when there is one.
fn classify_hyper(e: &hyper::Error, otherwise: ErrorClass, prefix: &str) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<io::Error>() {
            return classify_io(io, otherwise, prefix);
        }
        source = s.source();
    }
    let detail = match std::error::Error::source(e) {
        Some(cause) => format!("{prefix}{e}: {cause}"),
        None => format!("{prefix}{e}"),
    };
    let class =
        if e.is_incomplete_message() && otherwise == ErrorClass::Protocol { ErrorClass::Reset } else { otherwise };
    FetchError::new(class, detail)
}

fn classify_io(e: &io::Error, otherwise: ErrorClass, prefix: &str) -> FetchError {
    let class = match e.kind() {
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted | io::ErrorKind::BrokenPipe => {
            ErrorClass::Reset
        }
        io::ErrorKind::TimedOut => ErrorClass::Timeout,
        _ => otherwise,
    };
    FetchError::new(class, format!("{prefix}{e}"))
}
