//! The event stream of one model call: ModelEvents, ending at the first `done` or `error` event,
//! whose message is the result, and the partial message the [`Accumulator`] rebuilds from them.
//!
//! Events come either from [`EventStream::push`] or from a [`Source`] (the client's call) that
//! is read as the stream is consumed: no task sits in between, and a slow reader holds the server
//! back through HTTP/2 flow control. Python splits this into a generic `EventStream` and
//! `AssistantMessageEventStream`; Rust has one event type, so [`EventStream`] is both.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use futures_core::Stream;

use crate::accumulator::{Accumulator, StreamProtocolError};
use crate::events::terminal_message;
use crate::v1::model_event::Event;
use crate::v1::{AssistantMessage, ErrorEvent, ModelEvent, StopReason};

/// Where a stream's events come from: each item is an event or the message of the failure that
/// ends the stream with ERROR. Ending without a terminal event is a failure too.
pub type Source = Pin<Box<dyn Stream<Item = Result<ModelEvent, String>> + Send>>;

/// The events of one model call, ending in its final message, and the partial message rebuilt
/// from them.
///
/// It is a [`Stream`] of [`ModelEvent`]s (or call [`EventStream::next`]); a terminal event ends
/// iteration by itself, and anything pushed after it is ignored. Iterating never fails: every
/// failure of the source becomes the final `error` event, with everything received before it.
/// [`EventStream::result`] is the message the terminal event carries. Dropping the stream, or
/// [`EventStream::cancel`], stops the source.
///
/// Events arrive with `partial` unset: a copy of the message in every event would make a stream
/// cost time and memory quadratic in its length. [`EventStream::partial`] shares the one partial
/// the stream updates in place, as the Python runtime's events do.
#[derive(Debug, Default)]
pub struct EventStream {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    queue: VecDeque<ModelEvent>,
    accumulator: Accumulator,
    done: bool,
    result: Option<AssistantMessage>,
    source: Option<Source>,
    /// Readers waiting for an event pushed by hand, or for another reader to read the source.
    waiting: Vec<Waker>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("State")
            .field("queued", &self.queue.len())
            .field("done", &self.done)
            .field("has_source", &self.source.is_some())
            .finish_non_exhaustive()
    }
}

impl EventStream {
    /// An empty stream, fed by [`EventStream::push`].
    pub fn new() -> Self {
        Self::default()
    }

    /// A stream that reads its events from `source` as they are consumed.
    pub fn from_source(source: Source) -> Self {
        let stream = Self::new();
        stream.lock().source = Some(source);
        stream
    }

    /// Rebuild the partial from `event` and queue the event; a no-op once the stream has ended.
    /// A terminal event ends the stream and sets its result.
    ///
    /// An event that does not fit the stream so far is refused, before anything is queued, with
    /// the rule it breaks (a stream reading a source turns that into its `error` event).
    pub fn push(&self, event: ModelEvent) -> Result<(), StreamProtocolError> {
        let mut state = self.lock();
        state.push(event)?;
        state.wake();
        Ok(())
    }

    /// End the stream with an `error` event whose message is everything received so far, with
    /// `reason` and `error_message`; a no-op once the stream has ended.
    pub fn fail(&self, reason: StopReason, error_message: impl Into<String>) {
        let mut state = self.lock();
        state.fail(reason, error_message.into());
        state.wake();
    }

    /// Stop the call: the source is dropped (which cancels the RPC) and the stream ends with an
    /// ABORTED `error` event "cancelled", after the events already queued.
    pub fn cancel(&self) {
        let mut state = self.lock();
        state.fail(StopReason::Aborted, "cancelled".to_owned());
        state.wake();
    }

    /// Whether the stream has ended: nothing pushed from now on is delivered.
    pub fn is_done(&self) -> bool {
        self.lock().done
    }

    /// Events received but not yet taken by the reader.
    pub fn queued(&self) -> usize {
        self.lock().queue.len()
    }

    /// The message as rebuilt from the events received so far, shared, not copied (see
    /// [`Accumulator::snapshot`]). The stream reads its source one event at a time, as the reader
    /// asks for them, so right after [`EventStream::next`] returns an event this is the message
    /// after that event; events pushed by hand or read by [`EventStream::result`] before the
    /// reader takes them are already in it, as in the Python runtime.
    pub fn partial(&self) -> Arc<AssistantMessage> {
        self.lock().accumulator.snapshot()
    }

    /// The next event, or `None` after the terminal event. Takes `&self`, so another task holding
    /// the stream (in an `Arc`) can [`EventStream::cancel`] it while this one waits.
    pub async fn next(&self) -> Option<ModelEvent> {
        poll_fn(|context| self.poll_event(context)).await
    }

    /// The final message: the one the terminal event carries. Reads the rest of the source if
    /// need be; the events read stay queued for the reader.
    pub async fn result(&self) -> AssistantMessage {
        poll_fn(|context| {
            let mut state = self.lock();
            while !state.done {
                if state.read(context).is_pending() {
                    return Poll::Pending;
                }
            }
            let message = state
                .result
                .clone()
                .expect("a stream that is done has a result");
            Poll::Ready(message)
        })
        .await
    }

    fn poll_event(&self, context: &mut Context<'_>) -> Poll<Option<ModelEvent>> {
        let mut state = self.lock();
        loop {
            if let Some(event) = state.queue.pop_front() {
                return Poll::Ready(Some(event));
            }
            if state.done {
                return Poll::Ready(None);
            }
            if state.read(context).is_pending() {
                return Poll::Pending;
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held (in a source's poll, say) leaves the state as it was
        // after its last complete step, so a poisoned lock is used as it is.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Stream for EventStream {
    type Item = ModelEvent;

    fn poll_next(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<ModelEvent>> {
        self.poll_event(context)
    }
}

impl State {
    /// Read one item of the source into the queue, or end the stream with its failure.
    /// Pending when nothing has arrived yet (or, without a source, until someone pushes).
    fn read(&mut self, context: &mut Context<'_>) -> Poll<()> {
        let Some(source) = self.source.as_mut() else {
            self.wait(context.waker());
            return Poll::Pending;
        };
        let item = match source.as_mut().poll_next(context) {
            Poll::Pending => {
                // The source wakes only its last poller; any other reader waiting here is woken
                // when that one makes progress.
                self.wait(context.waker());
                return Poll::Pending;
            }
            Poll::Ready(item) => item,
        };
        match item {
            Some(Ok(event)) => {
                if let Err(broken) = self.push(event) {
                    self.fail(StopReason::Error, broken.0);
                }
            }
            Some(Err(message)) => self.fail(StopReason::Error, message),
            None => self.fail(
                StopReason::Error,
                "stream ended without a terminal event".to_owned(),
            ),
        }
        self.wake();
        Poll::Ready(())
    }

    fn push(&mut self, mut event: ModelEvent) -> Result<(), StreamProtocolError> {
        if self.done {
            return Ok(());
        }
        self.accumulator.apply(&event)?;
        // A receiver replaces whatever arrives here (rule 4); ours is read from the stream.
        event.partial = None;
        if let Some(message) = terminal_message(&event) {
            self.done = true;
            self.result = Some(message.clone());
            // Anything after the terminal event is ignored: dropping the source ends the call.
            self.source = None;
        }
        self.queue.push_back(event);
        Ok(())
    }

    fn fail(&mut self, reason: StopReason, error_message: String) {
        if self.done {
            return;
        }
        let mut message = self.accumulator.partial().clone();
        message.stop_reason = reason as i32;
        message.error_message = Some(error_message);
        self.result = Some(message.clone());
        // Built from the partial, it need not pass the rules a sender's terminal event must.
        let event = ModelEvent {
            event: Some(Event::Error(ErrorEvent {
                reason: reason as i32,
                message: Some(message),
            })),
            partial: None,
        };
        self.accumulator.close(&event);
        self.done = true;
        self.source = None;
        self.queue.push_back(event);
    }

    fn wait(&mut self, waker: &Waker) {
        if !self.waiting.iter().any(|known| known.will_wake(waker)) {
            self.waiting.push(waker.clone());
        }
    }

    fn wake(&mut self) {
        for waker in self.waiting.drain(..) {
            waker.wake();
        }
    }
}
