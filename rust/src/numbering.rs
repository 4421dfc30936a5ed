//! The numbers of a wire stream's events (`ModelEvent.seq`), checked by its receiver (rule
//! `sequence`).

use crate::accumulator::StreamProtocolError;
use crate::v1::model_event::Event;
use crate::v1::{ModelEvent, StreamRule};

/// Which events of a numbered stream to apply: each once, none missing.
///
/// The first event says whether the stream is numbered. In a numbered one, an event numbered at
/// or below the last applied is a repeat, which a resumed server may send, and is dropped; one
/// further on than the next breaks rule `sequence`, except a merged delta when the stream asked
/// for `coalesce_deltas`. [`Numbering::last`] is what a client resumes after.
#[derive(Debug, Clone, Default)]
pub struct Numbering {
    coalesced: bool,
    last: u64,
    /// Unknown until the first event.
    numbered: Option<bool>,
}

impl Numbering {
    /// The numbering of a stream that asked for `coalesce_deltas` (`coalesced`) or not.
    pub fn new(coalesced: bool) -> Self {
        Self {
            coalesced,
            ..Self::default()
        }
    }

    /// The number of the last event applied; 0 before any, and in a stream not numbered.
    pub fn last(&self) -> u64 {
        self.last
    }

    /// Whether to apply `event`, the stream's event `index` (the count of events applied before
    /// it): `Ok(false)` for a repeat, to drop unapplied and uncounted; an error (rule
    /// `sequence`) for a gap, and for a numbered event in a stream not numbered or the reverse.
    pub fn admit(&mut self, event: &ModelEvent, index: usize) -> Result<bool, StreamProtocolError> {
        let seq = event.seq;
        let numbered = *self.numbered.get_or_insert(seq != 0);
        if !numbered {
            if seq != 0 {
                let detail = format!("event numbered {seq} in a stream not numbered");
                return Err(StreamProtocolError::new(
                    index,
                    StreamRule::Sequence,
                    detail,
                ));
            }
            return Ok(true);
        }
        if seq == 0 {
            let detail = "event without a number in a numbered stream";
            return Err(StreamProtocolError::new(
                index,
                StreamRule::Sequence,
                detail,
            ));
        }
        if seq <= self.last {
            return Ok(false);
        }
        let merged = self.coalesced
            && matches!(
                event.event,
                Some(Event::TextDelta(_) | Event::ThinkingDelta(_) | Event::ToolcallDelta(_))
            );
        if seq != self.last + 1 && !merged {
            let next = self.last + 1;
            let detail = format!("event {next} is missing: the next event is numbered {seq}");
            return Err(StreamProtocolError::new(
                index,
                StreamRule::Sequence,
                detail,
            ));
        }
        self.last = seq;
        Ok(true)
    }
}
