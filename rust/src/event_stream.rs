//! The event stream of one model call: ModelEvents, ending at the first `done` or `error` event,
//! whose message is the result, and the partial message the [`Accumulator`] rebuilds from them.
//!
//! Events come either from [`AssistantMessageEventStream::push`] or from a [`Source`] (the client's
//! call) that is read as the stream is consumed: no task sits in between, and a slow reader holds
//! the server back through HTTP/2 flow control.
//!
//! Several consumers of one stream take turns: each event goes to the consumer that has waited
//! longest, so with two waiting, one gets events 0, 2, 4 and the other 1, 3, 5. A consumer waiting
//! in line may read the source on behalf of the one at the front.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};

use futures_core::Stream;

use crate::accumulator::{Accumulator, StreamProtocolError};
use crate::events::terminal_message;
use crate::v1::model_event::Event;
use crate::v1::{AssistantMessage, ErrorEvent, ModelEvent, StopReason, StreamRule};

/// Where a stream's events come from: each item is an event, or the failure that ends the
/// stream with ERROR. Ending without a terminal event is a failure too (`terminal-missing`).
pub type Source = Pin<Box<dyn Stream<Item = Result<ModelEvent, StreamFailure>> + Send>>;

/// What a stream whose caller cancels it does besides ending: given the stream id, tell the
/// server that keeps the stream (the client's `Cancel` call).
pub(crate) type OnCancel = Box<dyn FnOnce(&str) + Send>;

/// Why a receiver ended a stream itself, with an `error` event of its own making.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamFailure {
    /// A gRPC status ended the call.
    Status {
        /// The status code's name, e.g. `UNAVAILABLE` or `DEADLINE_EXCEEDED`.
        code: &'static str,
        /// The status message; may be empty.
        message: String,
    },
    /// An event broke a stream rule, did not decode (`event-decode`), or the events ended without
    /// a terminal event (`terminal-missing`).
    Rule(StreamProtocolError),
}

impl fmt::Display for StreamFailure {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Status { code, message } if message.is_empty() => formatter.write_str(code),
            Self::Status { message, .. } => formatter.write_str(message),
            Self::Rule(error) => write!(formatter, "{error}"),
        }
    }
}

/// The events of one model call, ending in its final message, and the partial message rebuilt
/// from them.
///
/// Read it with [`Self::next`] (or as a [`Stream`]); a terminal event ends iteration by itself,
/// and anything pushed after it is ignored. Iterating never fails: every failure of the source
/// becomes the final `error` event, with everything received before it, and [`Self::failure`]
/// says what it was. [`Self::result`] is the message the terminal event carries.
/// [`Self::cancel`], from any task or thread, or dropping the stream, stops the source (and, for
/// a client's stream that has a stream id, cancels the stream on its server).
///
/// Events arrive with `partial` unset: a copy of the message in every event would make a stream
/// cost time and memory quadratic in its length. [`Self::partial`] shares the one partial the
/// stream updates in place.
#[derive(Debug)]
pub struct AssistantMessageEventStream {
    state: Mutex<State>,
}

/// The former name of [`AssistantMessageEventStream`].
#[deprecated(note = "renamed AssistantMessageEventStream, the name every runtime gives it")]
pub type EventStream = AssistantMessageEventStream;

impl Default for AssistantMessageEventStream {
    fn default() -> Self {
        Self::new()
    }
}

struct State {
    queue: VecDeque<ModelEvent>,
    accumulator: Accumulator,
    done: bool,
    result: Option<AssistantMessage>,
    failure: Option<StreamFailure>,
    source: Option<Source>,
    /// Consumers waiting for an event, longest first.
    readers: VecDeque<(u64, Waker)>,
    /// Events handed to a waiting consumer that has not taken them yet.
    handed: Vec<(u64, ModelEvent)>,
    /// Callers of `result()` waiting for the stream to end.
    finishing: Vec<Waker>,
    /// The place in line of the consumer that reads the stream as a [`Stream`].
    own_reader: Option<u64>,
    next_reader: u64,
    /// From the start event applied.
    stream_id: String,
    /// Until the stream ends: what its caller cancelling it does besides ending it.
    on_cancel: Option<OnCancel>,
}

impl fmt::Debug for State {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("State")
            .field("queued", &self.queue.len())
            .field("done", &self.done)
            .field("waiting", &self.readers.len())
            .field("has_source", &self.source.is_some())
            .finish_non_exhaustive()
    }
}

impl AssistantMessageEventStream {
    /// An empty stream, fed by [`AssistantMessageEventStream::push`].
    pub fn new() -> Self {
        Self {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                accumulator: Accumulator::default(),
                done: false,
                result: None,
                failure: None,
                source: None,
                readers: VecDeque::new(),
                handed: Vec::new(),
                finishing: Vec::new(),
                own_reader: None,
                next_reader: 0,
                stream_id: String::new(),
                on_cancel: None,
            }),
        }
    }

    /// A stream that reads its events from `source` as they are consumed.
    pub fn from_source(source: Source) -> Self {
        let stream = Self::new();
        stream.read_from(source);
        stream
    }

    /// Read the events from `source` from now on (the client's call).
    pub(crate) fn read_from(&self, source: Source) {
        self.lock().source = Some(source);
    }

    /// Call `on_cancel` with the stream id when the caller cancels the stream (or drops it)
    /// before its end, once its start event brought a stream id.
    pub(crate) fn on_cancel(&self, on_cancel: OnCancel) {
        self.lock().on_cancel = Some(on_cancel);
    }

    /// End the stream with an ERROR `error` event for `failure`, which [`Self::failure`] then
    /// returns.
    pub(crate) fn fail_with(&self, failure: StreamFailure) {
        let message = failure.to_string();
        self.lock().fail(StopReason::Error, message, Some(failure));
    }

    /// The same stream, refusing deltas that add up to more than `limit` bytes of UTF-8 (rule
    /// `size-limit`; the default is [`crate::DEFAULT_MAX_MESSAGE_BYTES`], 64 MiB).
    #[must_use]
    pub fn with_max_message_bytes(self, limit: u64) -> Self {
        self.lock().accumulator = Accumulator::with_max_message_bytes(limit);
        self
    }

    /// Rebuild the partial from `event` and hand the event to the consumer that has waited
    /// longest, or queue it; a no-op once the stream has ended. A terminal event ends the stream
    /// and sets its result.
    ///
    /// An event that does not fit the stream so far is refused, before anything is queued, with
    /// the rule it breaks (a stream reading a source turns that into its `error` event).
    pub fn push(&self, event: ModelEvent) -> Result<(), StreamProtocolError> {
        self.lock().push(event)
    }

    /// End the stream with an `error` event whose message is everything received so far, with
    /// `reason` and `error_message`; a no-op once the stream has ended.
    pub fn fail(&self, reason: StopReason, error_message: impl Into<String>) {
        self.lock().fail(reason, error_message.into(), None);
    }

    /// Stop the call, from any task or thread: the source is dropped (which cancels the RPC) and
    /// the stream ends with an ABORTED `error` event "cancelled", after the events already
    /// queued. A consumer waiting for the next event receives it. A client's stream that has a
    /// stream id also sends `Cancel` to its server, without waiting for it.
    pub fn cancel(&self) {
        let mut state = self.lock();
        let told = state.cancelled();
        state.fail(StopReason::Aborted, "cancelled".to_owned(), None);
        drop(state);
        if let Some((on_cancel, stream_id)) = told {
            on_cancel(&stream_id);
        }
    }

    /// The id the server keeps the stream under (`StartEvent.stream_id`), once the start event
    /// is applied; empty before it, and when the server keeps none.
    pub fn stream_id(&self) -> String {
        self.lock().stream_id.clone()
    }

    /// Whether the stream has ended: nothing pushed from now on is delivered.
    pub fn is_done(&self) -> bool {
        self.lock().done
    }

    /// Events received but not yet taken by a consumer.
    pub fn queued(&self) -> usize {
        self.lock().queue.len()
    }

    /// Why the stream ended with an `error` event of its own making: a status or a broken rule.
    /// `None` while it goes on, and when its terminal event came from the source or the pusher
    /// or from [`AssistantMessageEventStream::cancel`].
    pub fn failure(&self) -> Option<StreamFailure> {
        self.lock().failure.clone()
    }

    /// The message as rebuilt from the events received so far, shared, not copied (see
    /// [`Accumulator::snapshot`]). The stream reads its source one event at a time, as consumers
    /// ask for them, so right after [`Self::next`] returns an event this is the message after that
    /// event; events that [`Self::push`] or [`Self::result`] queued ahead of the consumer are in
    /// it already.
    pub fn partial(&self) -> Arc<AssistantMessage> {
        self.lock().accumulator.snapshot()
    }

    /// The next event, or `None` after the terminal event. Takes `&self`, so several tasks can
    /// consume one stream (in an `Arc`), taking turns, and another can [`Self::cancel`] it while
    /// they wait.
    pub fn next(&self) -> Next<'_> {
        Next {
            stream: self,
            place: None,
        }
    }

    /// The next queued event, without waiting and without reading the source; `None` when no
    /// event is queued.
    pub fn try_next(&self) -> Option<ModelEvent> {
        self.lock().queue.pop_front()
    }

    /// The final message: the one the terminal event carries. Reads the rest of the source if
    /// need be; the events read are queued for the consumers.
    pub async fn result(&self) -> AssistantMessage {
        Finish { stream: self }.await
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held (in a source's poll, say) leaves the state as it was
        // after its last complete step, so a poisoned lock is used as it is.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for AssistantMessageEventStream {
    /// Dropped before its end, the stream is cancelled: its server is told as by [`Self::cancel`].
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some((on_cancel, stream_id)) = state.cancelled() {
            on_cancel(&stream_id);
        }
    }
}

impl Stream for AssistantMessageEventStream {
    type Item = ModelEvent;

    fn poll_next(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<ModelEvent>> {
        let mut state = self.lock();
        let mut place = state.own_reader.take();
        let polled = state.poll_event(&mut place, context);
        state.own_reader = place;
        polled
    }
}

/// The future of [`AssistantMessageEventStream::next`]. Dropping it gives up its place in line;
/// an event already handed to it goes to the next consumer in line, or back to the front of the
/// queue.
#[derive(Debug)]
pub struct Next<'a> {
    stream: &'a AssistantMessageEventStream,
    place: Option<u64>,
}

impl Future for Next<'_> {
    type Output = Option<ModelEvent>;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<ModelEvent>> {
        let this = &mut *self;
        this.stream.lock().poll_event(&mut this.place, context)
    }
}

impl Drop for Next<'_> {
    fn drop(&mut self) {
        if let Some(place) = self.place.take() {
            self.stream.lock().leave(place);
        }
    }
}

/// The future of [`AssistantMessageEventStream::result`].
struct Finish<'a> {
    stream: &'a AssistantMessageEventStream,
}

impl Future for Finish<'_> {
    type Output = AssistantMessage;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<AssistantMessage> {
        let mut state = self.stream.lock();
        loop {
            if let Some(result) = state.result.as_ref().filter(|_| state.done) {
                return Poll::Ready(result.clone());
            }
            if !state
                .finishing
                .iter()
                .any(|known| known.will_wake(context.waker()))
            {
                state.finishing.push(context.waker().clone());
            }
            if state.read(context).is_pending() {
                return Poll::Pending;
            }
        }
    }
}

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        // It may have been the one reading the source: whoever still waits reads it now.
        self.stream.lock().wake_all();
    }
}

impl State {
    /// One poll of a consumer whose place in line (if it has one) is `place`.
    fn poll_event(
        &mut self,
        place: &mut Option<u64>,
        context: &mut Context<'_>,
    ) -> Poll<Option<ModelEvent>> {
        loop {
            match *place {
                Some(me) => {
                    if let Some(at) = self.handed.iter().position(|(id, _)| *id == me) {
                        *place = None;
                        // It may have been the last to read the source: whoever still waits
                        // reads it now.
                        self.wake_all_but(context.waker());
                        return Poll::Ready(Some(self.handed.swap_remove(at).1));
                    }
                    let Some(entry) = self.readers.iter_mut().find(|(id, _)| *id == me) else {
                        // Released when the stream ended.
                        *place = None;
                        return Poll::Ready(None);
                    };
                    if !entry.1.will_wake(context.waker()) {
                        entry.1 = context.waker().clone();
                    }
                }
                None => {
                    if let Some(event) = self.queue.pop_front() {
                        return Poll::Ready(Some(event));
                    }
                    if self.done {
                        return Poll::Ready(None);
                    }
                    let me = self.next_reader;
                    self.next_reader += 1;
                    self.readers.push_back((me, context.waker().clone()));
                    *place = Some(me);
                }
            }
            if self.read(context).is_pending() {
                return Poll::Pending;
            }
        }
    }

    /// A consumer gives up its place: an event handed to it goes to the next in line.
    fn leave(&mut self, place: u64) {
        if let Some(at) = self.handed.iter().position(|(id, _)| *id == place) {
            let event = self.handed.swap_remove(at).1;
            match self.readers.pop_front() {
                Some((next, waker)) => {
                    self.handed.push((next, event));
                    waker.wake();
                }
                None => self.queue.push_front(event),
            }
        } else {
            self.readers.retain(|(id, _)| *id != place);
        }
        // It may have been the one reading the source: whoever still waits reads it now.
        self.wake_all();
    }

    /// Read one item of the source into the stream, or end the stream with its failure.
    /// Pending when nothing has arrived yet (or, without a source, until someone pushes).
    fn read(&mut self, context: &mut Context<'_>) -> Poll<()> {
        let Some(source) = self.source.as_mut() else {
            return Poll::Pending;
        };
        let item = match source.as_mut().poll_next(context) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(item) => item,
        };
        match item {
            Some(Ok(event)) => {
                if let Err(broken) = self.push(event) {
                    let message = broken.to_string();
                    self.fail(
                        StopReason::Error,
                        message,
                        Some(StreamFailure::Rule(broken)),
                    );
                }
            }
            Some(Err(failure)) => {
                self.fail(StopReason::Error, failure.to_string(), Some(failure));
            }
            None => {
                let received = self.accumulator.count();
                let missing = StreamProtocolError::new(
                    received,
                    StreamRule::TerminalMissing,
                    "the events ended without a terminal event",
                );
                self.fail(
                    StopReason::Error,
                    "stream ended without a terminal event".to_owned(),
                    Some(StreamFailure::Rule(missing)),
                );
            }
        }
        // The source wakes only its last reader: let every other waiting party look again (the
        // one reading goes on by itself).
        self.wake_all_but(context.waker());
        Poll::Ready(())
    }

    fn push(&mut self, event: ModelEvent) -> Result<(), StreamProtocolError> {
        if self.done {
            return Ok(());
        }
        self.accumulator.apply(&event)?;
        if let Some(Event::Start(start)) = &event.event {
            self.stream_id.clone_from(&start.stream_id);
        }
        self.deliver(event);
        Ok(())
    }

    /// What to call, with the stream id, for a stream its caller cancels now: `None` once it
    /// has ended, and without a stream id (nothing on a server to cancel).
    fn cancelled(&mut self) -> Option<(OnCancel, String)> {
        if self.done || self.stream_id.is_empty() {
            return None;
        }
        Some((self.on_cancel.take()?, self.stream_id.clone()))
    }

    fn fail(&mut self, reason: StopReason, error_message: String, failure: Option<StreamFailure>) {
        if self.done {
            return;
        }
        let mut message = self.accumulator.partial().clone();
        message.stop_reason = reason as i32;
        message.error_message = Some(error_message);
        // Built from the partial, it need not pass the rules a sender's terminal event must.
        let event = ModelEvent {
            event: Some(Event::Error(ErrorEvent {
                reason: reason as i32,
                message: Some(message),
                ..Default::default()
            })),
            ..Default::default()
        };
        self.accumulator.close(&event);
        self.failure = failure;
        self.deliver(event);
    }

    /// Hand an applied event to the consumer that has waited longest, or queue it; a terminal
    /// event ends the stream.
    fn deliver(&mut self, mut event: ModelEvent) {
        // A receiver replaces whatever arrives here (rule 4); ours is read from the stream.
        event.partial = None;
        let terminal = terminal_message(&event).cloned();
        match self.readers.pop_front() {
            Some((reader, waker)) => {
                self.handed.push((reader, event));
                waker.wake();
            }
            None => self.queue.push_back(event),
        }
        if let Some(message) = terminal {
            self.done = true;
            self.result = Some(message);
            // Ended: there is nothing left to cancel.
            self.on_cancel = None;
            // Anything after the terminal event is ignored: dropping the source ends the call.
            self.source = None;
            // Consumers still in line get no event: their `next` returns `None`.
            self.wake_all();
            self.readers.clear();
        }
    }

    fn wake_all(&mut self) {
        self.wake_all_but(Waker::noop());
    }

    fn wake_all_but(&mut self, reading: &Waker) {
        for (_, waker) in &self.readers {
            if !waker.will_wake(reading) {
                waker.wake_by_ref();
            }
        }
        self.finishing.retain(|waker| {
            let keep = waker.will_wake(reading);
            if !keep {
                waker.wake_by_ref();
            }
            keep
        });
    }
}
