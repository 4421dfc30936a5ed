package piproto

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"buf.build/go/protovalidate"
	"google.golang.org/protobuf/proto"
)

// Violation is one broken rule of a message: where, which rule, and what is wrong.
type Violation struct {
	// FieldPath is the path of the offending field from the checked message: field names joined
	// by dots, list indexes in brackets, e.g. "context.messages[2].assistant.content[1].tool_call.id".
	// A oneof that must have a member is named by the oneof; a rule of a whole message by that
	// message's path ("" for the checked message itself).
	FieldPath string
	// RuleID names the rule: a protovalidate standard rule ("string.min_len", "required"), a CEL
	// rule of the schema ("done.reason_matches_message") or a JSON text rule ("json.syntax").
	RuleID string
	// Detail says what is wrong, in words.
	Detail string
}

func (v Violation) String() string {
	where := v.FieldPath
	if where == "" {
		where = "the message"
	}
	return fmt.Sprintf("%s: %s [%s]", where, v.Detail, v.RuleID)
}

// ValidationError is a message that breaks one or more rules.
type ValidationError struct {
	// Violations lists every broken rule.
	Violations []Violation
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, violation := range e.Violations {
		parts[i] = violation.String()
	}
	return strings.Join(parts, "; ")
}

// validator enforces the schema's buf.validate rules; it is built once, on first use.
var validator = sync.OnceValues(func() (protovalidate.Validator, error) { return protovalidate.New() })

// Violations is every rule message breaks: the schema's protovalidate rules, or, when they all
// hold, the JSON text rules of its fields marked with the pi.ai.v1.json option (see json_text.go).
// It is empty for a valid message.
func Violations(message proto.Message) []Violation {
	if message == nil {
		return nil
	}
	v, err := validator()
	if err == nil {
		err = v.Validate(message)
	}
	if err == nil {
		return jsonViolations(message.ProtoReflect())
	}
	var invalid *protovalidate.ValidationError
	if !errors.As(err, &invalid) {
		// The rules could not be evaluated (a schema the validator cannot compile): report that
		// as the message's one violation rather than calling it valid.
		return []Violation{{RuleID: "protovalidate", Detail: err.Error()}}
	}
	found := make([]Violation, len(invalid.Violations))
	for i, violation := range invalid.Violations {
		found[i] = Violation{
			FieldPath: protovalidate.FieldPathString(violation.Proto.GetField()),
			RuleID:    violation.Proto.GetRuleId(),
			Detail:    violation.Proto.GetMessage(),
		}
	}
	return found
}

// Check returns a *[ValidationError] listing every rule message breaks, or nil when it breaks none.
func Check(message proto.Message) error {
	if found := Violations(message); len(found) > 0 {
		return &ValidationError{Violations: found}
	}
	return nil
}
