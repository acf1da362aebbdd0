//! One origin's fetch: `GET /robots.txt`, redirects followed for up to five
//! hops (each hop its own record), the whole chain under one deadline, a
//! connection reused along the chain while it serves the next hop, the
//! address rule on every hop, and retries of the whole chain with backoff.

use crate::body::Decoded;
use crate::cache_headers;
use crate::dns::Resolver;
use crate::ftp::{self, FtpLimits};
use crate::http::{ClientSettings, Connection};
use crate::politeness::{IpPermit, Place};
use crate::record::{ErrorClass, FetchError, Record};
use crate::target::{Target, TargetScheme};
use robotsieve_sources::Timestamp;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::time::SystemTime;
use tokio::time::{sleep, Duration, Instant};

/// Redirects followed after the first request, as Google follows them.
pub const MAX_REDIRECTS: usize = 5;

/// What every chain of a run shares.
pub struct ChainContext {
    /// Names to addresses.
    pub resolver: Resolver,
    /// TLS, user agent, connect and response timeouts.
    pub client: ClientSettings,
    /// Deadline for a whole chain (all hops, bodies included).
    pub total_timeout: Duration,
    /// Body bytes kept, after decoding.
    pub max_body: usize,
    /// Retries after a 5xx, 429 or failure with no answer.
    pub retries: u32,
    /// The first retry's delay, doubled for each further one.
    pub backoff: Duration,
    /// The longest `Retry-After` honoured within the run.
    pub retry_after_cap: Duration,
    /// `--proxy`: the proxy's addresses; every http(s) hop connects there.
    pub proxy_addrs: Option<Vec<SocketAddr>>,
}

/// Through a proxy the fetcher never learns a target's address, so the
/// per-IP limits apply per host name: this is the name's key in the
/// politeness table, an address in `fd00::/8` made from a hash of the
/// name (never connected to; two names share a key with a chance of one
/// in 2^64 a pair).
fn proxied_host_key(host: &str) -> IpAddr {
    let hash = robotsieve_core::url::origin_hash(host.as_bytes());
    IpAddr::V6(Ipv6Addr::from((0xfd00_u128 << 112) | u128::from(hash)))
}

fn now() -> (Timestamp, i64) {
    let since = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    (Timestamp::from_unix(since.as_secs() as i64), since.as_secs() as i64)
}

impl ChainContext {
    /// The records of `target`'s fetch (its redirect chain), after retries:
    /// the last attempt's.
    pub async fn fetch(&self, target: &Target, place: &mut Place) -> Vec<Record> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut records = self.chain(target, place).await;
            let last = records.last().expect("a chain has a first hop");
            if attempt > self.retries || !last.is_retryable() {
                for record in &mut records {
                    record.attempts = attempt;
                }
                return records;
            }
            let backoff = self.backoff * 2u32.saturating_pow(attempt - 1);
            let delay = last.retry_after.map_or(backoff, |s| Duration::from_secs(s).min(self.retry_after_cap));
            place.wait().await;
            sleep(delay).await;
            place.resume().await;
        }
    }

    async fn chain(&self, first: &Target, place: &mut Place) -> Vec<Record> {
        let deadline = Instant::now() + self.total_timeout;
        let mut records: Vec<Record> = Vec::new();
        let mut connection: Option<(Connection, IpPermit)> = None;
        let mut target = first.clone();
        loop {
            let started = Instant::now();
            if target.scheme == TargetScheme::Ftp {
                let mut record = self.ftp(&target, place, deadline).await;
                record.fetched_at = Some(now().0);
                record.elapsed_ms = started.elapsed().as_millis() as u64;
                records.push(record);
                return records;
            }
            let result = self.hop(&target, &mut connection, place, deadline).await;
            let (fetched_at, now_unix) = now();
            let mut record = match result {
                Ok((status, headers, body)) => {
                    let location = match status {
                        300..=399 => headers
                            .get(http::header::LOCATION)
                            .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned()),
                        _ => None,
                    };
                    let retry_after = match status {
                        429 | 503 => cache_headers::retry_after(&headers, now_unix),
                        _ => None,
                    };
                    Record {
                        url: target.url.clone(),
                        status,
                        body: body.bytes,
                        truncated: body.truncated,
                        location,
                        max_age: cache_headers::max_age(&headers, now_unix),
                        retry_after,
                        ..Record::default()
                    }
                }
                Err(error) => {
                    connection = None;
                    Record::failed(&target.url, &error)
                }
            };
            record.fetched_at = Some(fetched_at);
            record.elapsed_ms = started.elapsed().as_millis() as u64;
            let next = record.location.as_deref().and_then(|l| target.redirect(l));
            records.push(record);
            match next {
                Some(next) if records.len() <= MAX_REDIRECTS && !records.iter().any(|r| r.url == next.url) => {
                    target = next
                }
                _ => return records,
            }
        }
    }

    /// An `ftp://` target's one record (FTP has no redirects): the address
    /// rule on the control connection's address, the per-IP limits, then
    /// [`ftp::retrieve`].
    async fn ftp(&self, target: &Target, place: &mut Place, deadline: Instant) -> Record {
        if self.proxy_addrs.is_some() {
            let error = FetchError::new(ErrorClass::Protocol, "ftp:// is not fetched through an HTTP proxy (--proxy)");
            return Record::failed(&target.url, &error);
        }
        let addrs = match tokio::time::timeout_at(deadline, self.resolver.resolve(&target.host, target.port)).await {
            Err(_) => {
                Err(FetchError::new(ErrorClass::Dns, format!("{}: no answer before the total deadline", target.host)))
            }
            Ok(resolved) => resolved,
        };
        let addrs = match addrs {
            Ok(addrs) => addrs,
            Err(error) => return Record::failed(&target.url, &error),
        };
        let _permit = place.use_ip(addrs[0].ip()).await;
        let limits = FtpLimits {
            connect_timeout: self.client.connect_timeout,
            response_timeout: self.client.response_timeout,
            deadline,
            cap: self.max_body,
        };
        match ftp::retrieve(&target.path, &addrs, limits).await {
            Ok(answer) => Record {
                url: target.url.clone(),
                status: answer.status,
                body: answer.body.bytes,
                truncated: answer.body.truncated,
                ftp_reply: Some(answer.reply),
                ..Record::default()
            },
            Err(failure) => Record { ftp_reply: failure.reply, ..Record::failed(&target.url, &failure.error) },
        }
    }

    /// One request: the address rule, a connection (reused when it serves
    /// this target), the answer.
    async fn hop(
        &self,
        target: &Target,
        connection: &mut Option<(Connection, IpPermit)>,
        place: &mut Place,
        deadline: Instant,
    ) -> Result<(u16, http::HeaderMap, Decoded), FetchError> {
        let reusable = connection.as_ref().is_some_and(|(c, _)| c.serves(target));
        if !reusable {
            *connection = None;
            let (addrs, politeness_key) = match &self.proxy_addrs {
                Some(proxy_addrs) => {
                    self.resolver.check_for_proxy(&target.host, target.port)?;
                    (proxy_addrs.clone(), proxied_host_key(&target.host))
                }
                None => {
                    let addrs = tokio::time::timeout_at(deadline, self.resolver.resolve(&target.host, target.port))
                        .await
                        .map_err(|_| {
                            FetchError::new(
                                ErrorClass::Dns,
                                format!("{}: no answer before the total deadline", target.host),
                            )
                        })??;
                    let ip = addrs[0].ip();
                    (addrs, ip)
                }
            };
            let permit = place.use_ip(politeness_key).await;
            let opened = Connection::open(target, &addrs, &self.client, deadline).await?;
            *connection = Some((opened, permit));
        }
        let (open, _) = connection.as_mut().expect("connected above");
        let answer = open.get(target, &self.client, self.max_body, deadline).await?;
        if answer.body.truncated {
            *connection = None;
        }
        Ok((answer.status, answer.headers, answer.body))
    }
}
