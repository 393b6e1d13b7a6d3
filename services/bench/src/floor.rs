//! The request floor under load: the same clients as the move phases, at
//! the same concurrency, asking for what costs the server least (`GET
//! /healthz` over REST, the standard health `Check` over gRPC, neither
//! touching a game or the store). What they reach is the most any request
//! can reach on this machine through the same HTTP stack, loopback and
//! client, so a move's rate and CPU read against it say how much of them is
//! the move's own work and how much is the cost of a request at all.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use crate::moves::{grpc_channels, percentile_ms};
use crate::server::{Cpu, Server, checked};

/// What one timed phase of requests that do nothing measured.
#[derive(Clone, Serialize)]
pub struct FloorRun {
    /// Concurrent clients.
    pub concurrency: usize,
    /// Requests answered.
    pub requests: usize,
    /// Requests per second of wall time.
    pub requests_per_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    /// Server CPU (user + system) per request.
    pub server_cpu_us_per_request: f64,
    /// The whole machine's CPU per request, the clients' included.
    pub machine_cpu_us_per_request: f64,
}

fn summarize(concurrency: usize, mut latencies: Vec<Duration>, elapsed: Duration, cpu: Cpu) -> FloorRun {
    latencies.sort_unstable();
    let requests = latencies.len();
    FloorRun {
        concurrency,
        requests,
        requests_per_s: requests as f64 / elapsed.as_secs_f64(),
        p50_ms: percentile_ms(&latencies, 0.50),
        p99_ms: percentile_ms(&latencies, 0.99),
        server_cpu_us_per_request: cpu.servers.as_secs_f64() * 1e6 / requests as f64,
        machine_cpu_us_per_request: cpu.machine.as_secs_f64() * 1e6 / requests as f64,
    }
}

/// One timed phase: `clients` loops, each sending the request that
/// `client(i)` makes, one after another, until `seconds` have passed.
async fn phase<R, F>(server: &Server, clients: usize, seconds: Duration, client: impl Fn(usize) -> R) -> Result<FloorRun, String>
where
    R: Fn() -> F + Send + 'static,
    F: Future<Output = Result<(), String>> + Send,
{
    let cpu_before = Cpu::of(&[server])?;
    let started = Instant::now();
    let deadline = started + seconds;
    let tasks: Vec<_> = (0..clients)
        .map(|i| {
            let request = client(i);
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                while Instant::now() < deadline {
                    let sent = Instant::now();
                    request().await?;
                    latencies.push(sent.elapsed());
                }
                Ok::<_, String>(latencies)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.map_err(|e| format!("a floor client failed: {e}"))??);
    }
    let elapsed = started.elapsed();
    let cpu = Cpu::of(&[server])?.since(cpu_before);
    Ok(summarize(clients, latencies, elapsed, cpu))
}

/// `clients` concurrent keep-alive clients asking `GET /healthz`, one
/// after another each, with one HTTP client shared by all (as [`crate::moves::rest`]).
///
/// # Errors
/// When a request fails or is not answered 200.
pub async fn rest(server: &Server, clients: usize, seconds: Duration) -> Result<FloorRun, String> {
    let http = reqwest::Client::builder().pool_max_idle_per_host(clients).build().map_err(|e| format!("cannot build a client: {e}"))?;
    let url: Arc<str> = format!("{}/healthz", server.base).into();
    phase(server, clients, seconds, |_| {
        let (http, url) = (http.clone(), Arc::clone(&url));
        move || {
            let request = http.get(&*url).send();
            async move {
                let answer = request.await.map_err(|e| format!("GET /healthz: {e}"))?;
                checked(answer, "GET /healthz").await?.bytes().await.map_err(|e| format!("GET /healthz: {e}"))?;
                Ok(())
            }
        }
    })
    .await
}

/// `clients` concurrent clients calling `grpc.health.v1.Health/Check` on
/// the server as a whole, spread over HTTP/2 connections as [`crate::moves::rest_and_grpc`]
/// spreads its games.
///
/// # Errors
/// When a call fails or the server does not say it is serving.
pub async fn grpc(server: &Server, clients: usize, seconds: Duration) -> Result<FloorRun, String> {
    let channels = grpc_channels(server, clients).await?;
    phase(server, clients, seconds, |i| {
        let health = HealthClient::new(channels[i % channels.len()].clone());
        move || {
            let mut health = health.clone();
            async move {
                let answer = health.check(HealthCheckRequest { service: String::new() }).await.map_err(|e| format!("health Check: {e}"))?;
                match answer.get_ref().status() {
                    ServingStatus::Serving => Ok(()),
                    other => Err(format!("health Check: the server says {other:?}")),
                }
            }
        }
    })
    .await
}
