//! The accumulator rebuilds the partial message in place, at a cost linear in the stream's
//! length, with a streaming tool call's arguments completed and the sender's usage, and refuses
//! an event that breaks a rule with a structured error.

mod support;

use std::sync::Arc;

use pi_proto::v1::model_event::Event;
use pi_proto::v1::{
    AssistantContent, AssistantMessage, ModelEvent, StartEvent, StopReason, StreamRule,
    TextEndEvent, TextStartEvent, ThinkingContent, ThinkingEndEvent, ThinkingStartEvent, ToolCall,
    ToolCallDeltaEvent, ToolCallEndEvent, ToolCallStartEvent, Usage, assistant_content,
};
use pi_proto::{
    Accumulator, StreamProtocolError, content_sha256, event_kind, events_of, stream_rule_id,
    text_of,
};
use support::{
    assistant_message, bounded, done, error, event, many_deltas, text, text_delta, tool_call,
};

/// The error the last event gets after the others were applied.
fn refusal(
    accumulator: &mut Accumulator,
    events: &[pi_proto::v1::ModelEvent],
) -> StreamProtocolError {
    let (last, fine) = events.split_last().expect("at least one event");
    for event in fine {
        accumulator
            .apply(event)
            .expect("the events before the last fit");
    }
    accumulator
        .apply(last)
        .expect_err("the last event breaks a rule")
}

fn opening() -> Vec<pi_proto::v1::ModelEvent> {
    let message = assistant_message(vec![text("")], StopReason::Stop);
    events_of(&message, 1).into_iter().take(2).collect() // start, text_start
}

#[test]
fn a_broken_rule_names_the_event_and_the_rule_and_changes_nothing() {
    bounded(|| {
        let mut accumulator = Accumulator::default();
        let mut events = opening();
        events.push(text_delta(3, "x"));
        let broken = refusal(&mut accumulator, &events);

        assert_eq!((broken.event_index, broken.rule_id), (2, "block-exists"));
        assert_eq!(broken.rule, StreamRule::BlockExists);
        assert!(broken.violations.is_empty());
        assert!(
            broken
                .to_string()
                .starts_with("event 2 breaks rule 'block-exists': ")
        );
        assert_eq!(accumulator.partial().content.len(), 1);
        assert_eq!(accumulator.count(), 3);
    });
}

#[test]
fn an_invalid_terminal_event_carries_its_violations_with_paths_from_the_event() {
    bounded(|| {
        let message = assistant_message(vec![tool_call("", "read", "[1]")], StopReason::ToolUse);
        let broken = Accumulator::default()
            .apply(&done(message))
            .expect_err("no id");

        assert_eq!((broken.event_index, broken.rule_id), (0, "terminal-valid"));
        let found: Vec<_> = broken
            .violations
            .iter()
            .map(|violation| (violation.field_path.as_str(), violation.rule_id.as_str()))
            .collect();
        // The JSON text rules wait until the schema's rules hold.
        assert_eq!(
            found,
            [("done.message.content[0].tool_call.id", "string.min_len")]
        );
    });
}

#[test]
fn terminal_agrees_is_checked_after_terminal_valid() {
    bounded(|| {
        let mut accumulator = Accumulator::default();
        let mut events = opening();
        events.push(done(assistant_message(vec![], StopReason::Stop)));
        let broken = refusal(&mut accumulator, &events);
        assert_eq!((broken.event_index, broken.rule_id), (2, "terminal-agrees"));
    });
}

/// A stream of `text` in deltas of 2 characters whose terminal event carries `digest`.
fn digested(text_streamed: &str, digest: Vec<u8>) -> Vec<ModelEvent> {
    let message = assistant_message(vec![text(text_streamed)], StopReason::Stop);
    let mut events = events_of(&message, 2);
    if let Some(Event::Done(terminal)) = &mut events.last_mut().expect("a terminal").event {
        terminal.content_sha256 = digest;
    }
    events
}

#[test]
fn a_terminal_digest_of_the_content_built_passes() {
    bounded(|| {
        let digest = content_sha256(&[text("Hello, world")]).to_vec();
        let mut accumulator = Accumulator::default();
        for event in digested("Hello, world", digest) {
            accumulator.apply(&event).expect("the digest agrees");
        }
        assert_eq!(text_of(accumulator.partial()), "Hello, world");
        assert_eq!(accumulator.partial().stop_reason, StopReason::Stop as i32);
    });
}

#[test]
fn a_terminal_digest_of_other_content_breaks_rule_terminal_digest_and_changes_nothing() {
    bounded(|| {
        let digest = content_sha256(&[text("Hello, world!")]).to_vec();
        let events = digested("Hello, world", digest);
        let mut accumulator = Accumulator::default();
        let broken = refusal(&mut accumulator, &events);

        let last = events.len() - 1;
        assert_eq!(
            (broken.event_index, broken.rule),
            (last, StreamRule::TerminalDigest)
        );
        assert_eq!(broken.rule_id, "terminal-digest");
        // The partial is still the one the events built, unfinished.
        assert_eq!(text_of(accumulator.partial()), "Hello, world");
        assert_eq!(accumulator.partial().stop_reason, 0);
    });
}

#[test]
fn a_digest_that_is_not_32_bytes_breaks_terminal_valid_first() {
    bounded(|| {
        let mut accumulator = Accumulator::default();
        let broken = refusal(&mut accumulator, &digested("Hi", vec![1, 2, 3]));
        assert_eq!(broken.rule, StreamRule::TerminalValid);
        let paths: Vec<_> = broken
            .violations
            .iter()
            .map(|v| v.field_path.as_str())
            .collect();
        assert_eq!(paths, ["done.content_sha256"]);
    });
}

#[test]
fn deltas_beyond_the_limit_are_refused_in_bytes_of_utf8() {
    bounded(|| {
        let mut accumulator = Accumulator::with_max_message_bytes(4);
        for event in opening() {
            accumulator.apply(&event).expect("a valid stream");
        }
        accumulator
            .apply(&text_delta(0, "éé"))
            .expect("exactly 4 bytes");
        let broken = accumulator.apply(&text_delta(0, "x")).expect_err("5 bytes");
        assert_eq!((broken.event_index, broken.rule_id), (3, "size-limit"));
        assert_eq!(text_of(accumulator.partial()), "éé");
        assert_eq!(accumulator.received_bytes(), 4);
    });
}

#[test]
fn the_partial_at_each_step_of_the_readme_turn() {
    bounded(|| {
        let preamble = "我先读取项目说明。";
        let turn = assistant_message(
            vec![
                text(preamble),
                tool_call("call_1", "read", r#"{"path":"README.md"}"#),
            ],
            StopReason::ToolUse,
        );
        let mut accumulator = Accumulator::default();
        let mut steps = std::collections::HashMap::new();
        for event in events_of(&turn, 100) {
            accumulator.apply(&event).expect("a valid stream");
            // Each snapshot keeps the message after its event while the partial goes on.
            steps.insert(event_kind(&event), accumulator.snapshot());
        }

        assert!(steps["start"].content.is_empty());
        assert_eq!(text_of(&*steps["text_delta"]), preamble);
        let Some(assistant_content::Block::ToolCall(streaming)) =
            &steps["toolcall_delta"].content[1].block
        else {
            panic!("block 1 is a tool call");
        };
        assert_eq!(
            streaming.arguments_json.as_deref(),
            Some(r#"{"path":"README.md"}"#)
        );
        assert_eq!(
            streaming.raw_arguments.as_deref(),
            Some(r#"{"path":"README.md"}"#)
        );
        assert_eq!(*steps["done"], turn);
        assert_eq!(accumulator.partial(), &turn);
    });
}

#[test]
fn rebuilding_a_message_from_its_events_gives_its_content_back() {
    bounded(|| {
        let thinking = ThinkingContent {
            thinking: "思考 step by step".to_owned(),
            thinking_signature: Some("sig".to_owned()),
            redacted: Some(false),
            ..Default::default()
        };
        let message = assistant_message(
            vec![
                AssistantContent {
                    block: Some(assistant_content::Block::Thinking(thinking)),
                },
                text("😀 non-BMP and ascii"),
                tool_call("call_1", "read", r#"{"path":"README.md","n":1}"#),
            ],
            StopReason::ToolUse,
        );
        for size in [1, 3, 1000] {
            let mut accumulator = Accumulator::default();
            for event in events_of(&message, size) {
                if !matches!(event.event, Some(Event::Done(_))) {
                    accumulator.apply(&event).expect("a valid stream");
                }
            }
            assert_eq!(accumulator.partial().content, message.content);
        }
    });
}

#[test]
fn a_terminal_event_alone_is_a_valid_stream() {
    bounded(|| {
        let mut failed = assistant_message(vec![], StopReason::Error);
        failed.error_message = Some("socket reset".to_owned());
        let mut accumulator = Accumulator::default();
        accumulator
            .apply(&error(failed.clone()))
            .expect("a valid stream");
        assert_eq!(accumulator.partial(), &failed);
        let late_start = event(Event::TextStart(TextStartEvent { content_index: 0 }));
        assert_eq!(
            accumulator.apply(&late_start).unwrap_err().rule_id,
            "start-first"
        );
    });
}

#[test]
fn a_delta_is_appended_in_place_unless_a_snapshot_is_held() {
    bounded(|| {
        let mut accumulator = Accumulator::default();
        for event in opening() {
            accumulator.apply(&event).expect("a valid stream");
        }
        accumulator
            .apply(&text_delta(0, "先"))
            .expect("a valid stream");
        let before = Arc::as_ptr(&accumulator.snapshot()); // dropped at once
        accumulator
            .apply(&text_delta(0, "读取"))
            .expect("a valid stream");
        assert_eq!(Arc::as_ptr(&accumulator.snapshot()), before);

        let held = accumulator.snapshot();
        accumulator
            .apply(&text_delta(0, "再回答"))
            .expect("a valid stream");
        assert_eq!(text_of(&*held), "先读取");
        assert_eq!(text_of(accumulator.partial()), "先读取再回答");
    });
}

#[test]
fn a_stream_of_200000_deltas_costs_linear_time() {
    // Copying the whole partial per event would take minutes here, past the test's time limit.
    bounded(|| {
        let deltas = many_deltas(200_000);
        let mut accumulator = Accumulator::default();
        for event in opening() {
            accumulator.apply(&event).expect("a valid stream");
        }
        for delta in &deltas {
            accumulator
                .apply(&text_delta(0, delta))
                .expect("a valid stream");
        }
        assert_eq!(text_of(accumulator.partial()), deltas.concat());
        assert_eq!(accumulator.count(), deltas.len() + 2);
    });
}

/// The tool call of an accumulator whose stream is `start, toolcall_start` and then deltas.
fn streaming_call(accumulator: &Accumulator) -> ToolCall {
    match &accumulator.partial().content[0].block {
        Some(assistant_content::Block::ToolCall(call)) => call.clone(),
        other => panic!("not a tool call: {other:?}"),
    }
}

fn tool_call_opening() -> Accumulator {
    let mut accumulator = Accumulator::default();
    let start = event(Event::Start(StartEvent {
        header: Some(AssistantMessage::default()),
        ..Default::default()
    }));
    let call = event(Event::ToolcallStart(ToolCallStartEvent {
        content_index: 0,
        id: "call_1".to_owned(),
        name: "write".to_owned(),
    }));
    for event in [start, call] {
        accumulator.apply(&event).expect("a valid stream");
    }
    accumulator
}

fn argument_delta(delta: &str) -> ModelEvent {
    event(Event::ToolcallDelta(ToolCallDeltaEvent {
        content_index: 0,
        delta: delta.to_owned(),
    }))
}

#[test]
fn a_streaming_tool_call_shows_its_arguments_so_far_completed_into_an_object() {
    bounded(|| {
        let mut accumulator = tool_call_opening();
        let steps = [
            (r#"{"path": "src/"#, r#"{"path": "src/"}"#),
            (
                r#"main.rs", "lines": [1, 2"#,
                r#"{"path": "src/main.rs", "lines": [1, 2]}"#,
            ),
            (r#"0.5e"#, r#"{"path": "src/main.rs", "lines": [1, 20.5]}"#),
            (
                r#"1], "dry": tr"#,
                r#"{"path": "src/main.rs", "lines": [1, 20.5e1], "dry": true}"#,
            ),
            (
                r#"ue, "no"#,
                r#"{"path": "src/main.rs", "lines": [1, 20.5e1], "dry": true}"#,
            ),
            (
                r#"": null} "#,
                r#"{"path": "src/main.rs", "lines": [1, 20.5e1], "dry": true, "no": null} "#,
            ),
        ];
        let mut raw = String::new();
        for (delta, completed) in steps {
            accumulator
                .apply(&argument_delta(delta))
                .expect("a valid stream");
            raw.push_str(delta);
            let call = streaming_call(&accumulator);
            assert_eq!(call.raw_arguments.as_deref(), Some(raw.as_str()));
            assert_eq!(
                call.arguments_json.as_deref(),
                Some(completed),
                "after {raw:?}"
            );
        }
        // Text that cannot be an object's shows an empty one, whatever follows.
        for delta in ["x", "}"] {
            accumulator
                .apply(&argument_delta(delta))
                .expect("a valid stream");
            assert_eq!(
                streaming_call(&accumulator).arguments_json.as_deref(),
                Some("{}")
            );
        }
    });
}

// How long it takes is for `make bench`: reading the whole text again at each delta would read
// 1 GB here.
#[test]
fn a_200_kb_argument_in_20_character_deltas_completes_to_the_whole_text() {
    bounded(|| {
        let lines: Vec<String> = (0..4500)
            .map(|index| format!(r#"{{"line": {index}, "text": "行 {index:05} \"quoted\""}}"#))
            .collect();
        let text = format!(r#"{{"path": "big.json", "rows": [{}]}}"#, lines.join(", "));
        let chars: Vec<char> = text.chars().collect();
        assert!(text.len() > 200_000, "{} bytes", text.len());
        let mut accumulator = tool_call_opening();
        for piece in chars.chunks(20) {
            let delta: String = piece.iter().collect();
            accumulator
                .apply(&argument_delta(&delta))
                .expect("a valid stream");
        }
        assert_eq!(streaming_call(&accumulator).arguments_json, Some(text));
    });
}

#[test]
fn usage_carried_by_an_event_becomes_the_partials_after_the_event() {
    bounded(|| {
        let mut accumulator = Accumulator::default();
        let mut events = opening();
        let usage = |output| Usage {
            input: Some(12),
            output: Some(output),
            cache_read: Some(0),
            cache_write: Some(0),
            total_tokens: Some(12 + output),
            ..Default::default()
        };
        events[0].usage = Some(usage(0));
        for event in &events {
            accumulator.apply(event).expect("a valid stream");
        }
        assert_eq!(accumulator.partial().usage, Some(usage(0)));

        let mut delta = text_delta(0, "先");
        delta.usage = Some(usage(3));
        accumulator.apply(&delta).expect("a valid stream");
        assert_eq!(accumulator.partial().usage, Some(usage(3)));
        // An event without usage leaves it as it is.
        accumulator
            .apply(&text_delta(0, "读"))
            .expect("a valid stream");
        assert_eq!(accumulator.partial().usage, Some(usage(3)));
        // A refused event changes nothing, its usage included.
        let mut refused = text_delta(7, "x");
        refused.usage = Some(usage(9));
        accumulator.apply(&refused).expect_err("no block 7");
        assert_eq!(accumulator.partial().usage, Some(usage(3)));

        // A terminal event's message carries its own usage.
        let mut finished = assistant_message(vec![text("先读")], StopReason::Stop);
        finished.usage = Some(usage(4));
        let mut last = done(finished.clone());
        last.usage = Some(usage(99));
        accumulator.apply(&last).expect("a valid stream");
        assert_eq!(accumulator.partial(), &finished);
    });
}

/// Apply `events` to an accumulator with `limit`, then `last`, which must break `size-limit` and
/// change nothing; the index of the refused event.
fn refused_for_size(limit: u64, events: &[ModelEvent], last: &ModelEvent) -> usize {
    let mut accumulator = Accumulator::with_max_message_bytes(limit);
    for event in events {
        accumulator
            .apply(event)
            .expect("the events before the last fit");
    }
    let (before, partial) = (accumulator.received_bytes(), accumulator.partial().clone());
    let broken = accumulator
        .apply(last)
        .expect_err("the last event breaks size-limit");
    assert_eq!(broken.rule_id, "size-limit");
    assert_eq!(accumulator.received_bytes(), before);
    assert_eq!(accumulator.partial(), &partial);
    broken.event_index
}

/// The bytes counted once `events` are applied to an accumulator with `limit`.
fn counted(limit: u64, events: &[ModelEvent]) -> u64 {
    let mut accumulator = Accumulator::with_max_message_bytes(limit);
    for event in events {
        accumulator.apply(event).expect("the events fit");
    }
    accumulator.received_bytes()
}

fn start() -> ModelEvent {
    event(Event::Start(StartEvent {
        header: Some(AssistantMessage::default()),
        ..Default::default()
    }))
}

fn call_start(content_index: u32, id: &str, name: &str) -> ModelEvent {
    event(Event::ToolcallStart(ToolCallStartEvent {
        content_index,
        id: id.to_owned(),
        name: name.to_owned(),
    }))
}

fn call_end(content_index: u32, call: ToolCall) -> ModelEvent {
    event(Event::ToolcallEnd(ToolCallEndEvent {
        content_index,
        tool_call: Some(call),
    }))
}

#[test]
fn a_tool_calls_id_and_name_and_the_signatures_of_end_events_count_toward_the_limit() {
    bounded(|| {
        let opened = call_start(0, "call_é", "write"); // 7 + 5 bytes
        assert_eq!(counted(12, &[start(), opened.clone()]), 12);
        assert_eq!(refused_for_size(11, &[start()], &opened), 1);

        let mut signed = opening();
        signed.push(text_delta(0, "hi"));
        let end = event(Event::TextEnd(TextEndEvent {
            content_index: 0,
            text_signature: Some("sig-é".to_owned()), // 6 bytes
        }));
        assert_eq!(counted(8, &[signed.clone(), vec![end.clone()]].concat()), 8);
        assert_eq!(refused_for_size(7, &signed, &end), 3);
        let thinking = event(Event::ThinkingStart(ThinkingStartEvent {
            content_index: 0,
        }));
        let thought = event(Event::ThinkingEnd(ThinkingEndEvent {
            content_index: 0,
            thinking_signature: Some("abcdef".to_owned()),
            redacted: None,
        }));
        assert_eq!(refused_for_size(5, &[start(), thinking], &thought), 2);

        // Endless calls with 8 KiB ids and no arguments: each holds 8,195 bytes once ended (its id
        // and name, then the ended call's "{}"), so the eighth start passes 64 KiB.
        let long = "x".repeat(8192);
        let mut events = vec![start()];
        for index in 0..7 {
            let ended = ToolCall {
                id: long.clone(),
                name: "n".to_owned(),
                arguments_json: Some("{}".to_owned()),
                ..Default::default()
            };
            events.extend([call_start(index, &long, "n"), call_end(index, ended)]);
        }
        assert_eq!(counted(7 * 8195, &events), 7 * 8195);
        assert_eq!(
            refused_for_size(64 * 1024, &events, &call_start(7, &long, "n")),
            15
        );
    });
}

#[test]
fn an_ended_tool_call_counts_what_it_holds_beyond_the_streamed_one() {
    bounded(|| {
        let opened = [
            start(),
            call_start(0, "c", "n"),
            argument_delta(r#"{"a":1}"#),
        ];
        let same = ToolCall {
            id: "c".to_owned(),
            name: "n".to_owned(),
            arguments_json: Some(r#"{"a":1}"#.to_owned()),
            ..Default::default()
        };
        // The call as it streamed (1 + 1 + 7 bytes) is not counted twice.
        assert_eq!(
            counted(
                9,
                &[opened.to_vec(), vec![call_end(0, same.clone())]].concat()
            ),
            9
        );
        // Beyond it: its raw arguments (7) and a signature (3).
        let more = ToolCall {
            raw_arguments: Some(r#"{"a":1}"#.to_owned()),
            thought_signature: Some("sig".to_owned()),
            ..same
        };
        let end = call_end(0, more);
        assert_eq!(
            counted(19, &[opened.to_vec(), vec![end.clone()]].concat()),
            19
        );
        assert_eq!(refused_for_size(18, &opened, &end), 3);
    });
}

#[test]
fn a_rules_text_id_is_its_enum_name_in_lower_case_with_hyphens() {
    let ids = [
        (StreamRule::Unspecified, "unspecified"),
        (StreamRule::EventKind, "event-kind"),
        (StreamRule::StartFirst, "start-first"),
        (StreamRule::StartOnce, "start-once"),
        (StreamRule::NextIndex, "next-index"),
        (StreamRule::BlockExists, "block-exists"),
        (StreamRule::BlockKind, "block-kind"),
        (StreamRule::BlockOpen, "block-open"),
        (StreamRule::ToolCallId, "tool-call-id"),
        (StreamRule::TerminalValid, "terminal-valid"),
        (StreamRule::TerminalAgrees, "terminal-agrees"),
        (StreamRule::SizeLimit, "size-limit"),
        (StreamRule::TerminalMissing, "terminal-missing"),
        (StreamRule::EventDecode, "event-decode"),
    ];
    for (rule, id) in ids {
        assert_eq!(stream_rule_id(rule), id, "{rule:?}");
        let error = StreamProtocolError::new(4, rule, "detail");
        assert_eq!((error.rule, error.rule_id), (rule, id));
    }
    assert_eq!(
        StreamProtocolError::new(4, StreamRule::BlockOpen, "it ended").to_string(),
        "event 4 breaks rule 'block-open': it ended"
    );
}
