//! Names to addresses: the operator's overrides first (`--resolve`,
//! `--hosts-file`: trusted, so they may be loopback or private), then DNS by
//! hickory's async resolver (the system's servers, or `--dns-server`), whose
//! answers are cached. Every DNS answer is checked by the address rule
//! ([`crate::safety`]) here, so no caller can forget it.

use crate::record::{ErrorClass, FetchError};
use crate::safety::non_public_reason;
use hickory_resolver::config::{LookupIpStrategy, NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::name_server::TokioConnectionProvider;
use hickory_resolver::proto::xfer::Protocol;
use hickory_resolver::TokioResolver;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::time::Duration;

/// `--resolve HOST:PORT:ADDR`: this host and port connect to this address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolveOverride {
    /// The host, lower case, IPv6 literals without brackets.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The address.
    pub addr: IpAddr,
}

impl std::str::FromStr for ResolveOverride {
    type Err = String;

    /// `HOST:PORT:ADDR` as curl spells it (`[::1]` brackets allowed in ADDR).
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || format!("{text:?} is not HOST:PORT:ADDR");
        let (host, rest) = match text.strip_prefix('[') {
            Some(v6) => {
                let (host, rest) = v6.split_once("]:").ok_or_else(bad)?;
                (host, rest)
            }
            None => text.split_once(':').ok_or_else(bad)?,
        };
        let (port, addr) = rest.split_once(':').ok_or_else(bad)?;
        let port = port.parse().map_err(|_| bad())?;
        let addr = addr.trim_start_matches('[').trim_end_matches(']').parse().map_err(|_| bad())?;
        Ok(ResolveOverride { host: host.to_ascii_lowercase(), port, addr })
    }
}

/// Where the resolver asks.
#[derive(Clone, Debug, Default)]
pub struct DnsOptions {
    /// `--resolve` entries.
    pub overrides: Vec<ResolveOverride>,
    /// `--hosts-file` entries: host to addresses (any port).
    pub hosts: HashMap<String, Vec<IpAddr>>,
    /// `--dns-server`: ask this server instead of the system's.
    pub server: Option<SocketAddr>,
    /// How long one DNS query may take.
    pub timeout: Duration,
    /// `--allow-private`: DNS answers may be loopback, private, link-local
    /// or reserved too.
    pub allow_private: bool,
}

/// Reads a hosts file (`/etc/hosts` format: `ADDR NAME...`, `#` comments).
pub fn read_hosts_file(path: &Path) -> Result<HashMap<String, Vec<IpAddr>>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut hosts: HashMap<String, Vec<IpAddr>> = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_whitespace();
        let Some(addr) = words.next() else { continue };
        let addr: IpAddr =
            addr.parse().map_err(|_| format!("{}:{}: {addr:?} is not an IP address", path.display(), n + 1))?;
        for name in words {
            hosts.entry(name.to_ascii_lowercase()).or_default().push(addr);
        }
    }
    Ok(hosts)
}

/// The addresses of a host, each with whether the operator named it.
pub struct Resolver {
    options: DnsOptions,
    dns: TokioResolver,
}

impl Resolver {
    /// A resolver with `options` (must be made inside the runtime).
    pub fn new(options: DnsOptions) -> Result<Resolver, String> {
        let mut opts = ResolverOpts::default();
        opts.timeout = options.timeout;
        opts.attempts = 1;
        // Each name is asked for once a fetch: the cache serves a chain's
        // later hops and a bare host's second scheme, seconds apart, so a
        // few thousand answers cover what is in flight. A larger cache only
        // holds memory (about 1 KB an answer: 65,536 of them added 900
        // bytes per origin between 10,000 and 100,000 origins).
        opts.cache_size = 4_096;
        opts.ip_strategy = LookupIpStrategy::Ipv4thenIpv6;
        let dns = match options.server {
            Some(server) => {
                let mut config = ResolverConfig::new();
                config.add_name_server(NameServerConfig::new(server, Protocol::Udp));
                TokioResolver::builder_with_config(config, TokioConnectionProvider::default())
                    .with_options(opts)
                    .build()
            }
            None => match TokioResolver::builder_tokio() {
                Ok(builder) => builder.with_options(opts).build(),
                Err(e) => return Err(format!("cannot read the system's DNS configuration: {e}")),
            },
        };
        Ok(Resolver { options, dns })
    }

    /// The addresses to connect to for `host`:`port`, or why there are none.
    /// An IP literal is its own address; it and DNS answers must pass the
    /// address rule, overrides need not.
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, FetchError> {
        let named: Vec<IpAddr> =
            self.options.overrides.iter().filter(|o| o.host == host && o.port == port).map(|o| o.addr).collect();
        if !named.is_empty() {
            return Ok(named.into_iter().map(|ip| SocketAddr::new(ip, port)).collect());
        }
        if let Some(addrs) = self.options.hosts.get(host) {
            return Ok(addrs.iter().map(|&ip| SocketAddr::new(ip, port)).collect());
        }
        let addrs: Vec<IpAddr> = match host.parse::<IpAddr>() {
            Ok(ip) => vec![ip],
            Err(_) => {
                let answer = self.dns.lookup_ip(format!("{host}.")).await.map_err(|e| {
                    let detail = if e.is_nx_domain() {
                        format!("{host}: no such name")
                    } else if e.is_no_records_found() {
                        format!("{host}: no address records")
                    } else {
                        format!("{host}: {e}")
                    };
                    FetchError::new(ErrorClass::Dns, detail)
                })?;
                answer.iter().collect()
            }
        };
        if addrs.is_empty() {
            return Err(FetchError::new(ErrorClass::Dns, format!("{host}: no address records")));
        }
        self.check(host, &addrs)?;
        Ok(addrs.into_iter().map(|ip| SocketAddr::new(ip, port)).collect())
    }

    /// Through a proxy, which resolves names itself: `host` may be
    /// connected to unless it is an IP literal that the address rule
    /// refuses (and no override names it, and `--allow-private` is off).
    pub fn check_for_proxy(&self, host: &str, port: u16) -> Result<(), FetchError> {
        let named = self.options.overrides.iter().any(|o| o.host == host && o.port == port)
            || self.options.hosts.contains_key(host);
        match host.parse::<IpAddr>() {
            Ok(ip) if !named => self.check(host, &[ip]),
            _ => Ok(()),
        }
    }

    /// The address rule over an answer: any non-public address blocks the
    /// name (a name that resolves to an internal address among public ones
    /// is as suspect as one that resolves to it alone).
    fn check(&self, host: &str, addrs: &[IpAddr]) -> Result<(), FetchError> {
        if self.options.allow_private {
            return Ok(());
        }
        for &ip in addrs {
            if let Some(reason) = non_public_reason(ip) {
                return Err(FetchError::new(ErrorClass::Blocked, format!("{host} is {ip}, a {reason} address")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_overrides_parse_as_curl_spells_them() {
        let o: ResolveOverride = "Example.com:443:127.0.0.2".parse().unwrap();
        assert_eq!((o.host.as_str(), o.port, o.addr), ("example.com", 443, "127.0.0.2".parse().unwrap()));
        let o: ResolveOverride = "a.test:80:[::1]".parse().unwrap();
        assert_eq!(o.addr, "::1".parse::<IpAddr>().unwrap());
        assert!("a.test:80".parse::<ResolveOverride>().is_err());
        assert!("a.test:x:127.0.0.1".parse::<ResolveOverride>().is_err());
    }
}
