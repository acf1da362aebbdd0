//! One robots.txt over FTP, as the seeds of the robots.txt rules describe
//! it: an anonymous login, `TYPE I`, passive mode (`EPSV`, falling back to
//! `PASV`) and `RETR /robots.txt`, written by hand on tokio.
//!
//! The data connection always goes to the control connection's peer
//! address: the port a `227` or `229` reply names is used, the address a
//! `PASV` reply names never is, so a server cannot point the fetcher at
//! another host (the FTP bounce) past the address rule, which was checked
//! on the control connection's address.
//!
//! A record's `status` stays an HTTP status, since compile reads every 5xx
//! as unreachable: a completed `RETR` is 200, a `550` (no such file) is 404,
//! and every other failure is status 0 with an error class. The server's
//! last reply goes in the record's `ftp_reply`.

use crate::body::{BodyDecoder, Decoded};
use crate::record::{ErrorClass, FetchError};
use std::net::SocketAddr;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::time::{timeout, timeout_at, Duration, Instant};

/// The password of the anonymous login, as RFC 1635 asks (an address-like
/// word; the `User-Agent` is not sent over FTP).
const ANONYMOUS_PASSWORD: &str = "anonymous@";

/// The longest reply line read, and the most lines of one reply: a server
/// cannot make the fetcher hold more than this.
const MAX_REPLY_LINE: usize = 4096;
const MAX_REPLY_LINES: usize = 64;

/// What an FTP fetch got: an HTTP-like status, the body, and the server's
/// last reply.
#[derive(Debug)]
pub struct FtpAnswer {
    /// 200 for a completed `RETR`, 404 for a `550`.
    pub status: u16,
    /// The file, at most the cap's bytes.
    pub body: Decoded,
    /// The server's last reply, e.g. `226 Transfer complete`.
    pub reply: String,
}

/// An FTP fetch that failed: why, and the server's last reply if it sent one.
#[derive(Debug)]
pub struct FtpFailure {
    /// The class and detail for the record's `error`.
    pub error: FetchError,
    /// The server's last reply, for the record's `ftp_reply`.
    pub reply: Option<String>,
}

impl From<FetchError> for FtpFailure {
    fn from(error: FetchError) -> FtpFailure {
        FtpFailure { error, reply: None }
    }
}

/// The deadlines of one FTP fetch.
#[derive(Clone, Copy, Debug)]
pub struct FtpLimits {
    /// TCP connect, per address (control and data connections).
    pub connect_timeout: Duration,
    /// Each reply once its command is sent.
    pub response_timeout: Duration,
    /// The whole fetch, the file included.
    pub deadline: Instant,
    /// File bytes kept.
    pub cap: usize,
}

/// One reply: its code and its text (the last line for a multi-line reply).
struct Reply {
    code: u16,
    text: String,
}

/// The control connection.
struct Control {
    stream: BufReader<TcpStream>,
    peer: SocketAddr,
    limits: FtpLimits,
    /// The last reply read, for the record.
    last: Option<String>,
}

impl Control {
    fn fail(&self, class: ErrorClass, detail: impl Into<String>) -> FtpFailure {
        FtpFailure { error: FetchError::new(class, detail), reply: self.last.clone() }
    }

    /// Reads one reply (RFC 959 section 4.2: `NNN text`, or `NNN-` lines up
    /// to the line that starts with `NNN `).
    async fn reply(&mut self, after: &str) -> Result<Reply, FtpFailure> {
        let limits = self.limits;
        let read = async {
            let mut first: Option<u16> = None;
            for _ in 0..MAX_REPLY_LINES {
                let line = self.line().await?;
                let code = line.get(..3).and_then(|c| c.parse::<u16>().ok()).filter(|c| (100..600).contains(c));
                let separator = line.as_bytes().get(3).copied();
                match (first, code) {
                    (None, Some(code)) if separator == Some(b'-') => first = Some(code),
                    (None, Some(code)) if matches!(separator, None | Some(b' ')) => {
                        return Ok(Reply { code, text: line })
                    }
                    (None, _) => {
                        return Err(self.fail(ErrorClass::Protocol, format!("not an FTP reply after {after}: {line:?}")))
                    }
                    (Some(open), Some(code)) if code == open && separator != Some(b'-') => {
                        return Ok(Reply { code, text: line })
                    }
                    (Some(_), _) => {}
                }
            }
            Err(self.fail(ErrorClass::Protocol, format!("a reply of more than {MAX_REPLY_LINES} lines after {after}")))
        };
        let reply = match timeout_at(limits.deadline, timeout(limits.response_timeout, read)).await {
            Err(_) => {
                return Err(self
                    .fail(ErrorClass::Timeout, format!("the total deadline passed waiting for the reply to {after}")))
            }
            Ok(Err(_)) => {
                return Err(
                    self.fail(ErrorClass::Timeout, format!("no reply to {after} within {:?}", limits.response_timeout))
                )
            }
            Ok(Ok(reply)) => reply?,
        };
        self.last = Some(reply.text.clone());
        Ok(reply)
    }

    /// One line of the control connection, CR LF dropped.
    async fn line(&mut self) -> Result<String, FtpFailure> {
        let mut line = Vec::new();
        let read = (&mut self.stream).take(MAX_REPLY_LINE as u64).read_until(b'\n', &mut line).await;
        match read {
            Err(e) => Err(self.fail(io_class(&e), format!("{}: control connection: {e}", self.peer))),
            Ok(0) => Err(self.fail(ErrorClass::Reset, format!("{} closed the control connection", self.peer))),
            Ok(_) if !line.ends_with(b"\n") => {
                Err(self.fail(ErrorClass::Protocol, format!("a reply line longer than {MAX_REPLY_LINE} bytes")))
            }
            Ok(_) => Ok(String::from_utf8_lossy(&line).trim_end_matches(['\r', '\n']).to_owned()),
        }
    }

    /// Sends `command` and reads its reply.
    async fn command(&mut self, command: &str) -> Result<Reply, FtpFailure> {
        let verb = command.split(' ').next().unwrap_or(command).to_owned();
        let sent = self.stream.get_mut().write_all(format!("{command}\r\n").as_bytes()).await;
        if let Err(e) = sent {
            return Err(self.fail(io_class(&e), format!("{}: sending {verb}: {e}", self.peer)));
        }
        self.reply(&verb).await
    }

    /// A failure for a reply that is not what `after` needs.
    fn refused(&self, after: &str, reply: &Reply) -> FtpFailure {
        self.fail(ErrorClass::Protocol, format!("the FTP server answered {after} with {:?}", reply.text))
    }
}

fn io_class(e: &std::io::Error) -> ErrorClass {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::ConnectionRefused => ErrorClass::Refused,
        ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe => ErrorClass::Reset,
        ErrorKind::TimedOut => ErrorClass::Timeout,
        _ => ErrorClass::Connect,
    }
}

/// A TCP connection to `addr` within the connect timeout and the deadline.
async fn connect(addr: SocketAddr, limits: FtpLimits, what: &str) -> Result<TcpStream, FetchError> {
    match timeout_at(limits.deadline, timeout(limits.connect_timeout, TcpStream::connect(addr))).await {
        Err(_) => Err(FetchError::new(ErrorClass::Timeout, format!("the total deadline passed connecting to {addr}"))),
        Ok(Err(_)) => Err(FetchError::new(
            ErrorClass::Timeout,
            format!("connecting to {addr} ({what}) took longer than {:?}", limits.connect_timeout),
        )),
        Ok(Ok(Err(e))) => Err(FetchError::new(io_class(&e), format!("{addr} ({what}): {e}"))),
        Ok(Ok(Ok(tcp))) => Ok(tcp),
    }
}

/// The port of a `229 Entering Extended Passive Mode (|||port|)` reply
/// (RFC 2428: any delimiter, repeated four times around the port).
fn epsv_port(text: &str) -> Option<u16> {
    let inner = &text[text.find('(')? + 1..text.rfind(')')?];
    let d = inner.chars().next()?;
    let parts: Vec<&str> = inner.split(d).collect();
    match parts.as_slice() {
        ["", "", "", port, ""] => port.parse().ok(),
        _ => None,
    }
}

/// The port of a `227 Entering Passive Mode (h1,h2,h3,h4,p1,p2)` reply; the
/// address is read only to check the reply's form and never used.
fn pasv_port(text: &str) -> Option<u16> {
    let start = text[4.min(text.len())..].find(|c: char| c.is_ascii_digit())? + 4.min(text.len());
    let numbers: Vec<u8> = text[start..]
        .split(|c: char| !c.is_ascii_digit())
        .filter(|n| !n.is_empty())
        .take(6)
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    match numbers.as_slice() {
        [_, _, _, _, p1, p2] => Some(u16::from(*p1) << 8 | u16::from(*p2)),
        _ => None,
    }
}

/// Fetches `path` from the FTP server at the first of `addrs` that
/// answers (see the module documentation).
pub async fn retrieve(path: &str, addrs: &[SocketAddr], limits: FtpLimits) -> Result<FtpAnswer, FtpFailure> {
    if path.contains(['\r', '\n']) {
        return Err(FetchError::new(ErrorClass::Protocol, "the path holds a line break").into());
    }
    let mut last = FetchError::new(ErrorClass::Connect, "no address to connect to");
    let mut opened = None;
    for &addr in addrs {
        match connect(addr, limits, "FTP control").await {
            Ok(tcp) => {
                opened = Some((tcp, addr));
                break;
            }
            Err(e) if e.detail.starts_with("the total deadline") => return Err(e.into()),
            Err(e) => last = e,
        }
    }
    let (tcp, peer) = opened.ok_or(last)?;
    let mut control = Control { stream: BufReader::new(tcp), peer, limits, last: None };
    let result = exchange(&mut control, path).await;
    // A polite end where the server still listens; never waited for long.
    let _ = timeout(Duration::from_millis(100), control.stream.get_mut().write_all(b"QUIT\r\n")).await;
    result
}

async fn exchange(control: &mut Control, path: &str) -> Result<FtpAnswer, FtpFailure> {
    let mut greeting = control.reply("connecting").await?;
    if greeting.code == 120 {
        greeting = control.reply("connecting").await?;
    }
    if greeting.code != 220 {
        return Err(control.refused("the connection", &greeting));
    }
    let user = control.command("USER anonymous").await?;
    let login = match user.code {
        230 => user,
        331 => control.command(&format!("PASS {ANONYMOUS_PASSWORD}")).await?,
        _ => return Err(control.refused("USER anonymous", &user)),
    };
    if !matches!(login.code, 230 | 202) {
        return Err(control.refused("the anonymous login", &login));
    }
    // Binary, so the file arrives byte for byte; a server that refuses it
    // still sends the file, in ASCII mode at worst.
    control.command("TYPE I").await?;
    let epsv = control.command("EPSV").await?;
    let port = match epsv.code {
        229 => epsv_port(&epsv.text).ok_or_else(|| control.refused("EPSV", &epsv))?,
        _ => {
            let pasv = control.command("PASV").await?;
            match pasv.code {
                227 => pasv_port(&pasv.text).ok_or_else(|| control.refused("PASV", &pasv))?,
                _ => return Err(control.refused("PASV", &pasv)),
            }
        }
    };
    // The control connection's peer, never the address a reply names.
    let data_addr = SocketAddr::new(control.peer.ip(), port);
    let mut data = connect(data_addr, control.limits, "FTP data")
        .await
        .map_err(|error| FtpFailure { error, reply: control.last.clone() })?;
    let retr = control.command(&format!("RETR {path}")).await?;
    match retr.code {
        125 | 150 => {}
        550 => return Ok(FtpAnswer { status: 404, body: Decoded::default(), reply: retr.text }),
        _ => return Err(control.refused("RETR", &retr)),
    }
    let mut decoder = BodyDecoder::new(None, control.limits.cap);
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let read = match timeout_at(control.limits.deadline, data.read(&mut buf)).await {
            Err(_) => return Err(control.fail(ErrorClass::Timeout, "the total deadline passed reading the file")),
            Ok(read) => read,
        };
        match read {
            Ok(0) => break,
            Ok(n) => {
                if decoder.push(&buf[..n])? {
                    // Cut at the cap: the rest is never read, nor the end reply.
                    let body = decoder.finish()?;
                    return Ok(FtpAnswer { status: 200, body, reply: retr.text });
                }
            }
            Err(e) => return Err(control.fail(io_class(&e), format!("{data_addr}: data connection: {e}"))),
        }
    }
    drop(data);
    let done = control.reply("the transfer").await?;
    if !matches!(done.code, 226 | 250) {
        return Err(control.fail(ErrorClass::Body, format!("the transfer did not complete: {:?}", done.text)));
    }
    Ok(FtpAnswer { status: 200, body: decoder.finish()?, reply: done.text })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passive_replies_give_their_port_and_nothing_else() {
        assert_eq!(epsv_port("229 Entering Extended Passive Mode (|||6446|)"), Some(6446));
        assert_eq!(epsv_port("229 Entering Extended Passive Mode (!!!21!)"), Some(21));
        assert_eq!(epsv_port("229 Entering Extended Passive Mode (|1|10.0.0.1|6446|)"), None);
        assert_eq!(pasv_port("227 Entering Passive Mode (10,255,255,1,25,46)"), Some(25 * 256 + 46));
        assert_eq!(pasv_port("227 Entering Passive Mode 127,0,0,1,4,1"), Some(1025));
        assert_eq!(pasv_port("227 Entering Passive Mode (127,0,0,1,4)"), None);
        assert_eq!(pasv_port("227 Entering Passive Mode (127,0,0,1,4,300)"), None);
    }
}
