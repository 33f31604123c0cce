//! `--stats`: what each layer's resolutions fetched, and when each level
//! of its dependency tree had its pages and metadata, as JSON.

use std::collections::BTreeMap;
use std::time::Duration;

use layerlock_index::{Fetch, FetchStats, HostCounts, Traffic};
use layerlock_resolve::Resolution;
use serde_json::{Value, json};

fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}

/// Requests and bytes by kind, as the stats file shows them.
fn traffic_json(traffic: &BTreeMap<Fetch, Traffic>) -> Value {
    let mut out = serde_json::Map::new();
    for (kind, t) in traffic {
        out.insert(
            kind.name().to_string(),
            json!({
                "count": t.requests,
                "bytes": t.bytes,
                "busy_ms": millis(t.busy),
                "slowest_ms": millis(t.slowest),
            }),
        );
    }
    Value::Object(out)
}

/// By host, the DNS lookups and new connections of a layer's client.
fn hosts_json(hosts: &BTreeMap<String, HostCounts>) -> Value {
    hosts
        .iter()
        .map(|(host, c)| {
            let counts = json!({"dns_lookups": c.lookups, "connections": c.connections});
            (host.clone(), counts)
        })
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// One layer's `--stats`: what it fetched, and when each level of its
/// dependency tree had its pages and metadata.
pub fn layer_stats(
    label: &str,
    took: Duration,
    resolution: &Resolution,
    fetched: &FetchStats,
) -> Value {
    let mut levels: BTreeMap<usize, (usize, Duration, Duration)> = BTreeMap::new();
    let mut arrivals = serde_json::Map::new();
    for (name, depth) in resolution.depths() {
        let arrived = fetched.arrivals.get(&name).copied().unwrap_or_default();
        arrivals.insert(
            name.to_string(),
            json!({
                "depth": depth,
                "page_ms": arrived.page.map(millis),
                "metadata_ms": arrived.metadata.map(millis),
            }),
        );
        let level = levels.entry(depth).or_default();
        level.0 += 1;
        level.1 = level.1.max(arrived.page.unwrap_or_default());
        level.2 = level.2.max(arrived.metadata.unwrap_or_default());
    }
    json!({
        "layer": label,
        "packages": resolution.packages.len(),
        "wall_ms": millis(took),
        "requests": traffic_json(&fetched.traffic),
        "pages_cached": fetched.pages_cached,
        "metadata_cached": fetched.metadata_cached,
        "resolver_waits": fetched.waits,
        "resolver_wait_ms": millis(fetched.waited),
        "longest_waits": fetched
            .longest_waits
            .iter()
            .map(|(what, waited)| json!({"for": what, "ms": millis(*waited)}))
            .collect::<Vec<_>>(),
        "hosts": hosts_json(&fetched.hosts),
        "levels": levels
            .into_iter()
            .map(|(level, (packages, page, metadata))| {
                json!({
                    "level": level,
                    "packages": packages,
                    "pages_done_ms": millis(page),
                    "metadata_done_ms": millis(metadata),
                })
            })
            .collect::<Vec<_>>(),
        "arrivals": arrivals,
    })
}

/// Every layer's stats, and the requests of all of them together.
pub fn stats_report(layers: Vec<Value>) -> Value {
    let mut total: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut hosts: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for layer in &layers {
        if let Some(counts) = layer["hosts"].as_object() {
            for (host, c) in counts {
                let slot = hosts.entry(host.clone()).or_default();
                slot.0 += c["dns_lookups"].as_u64().unwrap_or_default();
                slot.1 += c["connections"].as_u64().unwrap_or_default();
            }
        }
        if let Some(requests) = layer["requests"].as_object() {
            for (kind, t) in requests {
                let slot = total.entry(kind.clone()).or_default();
                slot.0 += t["count"].as_u64().unwrap_or_default();
                slot.1 += t["bytes"].as_u64().unwrap_or_default();
            }
        }
    }
    json!({
        "layerlock_stats": 1,
        "requests": total
            .into_iter()
            .map(|(kind, (count, bytes))| (kind, json!({"count": count, "bytes": bytes})))
            .collect::<serde_json::Map<_, _>>(),
        // Every client of the run shares one lookup per host: summed over
        // the layers, a host's lookups are the run's.
        "hosts": hosts
            .into_iter()
            .map(|(host, (lookups, connections))| {
                (host, json!({"dns_lookups": lookups, "connections": connections}))
            })
            .collect::<serde_json::Map<_, _>>(),
        "layers": layers,
    })
}
