//! The numbers of a wire stream's events (rule `sequence`): a repeat is dropped, a gap refused
//! unless it is a merged delta of a stream that asked for coalescing, and a stream is numbered
//! throughout or not at all.

mod support;

use pi_proto::Numbering;
use pi_proto::v1::model_event::Event;
use pi_proto::v1::{ModelEvent, StopReason, StreamRule, TextEndEvent};
use pi_proto::{StreamProtocolError, events_of};
use support::{assistant_message, bounded, event, text, text_delta};

fn numbered(mut event: ModelEvent, seq: u64) -> ModelEvent {
    event.seq = seq;
    event
}

/// The turn "Hello" in deltas of 1 character, numbered from 1: start, text_start, 5 deltas,
/// text_end, done.
fn turn() -> Vec<ModelEvent> {
    let message = assistant_message(vec![text("Hello")], StopReason::Stop);
    let events = events_of(&message, 1).into_iter().enumerate();
    events
        .map(|(at, event)| numbered(event, at as u64 + 1))
        .collect()
}

/// Admit the events in order, each at the index of the count admitted before it: whether each
/// was admitted.
fn admit_all(numbering: &mut Numbering, events: &[ModelEvent]) -> Vec<bool> {
    let mut applied = 0;
    let mut verdicts = Vec::new();
    for event in events {
        let admitted = numbering.admit(event, applied).expect("no gap");
        applied += usize::from(admitted);
        verdicts.push(admitted);
    }
    verdicts
}

fn sequence_broken(error: StreamProtocolError, index: usize) {
    assert_eq!(
        (error.event_index, error.rule),
        (index, StreamRule::Sequence)
    );
    assert_eq!(error.rule_id, "sequence");
}

#[test]
fn every_event_of_a_numbered_stream_is_admitted_once_in_order() {
    bounded(|| {
        let events = turn();
        let mut numbering = Numbering::default();
        assert_eq!(admit_all(&mut numbering, &events), vec![true; events.len()]);
        assert_eq!(numbering.last(), events.len() as u64);
    });
}

#[test]
fn a_repeat_is_dropped() {
    bounded(|| {
        let events = turn();
        // A resumed server sends events 2 and 3 again.
        let stream = [&events[..4], &events[1..3], &events[4..]].concat();
        let mut numbering = Numbering::default();
        let verdicts = admit_all(&mut numbering, &stream);
        assert_eq!(verdicts.iter().filter(|admitted| !**admitted).count(), 2);
        assert_eq!(&verdicts[4..6], [false, false]);
        assert_eq!(numbering.last(), events.len() as u64);
    });
}

#[test]
fn a_gap_breaks_rule_sequence_at_the_index_the_event_would_have() {
    bounded(|| {
        let events = turn();
        let mut numbering = Numbering::default();
        admit_all(&mut numbering, &events[..3]);
        let broken = numbering
            .admit(&events[4], 3)
            .expect_err("event 4 is missing");
        sequence_broken(broken, 3);
        assert_eq!(numbering.last(), 3);
    });
}

#[test]
fn a_merged_delta_may_skip_numbers_when_the_stream_asked_for_coalescing() {
    bounded(|| {
        let events = turn();
        // Deltas 3 to 5 merged into one, numbered 5 (the last it merges).
        let merged = numbered(text_delta(0, "Hel"), 5);
        let stream = [&events[..2], &[merged], &events[5..]].concat();
        let mut coalesced = Numbering::new(true);
        assert_eq!(admit_all(&mut coalesced, &stream), vec![true; stream.len()]);

        let mut plain = Numbering::new(false);
        admit_all(&mut plain, &stream[..2]);
        sequence_broken(plain.admit(&stream[2], 2).expect_err("a gap"), 2);
    });
}

#[test]
fn only_a_delta_may_skip_numbers_when_coalescing() {
    bounded(|| {
        let events = turn();
        let mut numbering = Numbering::new(true);
        admit_all(&mut numbering, &events[..3]);
        let end = numbered(event(Event::TextEnd(TextEndEvent::default())), 8);
        sequence_broken(numbering.admit(&end, 3).expect_err("not a delta"), 3);
    });
}

#[test]
fn a_stream_is_numbered_throughout_or_not_at_all() {
    bounded(|| {
        let events = turn();
        let mut numbering = Numbering::default();
        admit_all(&mut numbering, &events[..2]);
        let unnumbered = numbered(events[2].clone(), 0);
        sequence_broken(numbering.admit(&unnumbered, 2).expect_err("no number"), 2);

        let mut numbering = Numbering::default();
        let plain: Vec<_> = events.iter().map(|e| numbered(e.clone(), 0)).collect();
        assert_eq!(admit_all(&mut numbering, &plain[..2]), [true, true]);
        assert_eq!(numbering.last(), 0);
        sequence_broken(numbering.admit(&events[2], 2).expect_err("a number"), 2);
    });
}
