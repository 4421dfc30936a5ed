//! The accumulator rebuilds the partial message in place, at a cost linear in the stream's length,
//! and names the event and the rule an event breaks, word for word as the Python runtime does.

mod support;

use std::sync::Arc;

use pi_proto::v1::model_event::Event;
use pi_proto::v1::{AssistantContent, ToolCall};
use pi_proto::v1::{
    AssistantMessage, DoneEvent, ErrorEvent, ModelEvent, StartEvent, StopReason, TextDeltaEvent,
    TextEndEvent, TextStartEvent, ThinkingContent, ToolCallDeltaEvent, ToolCallEndEvent,
    ToolCallStartEvent, assistant_content,
};
use pi_proto::{Accumulator, event_kind, events_of, text_of};
use support::{assistant_message, bounded, many_deltas, text, text_events, tool_call};

fn event(event: Event) -> ModelEvent {
    ModelEvent {
        event: Some(event),
        partial: None,
    }
}

fn start() -> ModelEvent {
    start_with(vec![])
}

/// A start event whose header already holds `content`: those blocks count as ended.
fn start_with(content: Vec<AssistantContent>) -> ModelEvent {
    event(Event::Start(StartEvent {
        header: Some(assistant_message(content, StopReason::Stop)),
    }))
}

fn text_start(content_index: u32) -> ModelEvent {
    event(Event::TextStart(TextStartEvent { content_index }))
}

fn text_delta(content_index: u32, delta: &str) -> ModelEvent {
    event(Event::TextDelta(TextDeltaEvent {
        content_index,
        delta: delta.to_owned(),
    }))
}

fn call_start(id: &str) -> ModelEvent {
    event(Event::ToolcallStart(ToolCallStartEvent {
        content_index: 0,
        id: id.to_owned(),
        name: "read".to_owned(),
    }))
}

fn call_end(id: &str) -> ModelEvent {
    event(Event::ToolcallEnd(ToolCallEndEvent {
        content_index: 0,
        tool_call: Some(ToolCall {
            id: id.to_owned(),
            name: "read".to_owned(),
            arguments_json: "{}".to_owned(),
            ..Default::default()
        }),
    }))
}

fn done(reason: StopReason, message: Option<AssistantMessage>) -> ModelEvent {
    event(Event::Done(DoneEvent {
        reason: reason as i32,
        message,
    }))
}

fn error(reason: StopReason, message: AssistantMessage) -> ModelEvent {
    event(Event::Error(ErrorEvent {
        reason: reason as i32,
        message: Some(message),
    }))
}

fn call_with_arguments(arguments_json: &str) -> AssistantMessage {
    assistant_message(
        vec![tool_call("c", "read", arguments_json)],
        StopReason::Stop,
    )
}

/// The error the last event raises after the others were applied.
fn refusal(events: Vec<ModelEvent>) -> String {
    let mut accumulator = Accumulator::default();
    let (last, fine) = events.split_last().expect("at least one event");
    for event in fine {
        accumulator
            .apply(event)
            .expect("the events before the last fit");
    }
    accumulator
        .apply(last)
        .expect_err("the last event breaks a rule")
        .to_string()
}

#[test]
fn each_rule_names_the_event_and_the_rule_as_python_does() {
    bounded(|| {
        let cases: Vec<(Vec<ModelEvent>, &str)> = vec![
            (
                vec![ModelEvent::default()],
                "event 0 breaks rule 'event-kind': no event kind is set",
            ),
            (
                vec![text_start(0)],
                "event 0 (text_start) breaks rule 'start-first': a stream opens with start",
            ),
            (
                vec![start(), start()],
                "event 1 (start) breaks rule 'start-once': start must be the first event",
            ),
            (
                vec![start(), text_start(1)],
                "event 1 (text_start) breaks rule 'next-index': content_index 1 must open the next block, 0",
            ),
            (
                vec![start(), text_delta(0, "x")],
                "event 1 (text_delta) breaks rule 'block-exists': content_index 0 refers to no block (the message has 0)",
            ),
            (
                vec![
                    start(),
                    text_start(0),
                    event(Event::ToolcallDelta(ToolCallDeltaEvent {
                        content_index: 0,
                        delta: "{".to_owned(),
                    })),
                ],
                "event 2 (toolcall_delta) breaks rule 'block-kind': block 0 is not a tool call block",
            ),
            (
                vec![
                    start(),
                    text_start(0),
                    event(Event::TextEnd(TextEndEvent {
                        content_index: 0,
                        text_signature: None,
                    })),
                    text_delta(0, "late"),
                ],
                "event 3 (text_delta) breaks rule 'block-open': block 0 has already ended",
            ),
            (
                vec![start_with(vec![text("kept")]), text_delta(0, "x")],
                "event 1 (text_delta) breaks rule 'block-open': block 0 has already ended",
            ),
            (
                vec![start_with(vec![text("kept")]), text_start(0)],
                "event 1 (text_start) breaks rule 'next-index': content_index 0 must open the next block, 1",
            ),
            (
                vec![start(), call_start("call_1"), call_end("call_2")],
                "event 2 (toolcall_end) breaks rule 'tool-call-id': tool call 0 started as 'call_1' but ends as 'call_2'",
            ),
            (
                vec![
                    start(),
                    call_start("it's \"x\"\n\u{200b}\u{7f}"),
                    call_end("é😀\u{a0}"),
                ],
                "event 2 (toolcall_end) breaks rule 'tool-call-id': tool call 0 started as 'it\\'s \"x\"\\n\\u200b\\x7f' but ends as 'é😀\\xa0'",
            ),
            (
                vec![start(), done(StopReason::Stop, None)],
                "event 1 (done) breaks rule 'terminal-message': carries no message",
            ),
            (
                vec![
                    start(),
                    done(
                        StopReason::Error,
                        Some(assistant_message(vec![], StopReason::Error)),
                    ),
                ],
                "event 1 (done) breaks rule 'terminal-reason': reason ERROR with a message stopped by ERROR; done takes STOP, LENGTH, TOOL_USE, equal in both",
            ),
            (
                vec![
                    start(),
                    done(
                        StopReason::Length,
                        Some(assistant_message(vec![], StopReason::Stop)),
                    ),
                ],
                "event 1 (done) breaks rule 'terminal-reason': reason LENGTH with a message stopped by STOP; done takes STOP, LENGTH, TOOL_USE, equal in both",
            ),
            (
                vec![error(
                    StopReason::Aborted,
                    assistant_message(vec![], StopReason::Error),
                )],
                "event 0 (error) breaks rule 'terminal-reason': reason ABORTED with a message stopped by ERROR; error takes ERROR, ABORTED, equal in both",
            ),
            (
                vec![error(StopReason::Unspecified, AssistantMessage::default())],
                "event 0 (error) breaks rule 'terminal-reason': reason UNSPECIFIED with a message stopped by UNSPECIFIED; error takes ERROR, ABORTED, equal in both",
            ),
            (
                vec![
                    start(),
                    text_start(0),
                    done(StopReason::Stop, Some(call_with_arguments("{}"))),
                ],
                "event 2 (done) breaks rule 'terminal-agrees': the message has blocks ['tool_call'], the stream built ['text']",
            ),
            (
                vec![done(StopReason::Stop, Some(call_with_arguments("[1]")))],
                "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: must be a JSON object, got list",
            ),
            (
                vec![done(StopReason::Stop, Some(call_with_arguments("\"x\"")))],
                "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: must be a JSON object, got string",
            ),
            (
                vec![done(StopReason::Stop, Some(call_with_arguments("null")))],
                "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: must be a JSON object, got null",
            ),
            (
                vec![done(StopReason::Stop, Some(call_with_arguments("true")))],
                "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: must be a JSON object, got boolean",
            ),
            (
                vec![done(StopReason::Stop, Some(call_with_arguments("1.5")))],
                "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: must be a JSON object, got number",
            ),
            (
                vec![done(
                    StopReason::Stop,
                    Some(call_with_arguments(&format!(
                        "{}1{}",
                        "{\"a\":".repeat(70),
                        "}".repeat(70)
                    ))),
                )],
                "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: JSON nested deeper than the limit of 64",
            ),
            (
                vec![done(
                    StopReason::Stop,
                    Some(call_with_arguments(&format!(
                        "{}1{}",
                        "{\"a\":".repeat(200),
                        "}".repeat(200)
                    ))),
                )],
                "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: JSON nested deeper than the limit of 64",
            ),
            (
                vec![done(
                    StopReason::Stop,
                    Some(assistant_message(
                        vec![tool_call("", "read", "{}")],
                        StopReason::Stop,
                    )),
                )],
                "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.id: must not be empty",
            ),
            (
                vec![done(
                    StopReason::Stop,
                    Some(assistant_message(
                        vec![AssistantContent { block: None }],
                        StopReason::Stop,
                    )),
                )],
                "event 0 (done) breaks rule 'message-valid': message.content[0].block: exactly one of text, thinking, tool_call must be set, found none",
            ),
        ];
        for (events, expected) in cases {
            assert_eq!(refusal(events), expected);
        }
    });
}

#[test]
fn invalid_json_is_named_with_the_field() {
    bounded(|| {
        let refused = refusal(vec![done(StopReason::Stop, Some(call_with_arguments("{")))]);
        // The parser's own words follow; they differ between runtimes.
        let prefix = "event 0 (done) breaks rule 'message-valid': message.content[0].tool_call.arguments_json: not valid JSON: ";
        assert!(refused.starts_with(prefix), "{refused}");
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
        assert_eq!(steps["start"].provider, "scripted");
        assert_eq!(text_of(&*steps["text_delta"]), preamble);
        let Some(assistant_content::Block::ToolCall(streaming)) =
            &steps["toolcall_delta"].content[1].block
        else {
            panic!("block 1 is a tool call");
        };
        assert_eq!(
            (streaming.id.as_str(), streaming.name.as_str()),
            ("call_1", "read")
        );
        assert_eq!(streaming.arguments_json, "{}");
        assert_eq!(
            streaming.raw_arguments.as_deref(),
            Some(r#"{"path":"README.md"}"#)
        );
        let Some(assistant_content::Block::ToolCall(finished)) =
            &steps["toolcall_end"].content[1].block
        else {
            panic!("block 1 is a tool call");
        };
        assert_eq!(finished.arguments_json, r#"{"path":"README.md"}"#);
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
        let mut message = assistant_message(
            vec![
                AssistantContent {
                    block: Some(assistant_content::Block::Thinking(thinking)),
                },
                text("😀 non-BMP and ascii"),
                tool_call("call_1", "read", r#"{"path":"README.md","n":1}"#),
            ],
            StopReason::ToolUse,
        );
        message.timestamp = 42;
        for size in [1, 3, 1000] {
            let mut accumulator = Accumulator::default();
            for event in events_of(&message, size) {
                if !matches!(event.event, Some(Event::Done(_))) {
                    accumulator.apply(&event).expect("a valid stream");
                }
            }
            let rebuilt = accumulator.partial();
            // Tool calls are replaced by the one their end event carries, raw_arguments and all.
            assert_eq!(rebuilt.content, message.content);
            assert_eq!(rebuilt.timestamp, 42);
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
            .apply(&error(StopReason::Error, failed.clone()))
            .expect("a valid stream");
        assert_eq!(accumulator.partial(), &failed);
    });
}

#[test]
fn a_delta_is_appended_in_place_unless_a_snapshot_is_held() {
    bounded(|| {
        let mut accumulator = Accumulator::default();
        for event in [start(), text_start(0), text_delta(0, "先")] {
            accumulator.apply(&event).expect("a valid stream");
        }
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
        let mut events = text_events(&deltas);
        let mut accumulator = Accumulator::default();
        for event in events.by_ref().take(2 + deltas.len()) {
            accumulator.apply(&event).expect("a valid stream");
        }
        assert_eq!(text_of(accumulator.partial()), deltas.concat());

        for event in events {
            accumulator.apply(&event).expect("a valid stream");
        }
        assert_eq!(text_of(accumulator.partial()), deltas.concat());
        assert_eq!(accumulator.count(), deltas.len() + 4);
    });
}
