package piproto

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// pi-JSON: the JSON pi writes (pi-coding-agent's session files, its JSON.stringify output), read
// into the pi.ai.v1 messages and written back, byte for byte for anything pi wrote
// (docs/transcripts.md describes it for every runtime; tests/conformance/pi_json.yaml pins it).
//
// Keys the schema does not model go to the object's extra_json, and only those, so what a
// message's fields say is what is written: an edit is never undone by a kept value. A key the
// object lacked leaves its field unset (the fields pi may leave out are proto3 optional), and
// the writer leaves it out again. The one value a field cannot hold is an empty list or object
// under a key the writer leaves out when empty (a context's `tools: []`): it stays in
// extra_json, written while the field is empty. The writer writes each object's keys in the
// order the schema gives (the modelled_keys of its extra_json: the order pi writes them in); an
// object whose keys came in another order lists them under "$order" in extra_json, and is
// written in that order.

// PiJSONError is pi-JSON that does not describe a valid message, or a message pi-JSON cannot
// hold. Path is JavaScript-style, from the object read ("content[1].type", "" for the object
// itself), or names the field of the message written ("SystemMessage.sections[0].name").
type PiJSONError struct {
	Path   string
	Detail string
}

func (e *PiJSONError) Error() string {
	if e.Path == "" {
		return "the value: " + e.Detail
	}
	return e.Path + ": " + e.Detail
}

// failure is the error the codec panics with: the readers and writers recurse through every
// field, and a panic spares each of them an error to pass up. It never leaves the package: the
// public functions recover it (caught) and return it.
func failure(path, format string, args ...any) *PiJSONError {
	return &PiJSONError{Path: path, Detail: fmt.Sprintf(format, args...)}
}

// caught turns a failure panicking through a public function into its error; any other panic
// goes on.
func caught(err *error) {
	if recovered := recover(); recovered != nil {
		failed, ok := recovered.(*PiJSONError)
		if !ok {
			panic(recovered)
		}
		*err = failed
	}
}

// readPi reads pi's JSON text with read.
func readPi[T any](text []byte, read func(jsonValue, string) T) (result T, err error) {
	value, err := parseJSON(text, true)
	if err != nil {
		return result, fmt.Errorf("not JSON text: %w", err)
	}
	defer caught(&err)
	return read(value, ""), nil
}

// writePi writes what write makes of message as pi's JSON text.
func writePi[T any](message T, write func(T) *jsonObject) (text []byte, err error) {
	defer caught(&err)
	return appendJSON(nil, write(message), true), nil
}

// --- key order -----------------------------------------------------------------------------------

// keyOrder is the keys of one pi-JSON object type in the order the writer writes them (the order
// pi builds the object in, the keys it adds as a response goes on after the ones it starts with).
type keyOrder struct {
	keys  []string
	known map[string]bool // the others become extras
}

func keysOf(keys ...string) keyOrder {
	known := make(map[string]bool, len(keys))
	for _, key := range keys {
		known[key] = true
	}
	return keyOrder{keys: keys, known: known}
}

// modelledKeys is the order of the object message stands for, as the schema states it: the
// modelled_keys of the pi.ai.v1.json option of its field (extra_json).
func modelledKeys(message proto.Message, field protoreflect.Name) keyOrder {
	options := message.ProtoReflect().Descriptor().Fields().ByName(field).Options()
	return keysOf(proto.GetExtension(options, aiv1.E_Json).(*aiv1.JsonText).GetModelledKeys()...)
}

var (
	assistantKeys       = modelledKeys(&aiv1.AssistantMessage{}, "extra_json")
	systemKeys          = modelledKeys(&aiv1.SystemMessage{}, "extra_json")
	userKeys            = modelledKeys(&aiv1.UserMessage{}, "extra_json")
	toolResultKeys      = modelledKeys(&aiv1.ToolResultMessage{}, "extra_json")
	textKeys            = modelledKeys(&aiv1.TextContent{}, "extra_json")
	thinkingKeys        = modelledKeys(&aiv1.ThinkingContent{}, "extra_json")
	toolCallKeys        = modelledKeys(&aiv1.ToolCall{}, "extra_json")
	imageKeys           = modelledKeys(&aiv1.ImageContent{}, "extra_json")
	usageKeys           = modelledKeys(&aiv1.Usage{}, "extra_json")
	costKeys            = modelledKeys(&aiv1.Cost{}, "extra_json")
	contextKeys         = modelledKeys(&aiv1.AgentContext{}, "extra_json")
	toolKeys            = modelledKeys(&aiv1.Tool{}, "extra_json")
	toolReferenceKeys   = modelledKeys(&aiv1.ToolReference{}, "extra_json")
	jsonSchemaKeys      = modelledKeys(&aiv1.JsonSchemaSampling{}, "extra_json")
	grammarKeys         = modelledKeys(&aiv1.GrammarSampling{}, "extra_json")
	variantsKeys        = modelledKeys(&aiv1.GrammarSampling{}, "variants_extra_json")
	diagnosticKeys      = modelledKeys(&aiv1.Diagnostic{}, "extra_json")
	diagnosticErrorKeys = modelledKeys(&aiv1.DiagnosticError{}, "extra_json")
	deferredKeys        = modelledKeys(&aiv1.DeferredHandle{}, "extra_json")
	nestedCallsKeys     = modelledKeys(&aiv1.NestedToolCalls{}, "extra_json")
	nestedCallKeys      = modelledKeys(&aiv1.NestedToolCall{}, "extra_json")
)

// orderKey is the key of extra_json that lists the keys of an object whose order differs from
// the writer's, which then follows it.
const orderKey = "$order"

// inOrder is out with the keys of order first, in that order, then the others as they are.
func inOrder(out *jsonObject, order []string) *jsonObject {
	placed := newObject()
	for _, key := range order {
		if value, ok := out.values[key]; ok {
			placed.setDefault(key, value)
		}
	}
	for _, key := range out.keys {
		placed.setDefault(key, out.values[key])
	}
	return placed
}

// --- pi's names of enum values -------------------------------------------------------------------

// piNames is pi's word for each value of an enum that has them, in pi's order.
type piNames[E comparable] []struct {
	word  string
	value E
}

func (names piNames[E]) value(word string) (E, bool) {
	for _, name := range names {
		if name.word == word {
			return name.value, true
		}
	}
	var none E
	return none, false
}

func (names piNames[E]) word(value E) (string, bool) {
	for _, name := range names {
		if name.value == value {
			return name.word, true
		}
	}
	return "", false
}

func (names piNames[E]) String() string {
	words := make([]string, len(names))
	for i, name := range names {
		words[i] = name.word
	}
	return strings.Join(words, ", ")
}

var (
	stopReasons = piNames[aiv1.StopReason]{
		{"stop", aiv1.StopReason_STOP_REASON_STOP},
		{"length", aiv1.StopReason_STOP_REASON_LENGTH},
		{"toolUse", aiv1.StopReason_STOP_REASON_TOOL_USE},
		{"error", aiv1.StopReason_STOP_REASON_ERROR},
		{"aborted", aiv1.StopReason_STOP_REASON_ABORTED},
		{"pending", aiv1.StopReason_STOP_REASON_PENDING},
		{"deferred", aiv1.StopReason_STOP_REASON_DEFERRED},
	}
	thinkingLevels = piNames[aiv1.ModelThinkingLevel]{
		{"off", aiv1.ModelThinkingLevel_MODEL_THINKING_LEVEL_OFF},
		{"minimal", aiv1.ModelThinkingLevel_MODEL_THINKING_LEVEL_MINIMAL},
		{"low", aiv1.ModelThinkingLevel_MODEL_THINKING_LEVEL_LOW},
		{"medium", aiv1.ModelThinkingLevel_MODEL_THINKING_LEVEL_MEDIUM},
		{"high", aiv1.ModelThinkingLevel_MODEL_THINKING_LEVEL_HIGH},
		{"xhigh", aiv1.ModelThinkingLevel_MODEL_THINKING_LEVEL_XHIGH},
		{"max", aiv1.ModelThinkingLevel_MODEL_THINKING_LEVEL_MAX},
	}
	nestedCallStatuses = piNames[aiv1.NestedCallStatus]{
		{"ok", aiv1.NestedCallStatus_NESTED_CALL_STATUS_OK},
		{"error", aiv1.NestedCallStatus_NESTED_CALL_STATUS_ERROR},
		{"unfinished", aiv1.NestedCallStatus_NESTED_CALL_STATUS_UNFINISHED},
	}
	strictness = piNames[aiv1.Strictness]{
		{"prefer", aiv1.Strictness_STRICTNESS_PREFER},
		{"require", aiv1.Strictness_STRICTNESS_REQUIRE},
	}
)

// --- reading one object --------------------------------------------------------------------------

// objectReader reads the known keys of one pi-JSON object; the keys its type does not model
// become extras.
type objectReader struct {
	object *jsonObject
	where  string
	order  keyOrder
	extra  *jsonObject // the empty values omittedWhenEmpty keeps, then the unmodelled keys
}

func newReader(value jsonValue, where string, order keyOrder) *objectReader {
	object, ok := value.(*jsonObject)
	if !ok {
		panic(failure(where, "expected an object, got %s", typeName(value)))
	}
	return &objectReader{object: object, where: where, order: order, extra: newObject()}
}

func (r *objectReader) get(key string) jsonValue { return r.object.values[key] }

func (r *objectReader) mismatch(key, expected string) *PiJSONError {
	return failure(join(r.where, key), "expected %s, got %s", expected, describe(r.get(key)))
}

func (r *objectReader) string(key string) string {
	if value, ok := r.get(key).(jsonString); ok {
		return string(value)
	}
	panic(r.mismatch(key, "a string"))
}

func (r *objectReader) optionalString(key string) *string {
	if !r.object.has(key) {
		return nil
	}
	return proto.String(r.string(key))
}

func (r *objectReader) boolean(key string) bool {
	if value, ok := r.get(key).(jsonBool); ok {
		return bool(value)
	}
	panic(r.mismatch(key, "a boolean"))
}

func (r *objectReader) optionalBoolean(key string) *bool {
	if !r.object.has(key) {
		return nil
	}
	return proto.Bool(r.boolean(key))
}

// integer reads an integer field: JavaScript has doubles only, so 1.0 and -0 are integers.
func (r *objectReader) integer(key string) int64 {
	if value, ok := r.get(key).(jsonNumber); ok {
		if number := float64(value); -1<<63 <= number && number < 1<<63 && number == math.Trunc(number) {
			return int64(number)
		}
	}
	panic(r.mismatch(key, "a 64-bit integer"))
}

func (r *objectReader) optionalInteger(key string) *int64 {
	if !r.object.has(key) {
		return nil
	}
	return proto.Int64(r.integer(key))
}

func (r *objectReader) optionalNumber(key string) *float64 {
	if !r.object.has(key) {
		return nil
	}
	if value, ok := r.get(key).(jsonNumber); ok {
		return proto.Float64(float64(value))
	}
	panic(r.mismatch(key, "a number"))
}

// choice reads one of an enum's pi words; a word pi does not define is refused, as nothing could
// hold it.
func choice[E comparable](r *objectReader, key string, names piNames[E]) E {
	word := r.string(key)
	value, ok := names.value(word)
	if !ok {
		panic(failure(join(r.where, key), "expected one of %s, got %q", names, word))
	}
	return value
}

// optionalChoice is choice, or the enum's zero value (unspecified) when the key is absent.
func optionalChoice[E comparable](r *objectReader, key string, names piNames[E]) E {
	if !r.object.has(key) {
		var unspecified E
		return unspecified
	}
	return choice(r, key, names)
}

// items reads the list under key, each item with read.
func items[T any](r *objectReader, key string, read func(jsonValue, string) T) []T {
	return list(r.get(key), join(r.where, key), read)
}

func list[T any](value jsonValue, where string, read func(jsonValue, string) T) []T {
	array, ok := value.(jsonArray)
	if !ok {
		panic(failure(where, "expected a list, got %s", describe(value)))
	}
	out := make([]T, len(array))
	for i, item := range array {
		out[i] = read(item, fmt.Sprintf("%s[%d]", where, i))
	}
	return out
}

// child reads the value under key with read; the zero value (nil) when the key is absent.
func child[T any](r *objectReader, key string, read func(jsonValue, string) T) T {
	value := r.get(key)
	if value == nil {
		var absent T
		return absent
	}
	return read(value, join(r.where, key))
}

// omittedWhenEmpty reads a repeated field the writer leaves out when empty: an empty list (an
// empty object, asObject, for one pi writes as an object) under its key, which the field cannot
// tell from none, is kept as an extra.
func omittedWhenEmpty[T any](r *objectReader, key string, read func(jsonValue, string) []T, asObject bool) []T {
	value := r.get(key)
	if value == nil {
		return nil
	}
	array, isArray := value.(jsonArray)
	object, isObject := value.(*jsonObject)
	if isArray && !asObject && len(array) == 0 || isObject && asObject && len(object.keys) == 0 {
		r.extra.set(key, value)
		return nil
	}
	return read(value, join(r.where, key))
}

// jsonText reads a value kept as JSON text; absent stays absent.
func (r *objectReader) jsonText(key string, objectOnly bool) *string {
	value := r.get(key)
	if value == nil {
		return nil
	}
	if _, ok := value.(*jsonObject); objectOnly && !ok {
		panic(r.mismatch(key, "an object"))
	}
	return proto.String(dumpJSON(value))
}

// extraJSON is the keys the type does not model (and the empty values omittedWhenEmpty kept), and
// the keys' order when the writer's differs, as JSON object text; "" when there are none.
func (r *objectReader) extraJSON() string {
	for _, key := range r.object.keys {
		if !r.order.known[key] {
			r.extra.set(key, r.object.values[key])
		}
	}
	if len(r.order.keys) > 0 && !r.inWriterOrder() {
		order := make(jsonArray, len(r.object.keys))
		for i, key := range r.object.keys {
			order[i] = jsonString(key)
		}
		r.extra.set(orderKey, order)
	}
	if len(r.extra.keys) == 0 {
		return ""
	}
	return dumpJSON(r.extra)
}

// inWriterOrder is whether the writer, which writes the modelled keys in its order and the extras
// after them, gives the keys in the order the object has them.
func (r *objectReader) inWriterOrder() bool {
	written := make([]string, 0, len(r.object.keys))
	for _, key := range r.order.keys {
		if r.object.has(key) {
			written = append(written, key)
		}
	}
	for _, key := range r.object.keys {
		if !r.order.known[key] {
			written = append(written, key)
		}
	}
	return slices.Equal(written, r.object.keys)
}

// describe names a value in an error message: its kind and the start of its text.
func describe(value jsonValue) string {
	if value == nil {
		return "nothing (the key is missing)"
	}
	text := dumpJSON(value)
	if utf8.RuneCountInString(text) > 40 {
		text = string([]rune(text)[:40])
	}
	return typeName(value) + " " + text
}

// --- writing one object --------------------------------------------------------------------------

func putString(out *jsonObject, key string, value *string) {
	if value != nil {
		out.set(key, jsonString(*value))
	}
}

func putBoolean(out *jsonObject, key string, value *bool) {
	if value != nil {
		out.set(key, jsonBool(*value))
	}
}

func putInteger(out *jsonObject, key string, value *int64) {
	if value != nil {
		out.set(key, fromInteger(*value))
	}
}

// fromInteger is an integer field's value as pi's number: beyond 2^53, the double JavaScript
// would read.
func fromInteger(value int64) jsonNumber { return jsonNumber(float64(value)) }

// fromDouble is a double field's value, which JSON can write only when it is finite.
func fromDouble(value float64, where string) jsonNumber {
	if math.IsNaN(value) || math.IsInf(value, 0) {
		panic(failure(where, "%v is not a number JSON can write", value))
	}
	return jsonNumber(value)
}

// putJSON writes a value held as JSON text; absent leaves the key out.
func putJSON(out *jsonObject, key string, text *string, where string) {
	if text != nil {
		out.set(key, storedJSON(*text, where))
	}
}

// storedJSON is the value of JSON text a message holds.
func storedJSON(text, where string) jsonValue {
	value, err := parseJSON([]byte(text), false)
	if err != nil {
		panic(failure(where, "not valid JSON: %v", err))
	}
	return value
}

// storedObject is the object of JSON object text a message holds.
func storedObject(text, where string) *jsonObject {
	value := storedJSON(text, where)
	object, ok := value.(*jsonObject)
	if !ok {
		panic(failure(where, "expected a JSON object, got %s", typeName(value)))
	}
	return object
}

// withExtra is out with the object's extras, in the order the object had its keys (order, the
// writer's, when it had them in that). A key the fields wrote wins over the same key in the
// extras, which only an empty list or object may be (omittedWhenEmpty).
func withExtra(out *jsonObject, extraJSON, where string, order keyOrder) *jsonObject {
	return withKept(out, extraJSON, join(where, "extra_json"), order)
}

// withKept is withExtra for the JSON object text of any field that keeps an object's unmodelled
// keys (an extra_json, a session line's fields_json or session_json), named by field in errors.
func withKept(out *jsonObject, kept, field string, order keyOrder) *jsonObject {
	if kept == "" {
		return inOrder(out, order.keys) // the schema's order, whatever order the writer set them in
	}
	extra := storedObject(kept, field)
	keys := order.keys
	if listed := extra.remove(orderKey); listed != nil {
		keys = keyList(listed, field)
	}
	for _, key := range extra.keys {
		out.setDefault(key, extra.values[key])
	}
	return inOrder(out, keys)
}

func keyList(value jsonValue, field string) []string {
	array, ok := value.(jsonArray)
	keys := make([]string, len(array))
	for i, item := range array {
		key, isString := item.(jsonString)
		ok = ok && isString
		keys[i] = string(key)
	}
	if !ok {
		panic(failure(field, "%s is a list of keys", orderKey))
	}
	return keys
}
