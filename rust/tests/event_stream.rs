//! The event stream: consumers take turns, a terminal event ends iteration and is the result,
//! every failure of its source becomes its final `error` event with a structured failure, cancel
//! works from any thread, and the partial follows the events at a cost linear in their number.

mod support;

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_core::Stream;
use pi_proto::v1::{ModelEvent, StopReason};
use pi_proto::{AssistantMessageEventStream, StreamFailure, events_of, terminal_message, text_of};
use support::{
    announced, assistant_message, bounded, collect, done, kinds, many_deltas, text, text_delta,
    within,
};

/// A source that plays a list of items, then ends, or with `hang`, stays pending forever.
struct Script {
    items: VecDeque<Result<ModelEvent, StreamFailure>>,
    hang: bool,
}

impl Stream for Script {
    type Item = Result<ModelEvent, StreamFailure>;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.items.pop_front() {
            Some(item) => Poll::Ready(Some(item)),
            None if self.hang => Poll::Pending,
            None => Poll::Ready(None),
        }
    }
}

fn scripted(
    items: Vec<Result<ModelEvent, StreamFailure>>,
    hang: bool,
) -> AssistantMessageEventStream {
    AssistantMessageEventStream::from_source(Box::pin(Script {
        items: items.into(),
        hang,
    }))
}

/// The events of a message whose one text block is `answer`, one character per delta.
fn answer(answer: &str) -> Vec<ModelEvent> {
    events_of(&assistant_message(vec![text(answer)], StopReason::Stop), 1)
}

/// Let every other task run until it waits again.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn consumers_take_turns_the_longest_waiting_first() {
    within(async {
        let events = Arc::new(AssistantMessageEventStream::new());
        let consumer = |events: Arc<AssistantMessageEventStream>| {
            tokio::spawn(async move { collect(&events).await })
        };
        let first = consumer(events.clone());
        settle().await;
        let second = consumer(events.clone());
        settle().await;

        let sent = answer("abcd"); // start, text_start, four deltas, text_end, done
        for event in sent.clone() {
            events.push(event).expect("a valid stream");
            settle().await;
        }

        let (first, second) = (first.await.unwrap(), second.await.unwrap());
        let every_other = |from: usize| {
            sent.iter()
                .skip(from)
                .step_by(2)
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(first, every_other(0));
        assert_eq!(second, every_other(1));
    })
    .await;
}

#[tokio::test]
async fn a_consumer_that_stops_waiting_passes_its_event_on() {
    within(async {
        let events = Arc::new(AssistantMessageEventStream::new());
        let sent = answer("ab");
        let mut gave_up = Box::pin(events.next());
        // Poll once, so it waits in line, then let an event reach it and drop it unread.
        assert!(futures_poll(gave_up.as_mut()).is_pending());
        events.push(sent[0].clone()).expect("a valid stream");
        drop(gave_up);

        assert_eq!(events.next().await, Some(sent[0].clone()));
    })
    .await;
}

fn futures_poll<F: std::future::Future>(future: Pin<&mut F>) -> Poll<F::Output> {
    let waker = std::task::Waker::noop();
    future.poll(&mut Context::from_waker(waker))
}

#[test]
fn cancel_from_another_thread_ends_the_waiting_consumer_with_aborted() {
    bounded(|| {
        let events = Arc::new(AssistantMessageEventStream::new());
        for event in answer("Hello").into_iter().take(5) {
            events.push(event).expect("a valid stream"); // start, text_start, "H", "e", "l"
        }
        let runtime = || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime")
        };
        // The thread cancels once the consumer has taken the five events and waits for the next,
        // and another thread waits for the result.
        let (waiting, told) = std::sync::mpsc::channel();
        let waiting_for_result = {
            let (events, waiting) = (events.clone(), waiting.clone());
            std::thread::spawn(move || runtime().block_on(announced(events.result(), waiting)))
        };
        let canceller = {
            let events = events.clone();
            std::thread::spawn(move || {
                for _ in 0..2 {
                    told.recv().expect("a task that waits");
                }
                events.cancel();
            })
        };

        let seen = runtime().block_on(async {
            let mut seen = Vec::new();
            for _ in 0..5 {
                seen.push(events.next().await.expect("an event pushed"));
            }
            seen.extend(announced(events.next(), waiting).await);
            seen.extend(collect(&events).await);
            seen
        });
        canceller.join().unwrap();
        let result = waiting_for_result.join().unwrap();

        assert_eq!(
            kinds(&seen),
            [
                "start",
                "text_start",
                "text_delta",
                "text_delta",
                "text_delta",
                "error"
            ]
        );
        assert_eq!(terminal_message(&seen[5]), Some(&result));
        assert_eq!(result.stop_reason, StopReason::Aborted as i32);
        assert_eq!(text_of(&result), "Hel");
        assert_eq!(events.failure(), None);
    });
}

#[tokio::test]
async fn events_pushed_after_the_terminal_event_are_ignored() {
    within(async {
        let message = assistant_message(vec![text("hello")], StopReason::Stop);
        let events = AssistantMessageEventStream::new();
        let (mut seen, mut texts) = (Vec::new(), Vec::new());
        for event in events_of(&message, 2) {
            events.push(event).expect("a valid stream");
            seen.push(events.next().await.expect("the event just pushed"));
            texts.push(text_of(&*events.partial()));
        }
        events.push(done(message.clone())).expect("ignored");

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
        assert_eq!(events.failure(), None);
    })
    .await;
}

#[tokio::test]
async fn an_event_that_breaks_a_rule_is_refused_and_not_queued() {
    within(async {
        let events = AssistantMessageEventStream::new();
        let refused = events.push(text_delta(0, "x")).expect_err("no start yet");
        assert_eq!((refused.event_index, refused.rule_id), (0, "start-first"));
        assert_eq!(events.queued(), 0);
        assert!(!events.is_done());
    })
    .await;
}

#[tokio::test]
async fn a_source_that_ends_early_ends_the_stream_with_terminal_missing() {
    within(async {
        let opening = answer("Hel").into_iter().take(3).map(Ok).collect();
        let events = scripted(opening, false);
        let seen = collect(&events).await;

        assert_eq!(kinds(&seen), ["start", "text_start", "text_delta", "error"]);
        let result = events.result().await;
        assert_eq!(result.stop_reason, StopReason::Error as i32);
        assert_eq!(text_of(&result), "H");
        let Some(StreamFailure::Rule(missing)) = events.failure() else {
            panic!("a broken rule, not {:?}", events.failure());
        };
        assert_eq!(
            (missing.event_index, missing.rule_id),
            (3, "terminal-missing")
        );
    })
    .await;
}

#[tokio::test]
async fn an_event_that_breaks_a_rule_ends_a_source_stream_naming_the_event() {
    within(async {
        let mut items: Vec<_> = answer("Hi").into_iter().take(2).map(Ok).collect();
        items.push(Ok(text_delta(4, "x")));
        let events = scripted(items, true);
        let seen = collect(&events).await;

        assert_eq!(kinds(&seen), ["start", "text_start", "error"]);
        let Some(StreamFailure::Rule(broken)) = events.failure() else {
            panic!("a broken rule, not {:?}", events.failure());
        };
        assert_eq!((broken.event_index, broken.rule_id), (2, "block-exists"));
    })
    .await;
}

#[tokio::test]
async fn a_source_failure_is_the_stream_failure() {
    within(async {
        let status = StreamFailure::Status {
            code: "UNAVAILABLE",
            message: "the model is down".to_owned(),
        };
        let events = scripted(vec![Err(status.clone())], false);
        let seen = collect(&events).await;

        assert_eq!(kinds(&seen), ["error"]);
        let result = events.result().await;
        assert_eq!(result.error_message.as_deref(), Some("the model is down"));
        assert_eq!(events.failure(), Some(status));
    })
    .await;
}

#[tokio::test]
async fn result_reads_the_source_and_leaves_the_events_for_the_consumer() {
    within(async {
        let sent = answer("ok");
        let events = scripted(sent.iter().cloned().map(Ok).collect(), true);

        let result = events.result().await;
        assert_eq!(text_of(&result), "ok");
        assert_eq!(collect(&events).await, sent);
    })
    .await;
}

// How long it takes is for `make bench`: copying the partial at every event would take minutes.
#[test]
fn a_stream_of_200000_deltas_rebuilds_the_whole_text() {
    bounded(|| {
        let deltas = many_deltas(200_000);
        let events = AssistantMessageEventStream::new();
        let opening = answer("");
        events.push(opening[0].clone()).expect("start");
        events.push(opening[1].clone()).expect("text_start");
        for delta in &deltas {
            events.push(text_delta(0, delta)).expect("a valid delta");
            events.try_next().expect("the event just pushed");
        }
        assert_eq!(text_of(&*events.partial()), deltas.concat());
    });
}

// The names of the last release stay for one more, as deprecated aliases of the new ones.
#[test]
#[allow(deprecated)]
fn the_former_names_still_work() {
    let events: pi_proto::EventStream = pi_proto::EventStream::new();
    let renamed: &AssistantMessageEventStream = &events;
    assert!(!renamed.is_done());
    let text = r#"{"path": "src/ma"#;
    assert_eq!(
        pi_proto::complete_arguments(text),
        pi_proto::complete_json(text)
    );
    assert_eq!(pi_proto::complete_json(text), r#"{"path": "src/ma"}"#);
}
