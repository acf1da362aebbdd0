//! Who may send a request now: a global limit on requests in flight, and per
//! IP address at most N at once with a minimum interval between request
//! starts (virtual hosting puts millions of hosts on a few addresses). A
//! fetch that must wait for a busy address gives its place in flight back
//! and waits in a bounded queue; when that is full, reading pauses.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{sleep_until, Duration, Instant};

/// The limits, shared by every fetch of a run.
pub struct Politeness {
    in_flight: Arc<Semaphore>,
    waiting: Arc<Semaphore>,
    per_ip: usize,
    interval: Duration,
    gates: Mutex<HashMap<IpAddr, Arc<IpGate>>>,
}

struct IpGate {
    connections: Arc<Semaphore>,
    next_start: Mutex<Instant>,
}

/// A fetch's place: in flight (may send), or waiting (holds a queue place).
pub struct Place {
    politeness: Arc<Politeness>,
    in_flight: Option<OwnedSemaphorePermit>,
    waiting: Option<OwnedSemaphorePermit>,
}

/// The right to use one IP address: held while connected to it.
pub struct IpPermit {
    _permit: OwnedSemaphorePermit,
}

impl Politeness {
    /// Limits: `in_flight` requests at once, `waiting` fetches queued for
    /// busy addresses, `per_ip` connections to one address, `interval`
    /// between request starts to one address.
    pub fn new(in_flight: usize, waiting: usize, per_ip: usize, interval: Duration) -> Arc<Politeness> {
        Arc::new(Politeness {
            in_flight: Arc::new(Semaphore::new(in_flight.max(1))),
            waiting: Arc::new(Semaphore::new(waiting.max(1))),
            per_ip: per_ip.max(1),
            interval,
            gates: Mutex::new(HashMap::new()),
        })
    }

    /// A place in flight for a new fetch: waits while the limit is reached
    /// (this is what pauses reading the input).
    pub async fn enter(self: &Arc<Self>) -> Place {
        let permit = self.in_flight.clone().acquire_owned().await.expect("never closed");
        Place { politeness: self.clone(), in_flight: Some(permit), waiting: None }
    }

    fn gate(&self, ip: IpAddr) -> Arc<IpGate> {
        let mut gates = self.gates.lock().expect("not poisoned");
        if gates.len() > 4096 {
            // Forget addresses nobody holds and whose interval has passed.
            let now = Instant::now();
            gates.retain(|_, g| Arc::strong_count(g) > 1 || *g.next_start.lock().expect("not poisoned") > now);
        }
        gates
            .entry(ip)
            .or_insert_with(|| {
                Arc::new(IpGate {
                    connections: Arc::new(Semaphore::new(self.per_ip)),
                    next_start: Mutex::new(Instant::now()),
                })
            })
            .clone()
    }
}

impl Place {
    /// Gives the place in flight back and takes a waiting place (waits for
    /// one while the queue is full, still in flight).
    pub async fn wait(&mut self) {
        if self.waiting.is_none() {
            let permit = self.politeness.waiting.clone().acquire_owned().await.expect("never closed");
            self.waiting = Some(permit);
        }
        self.in_flight = None;
    }

    /// Back in flight after [`Place::wait`].
    pub async fn resume(&mut self) {
        if self.in_flight.is_none() {
            let permit = self.politeness.in_flight.clone().acquire_owned().await.expect("never closed");
            self.in_flight = Some(permit);
        }
        self.waiting = None;
    }

    /// The right to start a request to `ip`: waits (out of flight) while the
    /// address has its connections or its interval has not passed.
    pub async fn use_ip(&mut self, ip: IpAddr) -> IpPermit {
        let gate = self.politeness.gate(ip);
        let permit = match gate.connections.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                self.wait().await;
                let permit = gate.connections.clone().acquire_owned().await.expect("never closed");
                self.resume().await;
                permit
            }
        };
        let start = {
            let mut next = gate.next_start.lock().expect("not poisoned");
            let start = (*next).max(Instant::now());
            *next = start + self.politeness.interval;
            start
        };
        if start > Instant::now() {
            self.wait().await;
            sleep_until(start).await;
            self.resume().await;
        }
        IpPermit { _permit: permit }
    }
}
