// Validation: the schema's rules through protovalidate, then the JSON text rules. Every rule is
// pinned by the conformance corpus (tests/conformance/validate.yaml); these tests show the API.

package piproto_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"github.com/pi-proto/pi-proto/go/piproto"
	"google.golang.org/protobuf/proto"
)

func pathsAndRules(found []piproto.Violation) []string {
	out := make([]string, len(found))
	for i, violation := range found {
		out[i] = violation.FieldPath + " " + violation.RuleID
		if violation.Detail == "" {
			out[i] += " (no detail)"
		}
	}
	slices.Sort(out)
	return out
}

func requestWith(messages ...*aiv1.AgentMessage) *aiv1.StreamRequest {
	return &aiv1.StreamRequest{Context: &aiv1.AgentContext{Messages: messages}}
}

func assistantEntry(message *aiv1.AssistantMessage) *aiv1.AgentMessage {
	return &aiv1.AgentMessage{Role: &aiv1.AgentMessage_Assistant{Assistant: message}}
}

func TestAValidMessageHasNoViolations(t *testing.T) {
	bound(t)
	request := requestWith(userMessage("请读取 README"), assistantEntry(readmeTurn()))
	if found := piproto.Violations(request); len(found) != 0 {
		t.Fatalf("violations %v", found)
	}
	if err := piproto.Check(request); err != nil {
		t.Fatal(err)
	}
}

func TestCheckListsEverySchemaViolation(t *testing.T) {
	bound(t)
	broken := assistantMessage([]*aiv1.AssistantContent{rawToolCall("", "", "[1]"), {}}, stoppedBy(aiv1.StopReason_STOP_REASON_TOOL_USE))
	request := requestWith(assistantEntry(broken))
	request.Options = &aiv1.GenerationOptions{MaxTokens: proto.Int64(0)}
	err := piproto.Check(request)
	var invalid *piproto.ValidationError
	if !errors.As(err, &invalid) {
		t.Fatalf("error %v", err)
	}
	want := []string{
		"context.messages[0].assistant.content[0].tool_call.id string.min_len",
		"context.messages[0].assistant.content[0].tool_call.name string.min_len",
		"context.messages[0].assistant.content[1].block required",
		"options.max_tokens int64.gte",
	}
	if got := pathsAndRules(invalid.Violations); !slices.Equal(got, want) {
		t.Fatalf("violations %q", got)
	}
	if !strings.Contains(err.Error(), "options.max_tokens") {
		t.Fatalf("error %q", err)
	}
}

func TestTheJSONTextRulesRunOnceTheSchemaRulesHold(t *testing.T) {
	bound(t)
	message := assistantMessage([]*aiv1.AssistantContent{rawToolCall("call_1", "read", "[1]")}, stoppedBy(aiv1.StopReason_STOP_REASON_TOOL_USE))
	message.ExtraJson = `{"a": NaN}`
	got := pathsAndRules(piproto.Violations(assistantEntry(message)))
	want := []string{"assistant.content[0].tool_call.arguments_json json.object", "assistant.extra_json json.syntax"}
	if !slices.Equal(got, want) {
		t.Fatalf("violations %q", got)
	}
}

func TestJSONTextIsStrictAndBounded(t *testing.T) {
	bound(t)
	for text, rule := range map[string]string{
		`{"a":1,"a":2}`:                          "", // duplicate keys: the last one wins, as in JSON.parse
		`{"s":"\ud800"}`:                         "", // a lone surrogate, escaped
		`{"n":1e-999}`:                           "", // underflows to 0
		`{"n":-0.5E+3}`:                          "",
		" \t\n{}\r ":                             "",
		`{"a":[1,]}`:                             "json.syntax",
		`{"a":01}`:                               "json.syntax",
		"\ufeff{}":                               "json.syntax",
		`{} {}`:                                  "json.syntax",
		`{'a':1}`:                                "json.syntax",
		`{"a":Infinity}`:                         "json.syntax",
		"{\"a\":\"\t\"}":                         "json.syntax",
		`{"n":1e999}`:                            "json.number",
		`{"n":` + strings.Repeat("9", 400) + `}`: "json.number",
		strings.Repeat("[", 64) + strings.Repeat("]", 64):                           "json.object", // deep enough, but no object
		`{"a":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`:           "json.depth",
		strings.Repeat("[", 100_000) + `{"n":1e999}` + strings.Repeat("]", 100_000): "json.depth", // depth first
	} {
		call := rawToolCall("call_1", "read", text)
		found := piproto.Violations(assistantEntry(assistantMessage([]*aiv1.AssistantContent{call}, stoppedBy(aiv1.StopReason_STOP_REASON_TOOL_USE))))
		got := ""
		if len(found) == 1 {
			got = found[0].RuleID
		}
		if got != rule || len(found) > 1 {
			t.Errorf("%.40q: violations %v, want %q", text, found, rule)
		}
	}
}

func TestExtraJSONHoldsNoKeyItsMessageModels(t *testing.T) {
	bound(t)
	for _, case_ := range []struct{ text, rule, key string }{
		{`{"serviceTier":"priority"}`, "", ""},                // a key pi has that the schema does not model
		{`{ "diagnostics" : [ ] , "endTurn" : { } }`, "", ""}, // an empty [] or {} under a modelled key is kept
		{`{"serviceTier":1,"api":"other"}`, "json.extra", "api"},
		{`{"model":"","provider":"x"}`, "json.extra", "model"},    // the first one; "" is no empty container
		{`{"\u0061pi":1}`, "json.extra", "api"},                   // keys compare unescaped
		{`{"usage":[],"x":1,"usage":[1]}`, "json.extra", "usage"}, // a duplicate key: the last value counts
		{`{"usage":[1],"usage":{}}`, "", ""},
		{`{"api":NaN}`, "json.syntax", ""}, // the other rules come first
	} {
		message := assistantMessage(nil)
		message.ExtraJson = case_.text
		found := piproto.Violations(assistantEntry(message))
		got := ""
		if len(found) == 1 {
			got = found[0].RuleID
		}
		if got != case_.rule || len(found) > 1 {
			t.Errorf("%q: violations %v, want %q", case_.text, found, case_.rule)
			continue
		}
		if case_.rule == "json.extra" && (found[0].FieldPath != "assistant.extra_json" || !strings.Contains(found[0].Detail, "'"+case_.key+"'")) {
			t.Errorf("%q: violation %v, want one naming %q", case_.text, found[0], case_.key)
		}
	}
}
