package piproto

import (
	"encoding/base64"
	"math"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/proto"
)

// Reading pi-JSON: each reader takes a value and the path it was found at, and reads the keys in
// the same order in every runtime, so the first bad value found is the one the corpus names.

// MessageFromPi reads one pi-JSON message: system, user, assistant, toolResult, or a message of
// any other role, kept as a CustomMessage.
func MessageFromPi(text []byte) (*aiv1.AgentMessage, error) {
	return readPi(text, messageFromPi)
}

// AssistantFromPi reads one pi-JSON assistant message.
func AssistantFromPi(text []byte) (*aiv1.AssistantMessage, error) {
	return readPi(text, assistantFromPi)
}

// ContextFromPi reads a pi-JSON context: pi's Context (systemPrompt, messages, tools) or its
// TranscriptContext (messages only, the prompt and tools in system messages), kept as given.
func ContextFromPi(text []byte) (*aiv1.AgentContext, error) {
	return readPi(text, contextFromPi)
}

func messageFromPi(value jsonValue, where string) *aiv1.AgentMessage {
	object, ok := value.(*jsonObject)
	if !ok {
		panic(failure(where, "expected an object, got %s", typeName(value)))
	}
	role, isString := object.values["role"].(jsonString)
	switch {
	case role == "user":
		return &aiv1.AgentMessage{Role: &aiv1.AgentMessage_User{User: userFromPi(object, where)}}
	case role == "assistant":
		return &aiv1.AgentMessage{Role: &aiv1.AgentMessage_Assistant{Assistant: assistantFromPi(object, where)}}
	case role == "toolResult":
		return &aiv1.AgentMessage{Role: &aiv1.AgentMessage_ToolResult{ToolResult: toolResultFromPi(object, where)}}
	case role == "system":
		return &aiv1.AgentMessage{Role: &aiv1.AgentMessage_System{System: systemFromPi(object, where)}}
	case isString && role != "":
		custom := &aiv1.CustomMessage{Role: string(role), FieldsJson: dumpJSON(object.without("role"))}
		return &aiv1.AgentMessage{Role: &aiv1.AgentMessage_Custom{Custom: custom}}
	}
	panic(failure(join(where, "role"), "expected a role such as 'system', 'user', 'assistant' or 'toolResult', got %s",
		describe(object.values["role"])))
}

func assistantFromPi(value jsonValue, where string) *aiv1.AssistantMessage {
	r := newReader(value, where, assistantKeys)
	r.string("role")
	message := &aiv1.AssistantMessage{Content: items(r, "content", assistantBlock)}
	message.Api = r.optionalString("api")
	message.Provider = r.optionalString("provider")
	message.Model = r.optionalString("model")
	message.Usage = child(r, "usage", usageFromPi)
	// Absent only on a partial from an older pi, still streaming; written only when set.
	message.StopReason = optionalChoice(r, "stopReason", stopReasons)
	message.Deferred = child(r, "deferred", deferredFromPi)
	message.Timestamp = r.optionalInteger("timestamp")
	message.ProviderThinkingLevel = r.optionalString("providerThinkingLevel")
	message.ResponseId = r.optionalString("responseId")
	message.ResponseModel = r.optionalString("responseModel")
	message.RawStopReason = r.optionalString("rawStopReason")
	message.EndTurn = r.optionalBoolean("endTurn")
	message.ErrorMessage = r.optionalString("errorMessage")
	message.Diagnostics = omittedWhenEmpty(r, "diagnostics", diagnosticsFromPi, false)
	message.DurationMs = r.optionalInteger("durationMs")
	message.ThinkingLevel = optionalChoice(r, "thinkingLevel", thinkingLevels)
	message.ExtraJson = r.extraJSON()
	return message
}

func contextFromPi(value jsonValue, where string) *aiv1.AgentContext {
	r := newReader(value, where, contextKeys)
	context := &aiv1.AgentContext{SystemPrompt: r.optionalString("systemPrompt")}
	context.Messages = items(r, "messages", messageFromPi)
	context.Tools = omittedWhenEmpty(r, "tools", toolsFromPi, false)
	context.ExtraJson = r.extraJSON()
	return context
}

func systemFromPi(value jsonValue, where string) *aiv1.SystemMessage {
	r := newReader(value, where, systemKeys)
	r.string("role")
	message := &aiv1.SystemMessage{}
	if content, ok := r.get("content").(jsonString); ok {
		message.Content, message.StringContent = []*aiv1.TextContent{{Text: string(content)}}, true
	} else {
		message.Content = items(r, "content", systemBlock)
	}
	message.Sections = omittedWhenEmpty(r, "sections", sectionsFromPi, true)
	message.ToolsAdded = omittedWhenEmpty(r, "toolsAdded", toolsFromPi, false)
	message.ToolsRemoved = omittedWhenEmpty(r, "toolsRemoved", toolReferencesFromPi, false)
	message.Timestamp = r.optionalInteger("timestamp")
	message.ExtraJson = r.extraJSON()
	return message
}

func userFromPi(value jsonValue, where string) *aiv1.UserMessage {
	r := newReader(value, where, userKeys)
	r.string("role")
	message := &aiv1.UserMessage{}
	message.Content, message.StringContent = userContent(r)
	message.Timestamp = r.optionalInteger("timestamp")
	message.ExtraJson = r.extraJSON()
	return message
}

// userContent reads a user's content (a user message's, a custom message entry's): its blocks,
// and whether it was one plain string.
func userContent(r *objectReader) ([]*aiv1.UserContent, bool) {
	if content, ok := r.get("content").(jsonString); ok {
		return []*aiv1.UserContent{{Block: &aiv1.UserContent_Text{Text: &aiv1.TextContent{Text: string(content)}}}}, true
	}
	var blocks []*aiv1.UserContent
	for _, block := range items(r, "content", mediaBlock) {
		blocks = append(blocks, block.userContent())
	}
	return blocks, false
}

func toolResultFromPi(value jsonValue, where string) *aiv1.ToolResultMessage {
	r := newReader(value, where, toolResultKeys)
	r.string("role")
	message := &aiv1.ToolResultMessage{ToolCallId: r.string("toolCallId"), ToolName: r.optionalString("toolName")}
	for _, block := range items(r, "content", mediaBlock) {
		message.Content = append(message.Content, block.toolResultContent())
	}
	message.DetailsJson = r.jsonText("details", false)
	message.Usage = child(r, "usage", usageFromPi)
	message.NestedCalls = child(r, "nestedCalls", nestedCallsFromPi)
	message.IsError = r.optionalBoolean("isError")
	message.DurationMs = r.optionalInteger("durationMs")
	message.Timestamp = r.optionalInteger("timestamp")
	message.ExtraJson = r.extraJSON()
	return message
}

// blockType is the `type` of the block value, which must be an object.
func blockType(value jsonValue, where string) jsonValue {
	object, ok := value.(*jsonObject)
	if !ok {
		panic(failure(where, "expected an object, got %s", typeName(value)))
	}
	return object.values["type"]
}

func assistantBlock(value jsonValue, where string) *aiv1.AssistantContent {
	switch kind := blockType(value, where); kind {
	case jsonString("text"):
		return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_Text{Text: textFromPi(value, where)}}
	case jsonString("thinking"):
		r := newReader(value, where, thinkingKeys)
		r.string("type")
		thinking := &aiv1.ThinkingContent{Thinking: r.string("thinking")}
		thinking.ThinkingSignature = r.optionalString("thinkingSignature")
		thinking.Redacted = r.optionalBoolean("redacted")
		thinking.ExtraJson = r.extraJSON()
		return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_Thinking{Thinking: thinking}}
	case jsonString("toolCall"):
		r := newReader(value, where, toolCallKeys)
		r.string("type")
		call := &aiv1.ToolCall{Id: r.string("id"), Name: r.string("name")}
		call.ArgumentsJson = r.jsonText("arguments", true)
		call.RawArguments = r.optionalString("rawArguments")
		call.ThoughtSignature = r.optionalString("thoughtSignature")
		call.Namespace = r.optionalString("namespace")
		call.ArgumentsError = r.optionalString("argumentsError")
		call.ExtraJson = r.extraJSON()
		return &aiv1.AssistantContent{Block: &aiv1.AssistantContent_ToolCall{ToolCall: call}}
	default:
		panic(failure(join(where, "type"), "an assistant block is 'text', 'thinking' or 'toolCall', got %s", describe(kind)))
	}
}

func systemBlock(value jsonValue, where string) *aiv1.TextContent {
	if kind := blockType(value, where); kind != jsonString("text") {
		panic(failure(join(where, "type"), "a system message's block is 'text', got %s", describe(kind)))
	}
	return textFromPi(value, where)
}

// media is a block of a user's or a tool result's content: text or an image.
type media struct {
	text  *aiv1.TextContent
	image *aiv1.ImageContent
}

func (m media) userContent() *aiv1.UserContent {
	if m.text != nil {
		return &aiv1.UserContent{Block: &aiv1.UserContent_Text{Text: m.text}}
	}
	return &aiv1.UserContent{Block: &aiv1.UserContent_Image{Image: m.image}}
}

func (m media) toolResultContent() *aiv1.ToolResultContent {
	if m.text != nil {
		return &aiv1.ToolResultContent{Block: &aiv1.ToolResultContent_Text{Text: m.text}}
	}
	return &aiv1.ToolResultContent{Block: &aiv1.ToolResultContent_Image{Image: m.image}}
}

func mediaBlock(value jsonValue, where string) media {
	switch kind := blockType(value, where); kind {
	case jsonString("text"):
		return media{text: textFromPi(value, where)}
	case jsonString("image"):
		r := newReader(value, where, imageKeys)
		r.string("type")
		encoded := r.string("data")
		data, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			panic(failure(join(where, "data"), "not valid base64: %v", err))
		}
		if base64.StdEncoding.EncodeToString(data) != encoded {
			panic(failure(join(where, "data"), "not canonical base64 (padded, standard alphabet), so it would change"))
		}
		image := &aiv1.ImageContent{Data: data, MimeType: r.string("mimeType")}
		image.ExtraJson = r.extraJSON()
		return media{image: image}
	default:
		panic(failure(join(where, "type"), "expected 'text' or 'image', got %s", describe(kind)))
	}
}

func textFromPi(value jsonValue, where string) *aiv1.TextContent {
	r := newReader(value, where, textKeys)
	r.string("type")
	text := &aiv1.TextContent{Text: r.string("text"), TextSignature: r.optionalString("textSignature")}
	text.ExtraJson = r.extraJSON()
	return text
}

func usageFromPi(value jsonValue, where string) *aiv1.Usage {
	r := newReader(value, where, usageKeys)
	usage := &aiv1.Usage{Input: r.optionalInteger("input")}
	usage.Output = r.optionalInteger("output")
	usage.CacheRead = r.optionalInteger("cacheRead")
	usage.CacheWrite = r.optionalInteger("cacheWrite")
	usage.Reasoning = r.optionalInteger("reasoning") // absent is not 0: the provider did not say
	usage.TotalTokens = r.optionalInteger("totalTokens")
	usage.Cost = child(r, "cost", costFromPi)
	usage.CacheWrite_1H = r.optionalInteger("cacheWrite1h")
	usage.ExtraJson = r.extraJSON()
	return usage
}

func costFromPi(value jsonValue, where string) *aiv1.Cost {
	r := newReader(value, where, costKeys)
	cost := &aiv1.Cost{Input: r.optionalNumber("input")}
	cost.Output = r.optionalNumber("output")
	cost.CacheRead = r.optionalNumber("cacheRead")
	cost.CacheWrite = r.optionalNumber("cacheWrite")
	cost.Total = r.optionalNumber("total")
	cost.TotalFromProvider = r.optionalBoolean("totalFromProvider")
	cost.ExtraJson = r.extraJSON()
	return cost
}

func toolFromPi(value jsonValue, where string) *aiv1.Tool {
	r := newReader(value, where, toolKeys)
	tool := &aiv1.Tool{Name: r.string("name"), Description: r.optionalString("description")}
	tool.ParametersJson = r.jsonText("parameters", true)
	tool.ConstrainedSampling = child(r, "constrainedSampling", constrainedSamplingFromPi)
	tool.ExtraJson = r.extraJSON()
	return tool
}

func toolsFromPi(value jsonValue, where string) []*aiv1.Tool {
	return list(value, where, toolFromPi)
}

func toolReferencesFromPi(value jsonValue, where string) []*aiv1.ToolReference {
	return list(value, where, func(value jsonValue, where string) *aiv1.ToolReference {
		r := newReader(value, where, toolReferenceKeys)
		reference := &aiv1.ToolReference{Name: r.string("name")}
		reference.ExtraJson = r.extraJSON()
		return reference
	})
}

// sectionsFromPi reads pi's `sections` object, in its order; a section set to null (removed) has
// no text.
func sectionsFromPi(value jsonValue, where string) []*aiv1.SystemSection {
	object, ok := value.(*jsonObject)
	if !ok {
		panic(failure(where, "expected an object, got %s", describe(value)))
	}
	sections := make([]*aiv1.SystemSection, len(object.keys))
	for i, name := range object.keys {
		section := &aiv1.SystemSection{Name: name}
		switch text := object.values[name].(type) {
		case jsonString:
			section.Text = proto.String(string(text))
		case jsonNull:
		default:
			panic(failure(join(where, name), "expected a string or null, got %s", describe(text)))
		}
		sections[i] = section
	}
	return sections
}

// constrainedSamplingFromPi reads pi's `false | {type: "json_schema", strict} | {type:
// "grammar", variants}`.
func constrainedSamplingFromPi(value jsonValue, where string) *aiv1.ConstrainedSampling {
	if value == jsonBool(false) {
		return &aiv1.ConstrainedSampling{Config: &aiv1.ConstrainedSampling_Off{Off: true}}
	}
	object, ok := value.(*jsonObject)
	if !ok {
		panic(failure(where, "expected false or an object, got %s", describe(value)))
	}
	switch kind := object.values["type"]; kind {
	case jsonString("json_schema"):
		r := newReader(value, where, jsonSchemaKeys)
		schema := &aiv1.JsonSchemaSampling{Strict: choice(r, "strict", strictness)}
		schema.ExtraJson = r.extraJSON()
		return &aiv1.ConstrainedSampling{Config: &aiv1.ConstrainedSampling_JsonSchema{JsonSchema: schema}}
	case jsonString("grammar"):
		r := newReader(value, where, grammarKeys)
		if !object.has("variants") {
			panic(failure(join(where, "variants"), "required, an object of grammars by format"))
		}
		variants := newReader(object.values["variants"], join(where, "variants"), variantsKeys)
		grammar := &aiv1.GrammarSampling{OpenaiLark: variants.optionalString("openai_lark")}
		grammar.OpenaiRegex = variants.optionalString("openai_regex")
		grammar.VariantsExtraJson = variants.extraJSON()
		grammar.ExtraJson = r.extraJSON()
		return &aiv1.ConstrainedSampling{Config: &aiv1.ConstrainedSampling_Grammar{Grammar: grammar}}
	default:
		panic(failure(join(where, "type"), "expected 'json_schema' or 'grammar', got %s", describe(kind)))
	}
}

func diagnosticsFromPi(value jsonValue, where string) []*aiv1.Diagnostic {
	return list(value, where, diagnosticFromPi)
}

func diagnosticFromPi(value jsonValue, where string) *aiv1.Diagnostic {
	r := newReader(value, where, diagnosticKeys)
	diagnostic := &aiv1.Diagnostic{Type: r.string("type"), Timestamp: r.integer("timestamp")}
	diagnostic.Error = child(r, "error", diagnosticErrorFromPi)
	diagnostic.DetailsJson = r.jsonText("details", true)
	diagnostic.ExtraJson = r.extraJSON()
	return diagnostic
}

func diagnosticErrorFromPi(value jsonValue, where string) *aiv1.DiagnosticError {
	r := newReader(value, where, diagnosticErrorKeys)
	diagnosticError := &aiv1.DiagnosticError{Name: r.optionalString("name"), Message: r.string("message")}
	diagnosticError.Stack = r.optionalString("stack")
	switch code := r.get("code").(type) {
	case jsonString:
		diagnosticError.Code = &aiv1.DiagnosticError_CodeText{CodeText: string(code)}
	case jsonNumber:
		if !exactInJavaScript(float64(code)) {
			panic(r.mismatch("code", "a string or a number (a safe integer when integral)"))
		}
		diagnosticError.Code = &aiv1.DiagnosticError_CodeNumber{CodeNumber: float64(code)}
	case nil:
	default:
		panic(r.mismatch("code", "a string or a number (a safe integer when integral)"))
	}
	diagnosticError.ExtraJson = r.extraJSON()
	return diagnosticError
}

// exactInJavaScript is whether JavaScript reads the number pi wrote exactly: a safe integer when
// integral (a double beyond 2^53 may stand for other integers than the one written).
func exactInJavaScript(number float64) bool {
	return number != math.Trunc(number) || math.Abs(number) < 1<<53
}

func deferredFromPi(value jsonValue, where string) *aiv1.DeferredHandle {
	r := newReader(value, where, deferredKeys)
	handle := &aiv1.DeferredHandle{Provider: r.string("provider"), ModelId: r.string("modelId")}
	handle.Api = r.string("api")
	handle.Id = r.string("id")
	handle.ExpiresAt = r.optionalInteger("expiresAt")
	handle.PollAfterMs = r.optionalInteger("pollAfterMs")
	handle.DataJson = r.jsonText("data", false)
	handle.ExtraJson = r.extraJSON()
	return handle
}

func nestedCallsFromPi(value jsonValue, where string) *aiv1.NestedToolCalls {
	r := newReader(value, where, nestedCallsKeys)
	nested := &aiv1.NestedToolCalls{Calls: items(r, "calls", nestedCallFromPi)}
	nested.Complete = r.boolean("complete")
	nested.ExtraJson = r.extraJSON()
	return nested
}

func nestedCallFromPi(value jsonValue, where string) *aiv1.NestedToolCall {
	r := newReader(value, where, nestedCallKeys)
	call := &aiv1.NestedToolCall{Id: r.string("id"), Name: r.string("name")}
	call.ArgumentsJson = r.jsonText("arguments", true)
	call.ArgumentsBytes = r.optionalInteger("argumentsBytes")
	call.Status = choice(r, "status", nestedCallStatuses)
	call.DurationMs = r.optionalInteger("durationMs")
	call.Error = r.optionalString("error")
	call.ExtraJson = r.extraJSON()
	return call
}
