//! One DNS lookup per host for the whole run. reqwest's own resolver asks
//! the system for every new connection; on a resolver that drops a packet
//! now and then, each of those lookups risks a five-second retry, and a
//! compile opened dozens. Here each host is looked up once (through the
//! system resolver, on a thread of its own), its addresses kept for the
//! rest of the run by every client the process makes, and the lookups
//! counted. A run lasts minutes: a record's TTL is not worth honouring.
//! A failed lookup is not kept, so a retry asks again.

use std::collections::{BTreeMap, HashMap};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::stats::HostCounts;

/// The longest one lookup is waited for: the system resolver's own
/// retries (5 s each by default) fit twice over.
const LOOKUP_WAIT: Duration = Duration::from_secs(30);

type Lookup = Shared<BoxFuture<'static, Result<Arc<Vec<SocketAddr>>, String>>>;

/// The addresses of every host looked up this run.
#[derive(Default)]
pub(crate) struct Hosts {
    answers: Mutex<HashMap<String, Lookup>>,
}

impl Hosts {
    /// The one table of the process: every client shares it.
    pub(crate) fn shared() -> Arc<Self> {
        static HOSTS: OnceLock<Arc<Hosts>> = OnceLock::new();
        HOSTS.get_or_init(Arc::default).clone()
    }

    /// `host`'s lookup, and whether this call started it.
    fn lookup(&self, host: &str) -> Result<(Lookup, bool), String> {
        let mut answers = self
            .answers
            .lock()
            .map_err(|_| "internal lock poisoned".to_string())?;
        if let Some(known) = answers.get(host) {
            return Ok((known.clone(), false));
        }
        let lookup = system_lookup(host.to_string()).boxed().shared();
        answers.insert(host.to_string(), lookup.clone());
        Ok((lookup, true))
    }

    /// Forget `host`'s answer (a failure: the next connection asks again).
    fn forget(&self, host: &str) {
        if let Ok(mut answers) = self.answers.lock() {
            answers.remove(host);
        }
    }
}

/// Ask the system resolver for `host` on a thread of its own: a blocking
/// lookup must not hold a runtime's worker, and a thread (unlike a
/// runtime's blocking pool) outlives the client that started it, so a
/// lookup another client shares is never cut off.
async fn system_lookup(host: String) -> Result<Arc<Vec<SocketAddr>>, String> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let named = host.clone();
    std::thread::Builder::new()
        .name("layerlock-dns".to_string())
        .spawn(move || {
            let answer = (named.as_str(), 0)
                .to_socket_addrs()
                .map(|addrs| addrs.collect::<Vec<_>>());
            let _ = tx.send(answer);
        })
        .map_err(|e| format!("cannot start a lookup of {host}: {e}"))?;
    match rx.await {
        Ok(Ok(addrs)) if !addrs.is_empty() => Ok(Arc::new(addrs)),
        Ok(Ok(_)) => Err(format!("{host} has no address")),
        Ok(Err(e)) => Err(format!("cannot look up {host}: {e}")),
        Err(_) => Err(format!("the lookup of {host} stopped")),
    }
}

/// One client's resolver: the shared table, its own counts.
pub(crate) struct Resolver {
    hosts: Arc<Hosts>,
    counts: Arc<Mutex<BTreeMap<String, HostCounts>>>,
}

impl Resolver {
    pub(crate) fn new(hosts: Arc<Hosts>, counts: Arc<Mutex<BTreeMap<String, HostCounts>>>) -> Self {
        Self { hosts, counts }
    }
}

impl Resolve for Resolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        let hosts = self.hosts.clone();
        let counts = self.counts.clone();
        Box::pin(async move {
            let (lookup, fresh) = hosts.lookup(&host)?;
            if let Ok(mut counts) = counts.lock() {
                let count = counts.entry(host.clone()).or_default();
                count.connections += 1;
                count.lookups += u64::from(fresh);
            }
            let answer = match tokio::time::timeout(LOOKUP_WAIT, lookup).await {
                Ok(answer) => answer,
                Err(_) => Err(format!("the lookup of {host} took over {LOOKUP_WAIT:?}")),
            };
            match answer {
                Ok(addrs) => Ok(Box::new(addrs.as_ref().clone().into_iter()) as Addrs),
                Err(why) => {
                    hosts.forget(&host);
                    Err(why.into())
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_looked_up_once_however_often_it_is_resolved() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let hosts = Arc::new(Hosts::default());
        let counts = Arc::new(Mutex::new(BTreeMap::new()));
        let resolver = Resolver::new(hosts.clone(), counts.clone());
        let other = Resolver::new(hosts, Arc::new(Mutex::new(BTreeMap::new())));
        runtime.block_on(async {
            let at_once = futures::future::join_all(
                (0..4).map(|_| resolver.resolve("localhost".parse().expect("name"))),
            )
            .await;
            for addrs in at_once {
                assert!(addrs.expect("resolves").count() > 0);
            }
            // Another client of the run shares the answer.
            let shared = other.resolve("localhost".parse().expect("name")).await;
            assert!(shared.expect("resolves").count() > 0);
        });
        let counts = counts.lock().expect("counts");
        assert_eq!(
            counts.get("localhost"),
            Some(&HostCounts {
                lookups: 1,
                connections: 4
            })
        );
    }
}
