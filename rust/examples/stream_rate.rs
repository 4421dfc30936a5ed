//! Events per second of one streamed call, through StreamBatched (the default) and through Stream
//! (`with_batched(false)`), best of `RUNS`:
//!
//! cargo run --release --example stream_rate -- HOST:PORT [RUNS]
//!
//! against a server such as `pi-proto serve --port 0 --script FILE --delta-size 8` playing a long
//! text turn (the repository's bench/workloads.py `text_turn`). Not part of the crate.

use std::time::Instant;

use pi_proto::v1::AgentContext;
use pi_proto::{CallOptions, ModelClient, user_message};

#[tokio::main]
async fn main() {
    let mut arguments = std::env::args().skip(1);
    let target = arguments
        .next()
        .expect("usage: stream_rate HOST:PORT [RUNS]");
    let runs: usize = arguments
        .next()
        .map_or(3, |runs| runs.parse().expect("a count"));
    for batched in [true, false] {
        let client = ModelClient::new(&target)
            .expect("a valid target")
            .with_batched(batched);
        let mut best = 0.0_f64;
        let mut count = 0;
        for _ in 0..runs {
            let context = AgentContext {
                messages: vec![user_message("hi").into()],
                ..Default::default()
            };
            let started = Instant::now();
            let events = client.stream(context, CallOptions::default());
            count = 0;
            while events.next().await.is_some() {
                count += 1;
            }
            let seconds = started.elapsed().as_secs_f64();
            if let Some(failure) = events.failure() {
                panic!("the call failed: {failure}");
            }
            #[allow(clippy::cast_precision_loss)]
            let rate = count as f64 / seconds;
            best = best.max(rate);
        }
        let method = if batched { "StreamBatched" } else { "Stream" };
        println!("{method}: {count} events, {best:.0} events/s (best of {runs})");
    }
}
