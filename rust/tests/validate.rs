//! Validation: the schema's protovalidate rules with their field paths, every violation at once,
//! and the JSON text rules on the fields that carry the `pi.ai.v1.json` option.

mod support;

use pi_proto::v1::agent_message::Role;
use pi_proto::v1::{
    AgentContext, AgentMessage, GenerationOptions, StopReason, StreamRequest, Tool,
    ToolResultMessage,
};
use pi_proto::{Violation, check, user_message, violations};
use support::{assistant_message, bounded, tool_call};

fn found(violations: &[Violation]) -> Vec<(&str, &str)> {
    violations
        .iter()
        .map(|violation| (violation.field_path.as_str(), violation.rule_id.as_str()))
        .collect()
}

fn tool_result(details_json: Option<&str>) -> AgentMessage {
    AgentMessage {
        role: Some(Role::ToolResult(ToolResultMessage {
            tool_call_id: "call_1".to_owned(),
            details_json: details_json.map(str::to_owned),
            ..Default::default()
        })),
    }
}

#[test]
fn a_well_formed_request_breaks_no_rule() {
    bounded(|| {
        let answer = assistant_message(
            vec![tool_call("call_1", "read", r#"{"path":"README.md"}"#)],
            StopReason::ToolUse,
        );
        let request = StreamRequest {
            context: Some(AgentContext {
                messages: vec![user_message("hi").into(), answer.into(), tool_result(None)],
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(violations(&request), []);
        assert_eq!(check(&request), Ok(()));
    });
}

#[test]
fn every_broken_rule_is_reported_with_its_path() {
    bounded(|| {
        let request = StreamRequest {
            context: Some(AgentContext {
                messages: vec![AgentMessage::default()],
                tools: vec![Tool {
                    parameters_json: Some("{}".to_owned()),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            options: Some(GenerationOptions {
                temperature: Some(3.0),
                max_tokens: Some(0),
                ..Default::default()
            }),
            ..Default::default()
        };
        let error = check(&request).expect_err("three rules are broken");
        let mut broken = found(&error.violations);
        broken.sort_unstable();
        assert_eq!(
            broken,
            [
                ("context.messages[0].role", "required"),
                ("context.tools[0].name", "string.min_len"),
                ("options.max_tokens", "int64.gte"),
                ("options.temperature", "double.gte_lte"),
            ]
        );
        assert!(error.to_string().contains("context.tools[0].name: "));
    });
}

#[test]
fn json_text_rules_apply_where_the_schema_marks_json() {
    bounded(|| {
        // Absent details are not JSON to check; present ones must be JSON, of any kind.
        assert_eq!(violations(&tool_result(None)), []);
        assert_eq!(violations(&tool_result(Some("[1, \"two\", null]"))), []);
        let empty = violations(&tool_result(Some("")));
        assert_eq!(found(&empty), [("tool_result.details_json", "json.syntax")]);
        let nan = violations(&tool_result(Some("NaN")));
        assert_eq!(found(&nan), [("tool_result.details_json", "json.syntax")]);

        // Tool arguments must be an object.
        let answer = assistant_message(vec![tool_call("c", "read", "[]")], StopReason::ToolUse);
        let message: AgentMessage = answer.into();
        assert_eq!(
            found(&violations(&message)),
            [(
                "assistant.content[0].tool_call.arguments_json",
                "json.object"
            )]
        );
    });
}

#[test]
fn extra_json_must_not_hold_a_key_its_message_models() {
    bounded(|| {
        let mut answer = assistant_message(vec![], StopReason::Stop);
        answer.extra_json = r#"{"serviceTier":"priority","api":"other"}"#.to_owned();
        let message: AgentMessage = answer.clone().into();
        assert_eq!(
            found(&violations(&message)),
            [("assistant.extra_json", "json.extra")]
        );
        // An empty list under a repeated field's key is kept: the field cannot tell it from none.
        answer.extra_json = r#"{"diagnostics":[],"serviceTier":"priority"}"#.to_owned();
        assert_eq!(violations(&AgentMessage::from(answer)), []);
    });
}
