//! The event stream: a terminal event ends iteration by itself and is the result; every failure
//! of its source becomes its final `error` event; the partial it shares follows the events at a
//! cost linear in the stream's length.

mod support;

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use futures_core::Stream;
use pi_proto::v1::model_event::Event;
use pi_proto::v1::{
    AssistantMessage, ErrorEvent, ModelEvent, StopReason, TextDeltaEvent, TextStartEvent,
    assistant_content,
};
use pi_proto::{EventStream, event_kind, events_of, terminal_message, text_of};
use support::{assistant_message, bounded_async, many_deltas, text, text_events, within};

/// A source that plays a list of items, then either ends or stays pending forever, and says
/// when it has been dropped.
struct Script {
    items: VecDeque<Result<ModelEvent, String>>,
    then_hang: bool,
    dropped: Arc<AtomicBool>,
}

impl Script {
    fn new(items: Vec<Result<ModelEvent, String>>, then_hang: bool) -> (Self, Arc<AtomicBool>) {
        let dropped = Arc::new(AtomicBool::new(false));
        let script = Self {
            items: items.into(),
            then_hang,
            dropped: dropped.clone(),
        };
        (script, dropped)
    }

    fn stream(items: Vec<Result<ModelEvent, String>>) -> EventStream {
        EventStream::from_source(Box::pin(Self::new(items, false).0))
    }
}

impl Stream for Script {
    type Item = Result<ModelEvent, String>;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.items.pop_front() {
            Some(item) => Poll::Ready(Some(item)),
            None if self.then_hang => Poll::Pending,
            None => Poll::Ready(None),
        }
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::SeqCst);
    }
}

fn error_event(message: AssistantMessage) -> ModelEvent {
    ModelEvent {
        event: Some(Event::Error(ErrorEvent {
            reason: StopReason::Error as i32,
            message: Some(message),
        })),
        partial: None,
    }
}

fn text_delta(delta: &str) -> ModelEvent {
    ModelEvent {
        event: Some(Event::TextDelta(TextDeltaEvent {
            content_index: 0,
            delta: delta.to_owned(),
        })),
        partial: None,
    }
}

/// The first `count` events of a message's stream: start, text_start, deltas...
fn opening(text_so_far: &str, count: usize) -> Vec<Result<ModelEvent, String>> {
    let message = assistant_message(vec![text(text_so_far)], StopReason::Stop);
    events_of(&message, 100)
        .into_iter()
        .take(count)
        .map(Ok)
        .collect()
}

fn kinds(events: &[ModelEvent]) -> Vec<&'static str> {
    events.iter().map(event_kind).collect()
}

async fn collect(events: &EventStream) -> Vec<ModelEvent> {
    let mut seen = Vec::new();
    while let Some(event) = events.next().await {
        seen.push(event);
    }
    seen
}

#[tokio::test]
async fn an_error_event_ends_iteration_and_is_the_result() {
    within(async {
        let mut failed = assistant_message(vec![], StopReason::Error);
        failed.error_message = Some("socket reset".to_owned());
        let events = EventStream::new();

        events
            .push(error_event(failed.clone()))
            .expect("a valid stream");
        let seen = collect(&events).await;

        assert_eq!(seen.len(), 1);
        assert_eq!(kinds(&seen), ["error"]);
        let result = events.result().await;
        assert_eq!(result, failed);
        assert_eq!(result.error_message.as_deref(), Some("socket reset"));
    })
    .await;
}

#[tokio::test]
async fn events_pushed_after_the_terminal_event_are_ignored() {
    within(async {
        let message = assistant_message(vec![text("hello")], StopReason::Stop);
        let events = EventStream::new();
        let mut seen = Vec::new();
        let mut texts = Vec::new();
        for event in events_of(&message, 2) {
            events.push(event).expect("a valid stream");
            seen.push(events.next().await.expect("the event just pushed"));
            texts.push(text_of(&*events.partial()));
        }
        events.push(error_event(message.clone())).expect("ignored");

        assert!(events.next().await.is_none());
        assert_eq!(
            kinds(&seen),
            [
                "start",
                "text_start",
                "text_delta",
                "text_delta",
                "text_delta",
                "text_end",
                "done"
            ]
        );
        assert!(seen.iter().all(|event| event.partial.is_none()));
        assert_eq!(texts, ["", "", "he", "hell", "hello", "hello", "hello"]);
        assert_eq!(events.result().await, message);
        assert_eq!(*events.partial(), message);
    })
    .await;
}

#[tokio::test]
async fn fail_keeps_what_was_received_and_the_reason() {
    within(async {
        let events = EventStream::new();
        for event in opening("partial answer", 3) {
            events.push(event.unwrap()).expect("a valid stream");
        }
        events.fail(StopReason::Error, "socket reset");
        events.fail(StopReason::Aborted, "too late: ignored");

        let seen = collect(&events).await;
        assert_eq!(kinds(&seen), ["start", "text_start", "text_delta", "error"]);
        let result = events.result().await;
        assert_eq!(result.stop_reason, StopReason::Error as i32);
        assert_eq!(result.error_message.as_deref(), Some("socket reset"));
        assert_eq!(text_of(&result), "partial answer");
        assert_eq!(terminal_message(&seen[3]), Some(&result));
        assert_eq!(*events.partial(), result);
    })
    .await;
}

#[tokio::test]
async fn an_event_that_breaks_a_rule_is_refused_and_not_queued() {
    within(async {
        let events = EventStream::new();
        let refused = events.push(text_delta("x")).expect_err("no start yet");
        assert_eq!(
            refused.to_string(),
            "event 0 (text_delta) breaks rule 'start-first': a stream opens with start"
        );
        assert_eq!(events.queued(), 0);
        assert!(!events.is_done());
    })
    .await;
}

#[tokio::test]
async fn a_source_that_ends_without_a_terminal_event_ends_with_error() {
    within(async {
        let events = Script::stream(opening("cut short", 3));
        let seen = collect(&events).await;

        assert_eq!(kinds(&seen), ["start", "text_start", "text_delta", "error"]);
        let result = events.result().await;
        assert_eq!(result.stop_reason, StopReason::Error as i32);
        assert_eq!(
            result.error_message.as_deref(),
            Some("stream ended without a terminal event")
        );
        assert_eq!(text_of(&result), "cut short");
    })
    .await;
}

#[tokio::test]
async fn a_source_failure_ends_with_error_and_its_message() {
    within(async {
        let mut items = opening("so far", 3);
        items.push(Err("socket reset".to_owned()));
        let events = Script::stream(items);
        let seen = collect(&events).await;

        assert_eq!(kinds(&seen), ["start", "text_start", "text_delta", "error"]);
        let result = events.result().await;
        assert_eq!(result.error_message.as_deref(), Some("socket reset"));
        assert_eq!(text_of(&result), "so far");
    })
    .await;
}

#[tokio::test]
async fn an_event_that_breaks_a_rule_ends_the_stream_with_error_naming_it() {
    within(async {
        let mut items = opening("ok", 3);
        items.push(Ok(ModelEvent {
            event: Some(Event::TextStart(TextStartEvent { content_index: 4 })),
            partial: None,
        }));
        let events = Script::stream(items);
        let seen = collect(&events).await;

        assert_eq!(kinds(&seen), ["start", "text_start", "text_delta", "error"]);
        let result = events.result().await;
        assert_eq!(result.stop_reason, StopReason::Error as i32);
        assert_eq!(
            result.error_message.as_deref(),
            Some("event 3 (text_start) breaks rule 'next-index': content_index 4 must open the next block, 1")
        );
        assert_eq!(text_of(&result), "ok");
    })
    .await;
}

#[tokio::test]
async fn the_source_is_dropped_at_the_terminal_event() {
    within(async {
        let message = assistant_message(vec![text("done")], StopReason::Stop);
        let mut items: Vec<_> = events_of(&message, 100).into_iter().map(Ok).collect();
        items.push(Ok(text_delta("after the end")));
        let (script, dropped) = Script::new(items, true);
        let events = EventStream::from_source(Box::pin(script));

        let seen = collect(&events).await;
        assert_eq!(kinds(&seen).last(), Some(&"done"));
        assert!(dropped.load(Ordering::SeqCst));
        assert_eq!(events.result().await, message);
    })
    .await;
}

#[tokio::test]
async fn result_reads_the_source_and_keeps_the_events_for_the_reader() {
    within(async {
        let message = assistant_message(vec![text(&"x".repeat(200))], StopReason::Stop);
        let script: Vec<_> = events_of(&message, 1).into_iter().map(Ok).collect();
        let events = Script::stream(script);

        assert_eq!(events.result().await, message);
        let seen = collect(&events).await;
        assert_eq!(seen.len(), 200 + 4);
        assert_eq!(kinds(&seen).last(), Some(&"done"));
    })
    .await;
}

#[tokio::test]
async fn cancel_drops_the_source_and_ends_with_aborted() {
    within(async {
        let (script, dropped) = Script::new(opening("waiting", 2), true);
        let events = EventStream::from_source(Box::pin(script));
        let first = events.next().await.expect("the first event");
        assert_eq!(event_kind(&first), "start");

        events.cancel();
        assert!(dropped.load(Ordering::SeqCst));
        let seen = collect(&events).await;
        assert_eq!(kinds(&seen), ["error"]);
        let result = events.result().await;
        assert_eq!(result.stop_reason, StopReason::Aborted as i32);
        assert_eq!(result.error_message.as_deref(), Some("cancelled"));
    })
    .await;
}

#[tokio::test]
async fn a_reader_waiting_for_a_push_is_woken() {
    within(async {
        let events = Arc::new(EventStream::new());
        let pusher = events.clone();
        let waiter = tokio::spawn(async move { pusher.result().await });
        tokio::task::yield_now().await; // let the waiter start waiting
        let mut failed = assistant_message(vec![], StopReason::Error);
        failed.error_message = Some("socket reset".to_owned());
        events
            .push(error_event(failed.clone()))
            .expect("a valid stream");
        assert_eq!(waiter.await.expect("the waiter finishes"), failed);
    })
    .await;
}

#[tokio::test]
async fn cancel_from_another_task_wakes_the_reader() {
    within(async {
        let (script, dropped) = Script::new(opening("waiting", 2), true);
        let events = Arc::new(EventStream::from_source(Box::pin(script)));
        let reader = events.clone();
        let reading = tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Some(event) = reader.next().await {
                seen.push(event);
            }
            seen
        });
        while events.partial().content.is_empty() {
            tokio::task::yield_now().await; // until the reader has read the opening events
        }

        events.cancel();
        let seen = reading.await.expect("the reader finishes");
        assert_eq!(kinds(&seen), ["start", "text_start", "error"]);
        assert!(dropped.load(Ordering::SeqCst));
        assert_eq!(
            events.result().await.stop_reason,
            StopReason::Aborted as i32
        );
    })
    .await;
}

#[tokio::test]
async fn it_is_a_futures_stream() {
    within(async {
        let mut events = Script::stream(opening("", 2));
        let mut pinned = Pin::new(&mut events);
        let first = std::future::poll_fn(|context| pinned.as_mut().poll_next(context)).await;
        let second = std::future::poll_fn(|context| pinned.as_mut().poll_next(context)).await;
        assert_eq!(event_kind(&first.unwrap()), "start");
        assert_eq!(event_kind(&second.unwrap()), "text_start");
        let partial = events.partial();
        assert!(matches!(
            partial.content[0].block,
            Some(assistant_content::Block::Text(_))
        ));
    })
    .await;
}

#[tokio::test]
async fn the_partial_is_the_message_after_the_event_the_reader_just_took() {
    within(async {
        let message = assistant_message(vec![text("abc")], StopReason::Stop);
        let script: Vec<_> = events_of(&message, 1).into_iter().map(Ok).collect();
        let events = Script::stream(script);
        let mut texts = Vec::new();
        while let Some(event) = events.next().await {
            if event_kind(&event) == "text_delta" {
                texts.push(text_of(&*events.partial()));
            }
        }
        assert_eq!(texts, ["a", "ab", "abc"]);

        // Events that result() reads ahead of the reader are in the partial already.
        let script: Vec<_> = events_of(&message, 1).into_iter().map(Ok).collect();
        let events = Script::stream(script);
        assert_eq!(events.result().await, message);
        assert_eq!(*events.partial(), message);
    })
    .await;
}

#[test]
fn a_stream_of_200000_deltas_costs_linear_time() {
    // Copying the whole partial per event would take minutes here, past the test's time limit.
    bounded_async(async {
        let deltas = many_deltas(200_000);
        let events = EventStream::new();
        let mut taken = 0;
        for event in text_events(&deltas) {
            events.push(event).expect("a valid stream");
            let event = events.next().await.expect("the event just pushed");
            if let Some(Event::TextDelta(delta)) = &event.event {
                // The reader sees the partial after each delta, without a copy of it.
                let partial = events.partial();
                let Some(assistant_content::Block::Text(text)) = &partial.content[0].block else {
                    panic!("block 0 is a text block");
                };
                assert!(text.text.ends_with(&delta.delta));
                taken += 1;
            }
            if event_kind(&event) == "text_end" {
                assert_eq!(text_of(&*events.partial()), deltas.concat());
            }
        }
        assert_eq!(taken, deltas.len());
        assert_eq!(text_of(&events.result().await), deltas.concat());
        assert!(events.next().await.is_none());
    });
}
