package piproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
)

// ValidationError is a message that breaks a rule, with the path of the offending field, in the
// same words as the Python runtime, e.g.
// "message.content[1].tool_call.arguments_json: must be a JSON object, got list".
type ValidationError struct {
	Message string
}

func (e *ValidationError) Error() string { return e.Message }

func invalid(format string, args ...any) *ValidationError {
	return &ValidationError{Message: fmt.Sprintf(format, args...)}
}

// Limits bounds the JSON text a message may carry.
type Limits struct {
	// MaxJSONBytes is the largest *_json field, in bytes of UTF-8.
	MaxJSONBytes int
	// MaxJSONDepth is the deepest nesting of objects and arrays in a *_json field.
	MaxJSONDepth int
}

// DefaultLimits leave room for a 4 MiB tool argument or result, nested at most 64 deep.
var DefaultLimits = Limits{MaxJSONBytes: 4 * 1024 * 1024, MaxJSONDepth: 64}

// CheckAssistant checks a finished assistant message: stop reason set, every block set, tool
// calls with an id, a name and a JSON object of arguments, and every extra_json a JSON object.
// path names the message in the error ("AssistantMessage" when empty).
func CheckAssistant(message *aiv1.AssistantMessage, path string, limits Limits) error {
	if path == "" {
		path = "AssistantMessage"
	}
	if message.GetStopReason() == aiv1.StopReason_STOP_REASON_UNSPECIFIED {
		return invalid("%s.stop_reason: must be set", path)
	}
	for index, content := range message.GetContent() {
		where := fmt.Sprintf("%s.content[%d]", path, index)
		var member, extra string
		switch block := content.GetBlock().(type) {
		case *aiv1.AssistantContent_Text:
			member, extra = "text", block.Text.GetExtraJson()
		case *aiv1.AssistantContent_Thinking:
			member, extra = "thinking", block.Thinking.GetExtraJson()
		case *aiv1.AssistantContent_ToolCall:
			member, extra = "tool_call", block.ToolCall.GetExtraJson()
			call := block.ToolCall
			at := where + ".tool_call"
			if call.GetId() == "" {
				return invalid("%s.id: must not be empty", at)
			}
			if call.GetName() == "" {
				return invalid("%s.name: must not be empty", at)
			}
			if _, err := ParseJSONObject(call.GetArgumentsJson(), at+".arguments_json", limits); err != nil {
				return err
			}
		default:
			return invalid("%s.block: exactly one of text, thinking, tool_call must be set, found none", where)
		}
		if err := checkExtra(extra, where+"."+member, limits); err != nil {
			return err
		}
	}
	return checkExtra(message.GetExtraJson(), path, limits)
}

func checkExtra(extraJSON, path string, limits Limits) error {
	if extraJSON == "" {
		return nil
	}
	_, err := ParseJSONObject(extraJSON, path+".extra_json", limits)
	return err
}

// ParseJSONObject parses JSON text that must hold an object, within the size and depth limits.
// Numbers are kept as json.Number, so integers stay integers.
func ParseJSONObject(text, path string, limits Limits) (map[string]any, error) {
	if size := len(text); size > limits.MaxJSONBytes {
		return nil, invalid("%s: %d bytes of JSON, above the limit of %d", path, size, limits.MaxJSONBytes)
	}
	decoder := json.NewDecoder(strings.NewReader(text))
	decoder.UseNumber()
	var value any
	err := decoder.Decode(&value)
	if err == nil {
		if _, extra := decoder.Token(); extra != io.EOF {
			err = errors.New("extra data after the JSON value")
		}
	} else if errors.Is(err, io.EOF) {
		err = errors.New("unexpected end of JSON input")
	}
	if err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) && strings.HasSuffix(syntax.Error(), "exceeded max depth") {
			return nil, invalid("%s: JSON nested deeper than the limit of %d", path, limits.MaxJSONDepth)
		}
		return nil, invalid("%s: not valid JSON: %v", path, err)
	}
	object, ok := value.(map[string]any)
	if !ok {
		return nil, invalid("%s: must be a JSON object, got %s", path, jsonType(value))
	}
	if depth(value) > limits.MaxJSONDepth {
		return nil, invalid("%s: JSON nested deeper than the limit of %d", path, limits.MaxJSONDepth)
	}
	return object, nil
}

// depth is the nesting depth of parsed JSON, without recursion (the value may be deep).
func depth(value any) int {
	type item struct {
		value any
		level int
	}
	deepest := 0
	stack := []item{{value, 1}}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		deepest = max(deepest, top.level)
		switch container := top.value.(type) {
		case map[string]any:
			for _, child := range container {
				if isContainer(child) {
					stack = append(stack, item{child, top.level + 1})
				}
			}
		case []any:
			for _, child := range container {
				if isContainer(child) {
					stack = append(stack, item{child, top.level + 1})
				}
			}
		}
	}
	return deepest
}

func isContainer(value any) bool {
	switch value.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// jsonType is the JSON type's name as the Python runtime words it.
func jsonType(value any) string {
	switch value.(type) {
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "number"
}
