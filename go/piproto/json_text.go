package piproto

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MaxJSONDepth is how deep objects and arrays may nest in JSON text (the JsonText option's rule).
const MaxJSONDepth = 64

// The JSON text rules: a string field marked with the pi.ai.v1.json option holds RFC 8259 JSON as
// JavaScript's JSON.parse reads it, every number within a double's range, nested at most
// MaxJSONDepth deep, an object when its shape says so, and, on an extra_json field, no key its
// message models ("json.extra", see modelledKeyProblem). A protovalidate rule cannot read JSON,
// so this walker finds the marked fields through the descriptors: a new JSON field needs no code.

// jsonPlan is where the JSON text of one message type may live: its marked fields, and its
// message fields (each walked in turn).
type jsonPlan struct {
	texts  []jsonText
	nested []protoreflect.FieldDescriptor
}

type jsonText struct {
	field protoreflect.FieldDescriptor
	rule  *aiv1.JsonText
}

// plans caches the plan of each message type (a protoreflect.FullName to a *jsonPlan).
var plans sync.Map

func planOf(message protoreflect.MessageDescriptor) *jsonPlan {
	if plan, ok := plans.Load(message.FullName()); ok {
		return plan.(*jsonPlan)
	}
	plan := &jsonPlan{}
	fields := message.Fields()
	for i := range fields.Len() {
		field := fields.Get(i)
		options := field.Options()
		switch {
		case ignored(options):
			// protovalidate skips it (a partial, a start header), and so do the JSON rules.
		case proto.HasExtension(options, aiv1.E_Json):
			plan.texts = append(plan.texts, jsonText{field, proto.GetExtension(options, aiv1.E_Json).(*aiv1.JsonText)})
		case field.Message() != nil && (!field.IsMap() || field.MapValue().Message() != nil):
			plan.nested = append(plan.nested, field)
		}
	}
	plans.Store(message.FullName(), plan)
	return plan
}

func ignored(options protoreflect.ProtoMessage) bool {
	rules, ok := proto.GetExtension(options, validate.E_Field).(*validate.FieldRules)
	return ok && rules.GetIgnore() == validate.Ignore_IGNORE_ALWAYS
}

// jsonViolations is every JSON text rule message breaks, with paths from message.
func jsonViolations(message protoreflect.Message) []Violation {
	var found []Violation
	walkJSON(message, "", &found)
	return found
}

func walkJSON(message protoreflect.Message, path string, found *[]Violation) {
	plan := planOf(message.Descriptor())
	for _, text := range plan.texts {
		field := text.field
		if field.HasPresence() && !message.Has(field) {
			continue
		}
		value := message.Get(field).String()
		if value == "" && text.rule.GetEmptyAllowed() {
			continue
		}
		rule, detail := jsonTextProblem(value, text.rule.GetShape())
		if rule == "" && len(text.rule.GetModelledKeys()) > 0 {
			// Only text that passed the other rules is read for keys, so it is sure to parse.
			rule, detail = modelledKeyProblem(value, text.rule.GetModelledKeys())
		}
		if rule != "" {
			*found = append(*found, Violation{FieldPath: join(path, string(field.Name())), RuleID: rule, Detail: detail})
		}
	}
	for _, field := range plan.nested {
		name := join(path, string(field.Name()))
		switch {
		case field.IsList():
			list := message.Get(field).List()
			for i := range list.Len() {
				walkJSON(list.Get(i).Message(), fmt.Sprintf("%s[%d]", name, i), found)
			}
		case field.IsMap():
			message.Get(field).Map().Range(func(key protoreflect.MapKey, value protoreflect.Value) bool {
				subscript := key.String()
				if field.MapKey().Kind() == protoreflect.StringKind {
					subscript = strconv.Quote(subscript)
				}
				walkJSON(value.Message(), name+"["+subscript+"]", found)
				return true
			})
		case message.Has(field):
			walkJSON(message.Get(field).Message(), name, found)
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// jsonTextProblem is what is wrong with text as JSON text of this shape, as a rule id and a
// detail; two empty strings when nothing is. A syntax error comes first, then the depth, then
// a number beyond a double, then the shape.
func jsonTextProblem(text string, shape aiv1.JsonShape) (rule, detail string) {
	scan := jsonScanner{text: text}
	if err := scan.run(); err != "" {
		return "json.syntax", fmt.Sprintf("not JSON text: %s at byte %d", err, scan.at)
	}
	if scan.deepest > MaxJSONDepth {
		return "json.depth", fmt.Sprintf("nests %d deep, more than %d", scan.deepest, MaxJSONDepth)
	}
	if scan.outOfRange != "" {
		return "json.number", fmt.Sprintf("the number %.40s is beyond the range of a double", scan.outOfRange)
	}
	if shape == aiv1.JsonShape_JSON_SHAPE_OBJECT && scan.first != '{' {
		return "json.object", "must be a JSON object"
	}
	return "", ""
}

// modelledKeyProblem is rule "json.extra" for the valid JSON text of an extra_json field: the
// first key of its object that the message models, unless its value is [] or {} (kept, as a
// repeated field cannot tell empty from none). Not an object: nothing to say.
func modelledKeyProblem(text string, modelled []string) (rule, detail string) {
	decoder := json.NewDecoder(strings.NewReader(text))
	if open, _ := decoder.Token(); open != json.Delim('{') {
		return "", ""
	}
	// A duplicate key keeps its first place and its last value, as the reference's dict does.
	var keys []string
	values := map[string]json.RawMessage{}
	for decoder.More() {
		token, err := decoder.Token()
		var value json.RawMessage
		if err == nil {
			err = decoder.Decode(&value)
		}
		if err != nil {
			return "", "" // cannot happen: the text passed the syntax rule
		}
		key := token.(string)
		if _, seen := values[key]; !seen {
			keys = append(keys, key)
		}
		values[key] = value
	}
	for _, key := range keys {
		if slices.Contains(modelled, key) && !emptyContainer(values[key]) {
			return "json.extra", fmt.Sprintf("holds '%s', a key the message models as a field", key)
		}
	}
	return "", ""
}

// emptyContainer is whether value, valid JSON, is an empty array or object (spaces inside allowed).
func emptyContainer(value json.RawMessage) bool {
	if len(value) < 2 || (value[0] != '[' && value[0] != '{') {
		return false
	}
	return strings.Trim(string(value[1:len(value)-1]), " \t\n\r") == ""
}

// jsonScanner checks RFC 8259 text in one pass without recursion, so any depth is measured
// without growing the goroutine's stack.
type jsonScanner struct {
	text       string
	at         int
	stack      []byte // the open containers, '{' or '['
	deepest    int
	first      byte   // the first byte of the value: '{' for an object
	outOfRange string // the first number that does not fit in a double
}

// run scans the whole text; it returns what is wrong with its syntax, or "".
func (s *jsonScanner) run() string {
	s.space()
	if s.at < len(s.text) {
		s.first = s.text[s.at]
	}
	for {
		if err := s.value(); err != "" {
			return err
		}
		if err, more := s.close(); err != "" || !more {
			if err == "" && s.at < len(s.text) {
				return "more text after the value"
			}
			return err
		}
	}
}

// value scans one value; for an object or array it scans only up to the first value inside
// (close() goes on from there), so nesting costs no recursion.
func (s *jsonScanner) value() string {
	for {
		s.space()
		if s.at == len(s.text) {
			return "unexpected end of text"
		}
		switch c := s.text[s.at]; {
		case c == '{' || c == '[':
			s.at++
			s.stack = append(s.stack, c)
			s.deepest = max(s.deepest, len(s.stack))
			s.space()
			if s.at < len(s.text) && s.text[s.at] == c+2 { // '}' is '{'+2, ']' is '['+2
				return "" // empty: close() takes the bracket
			}
			if c == '{' {
				if err := s.key(); err != "" {
					return err
				}
			}
		case c == '"':
			return s.quoted()
		case c == '-' || c >= '0' && c <= '9':
			return s.number()
		default:
			for _, literal := range []string{"true", "false", "null"} {
				if strings.HasPrefix(s.text[s.at:], literal) {
					s.at += len(literal)
					return ""
				}
			}
			return fmt.Sprintf("unexpected %q", rune(c))
		}
	}
}

// key scans an object's key and the colon after it.
func (s *jsonScanner) key() string {
	s.space()
	if s.at == len(s.text) || s.text[s.at] != '"' {
		return "expected a string key"
	}
	if err := s.quoted(); err != "" {
		return err
	}
	s.space()
	if s.at == len(s.text) || s.text[s.at] != ':' {
		return "expected ':'"
	}
	s.at++
	return ""
}

// close scans what follows a value: closing brackets, until a comma that asks for another value
// (more) or the end of the outermost value.
func (s *jsonScanner) close() (err string, more bool) {
	for len(s.stack) > 0 {
		s.space()
		if s.at == len(s.text) {
			return "unexpected end of text", false
		}
		top := s.stack[len(s.stack)-1]
		switch c := s.text[s.at]; c {
		case ',':
			s.at++
			if top == '{' {
				return s.key(), true
			}
			return "", true
		case top + 2:
			s.at++
			s.stack = s.stack[:len(s.stack)-1]
		default:
			return fmt.Sprintf("unexpected %q", rune(c)), false
		}
	}
	s.space()
	return "", false
}

func (s *jsonScanner) space() {
	for s.at < len(s.text) {
		switch s.text[s.at] {
		case ' ', '\t', '\n', '\r':
			s.at++
		default:
			return
		}
	}
}

func (s *jsonScanner) quoted() string {
	s.at++ // the opening quote
	for s.at < len(s.text) {
		c := s.text[s.at]
		switch {
		case c == '"':
			s.at++
			return ""
		case c == '\\':
			if s.at+1 == len(s.text) {
				return "unexpected end of text"
			}
			escape := s.text[s.at+1]
			switch escape {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.at += 2
			case 'u':
				if len(s.text)-s.at < 6 {
					return "unexpected end of text"
				}
				if _, err := strconv.ParseUint(s.text[s.at+2:s.at+6], 16, 16); err != nil {
					return "a \\u escape without four hex digits"
				}
				s.at += 6
			default:
				return fmt.Sprintf("the escape \\%c", escape)
			}
		case c < 0x20:
			return "a control character in a string"
		case c < utf8.RuneSelf:
			s.at++
		default:
			r, size := utf8.DecodeRuneInString(s.text[s.at:])
			if r == utf8.RuneError && size == 1 {
				return "bytes that are not UTF-8"
			}
			s.at += size
		}
	}
	return "unexpected end of text"
}

// number scans -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? and notes one beyond a double.
func (s *jsonScanner) number() string {
	start := s.at
	if s.text[s.at] == '-' {
		s.at++
	}
	switch {
	case s.at < len(s.text) && s.text[s.at] == '0':
		s.at++
	case s.digits() == 0:
		return "a number without digits"
	}
	if s.at < len(s.text) && s.text[s.at] == '.' {
		s.at++
		if s.digits() == 0 {
			return "a number without digits after its point"
		}
	}
	if s.at < len(s.text) && (s.text[s.at] == 'e' || s.text[s.at] == 'E') {
		s.at++
		if s.at < len(s.text) && (s.text[s.at] == '+' || s.text[s.at] == '-') {
			s.at++
		}
		if s.digits() == 0 {
			return "a number without digits in its exponent"
		}
	}
	literal := s.text[start:s.at]
	if value, _ := strconv.ParseFloat(literal, 64); math.IsInf(value, 0) && s.outOfRange == "" {
		s.outOfRange = literal
	}
	return ""
}

func (s *jsonScanner) digits() int {
	start := s.at
	for s.at < len(s.text) && s.text[s.at] >= '0' && s.text[s.at] <= '9' {
		s.at++
	}
	return s.at - start
}
