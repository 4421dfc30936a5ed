package piproto

import (
	"encoding/base64"
	"fmt"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
)

// Writing pi-JSON: each writer builds the object's keys in the writer's order, then merges the
// extras the reader kept (withExtra).

// MessageToPi writes a message as its pi-JSON text.
func MessageToPi(message *aiv1.AgentMessage) ([]byte, error) {
	return writePi(message, messageToPi)
}

// AssistantToPi writes an assistant message as its pi-JSON text.
func AssistantToPi(message *aiv1.AssistantMessage) ([]byte, error) {
	return writePi(message, assistantToPi)
}

// ContextToPi writes a context as its pi-JSON text.
func ContextToPi(context *aiv1.AgentContext) ([]byte, error) {
	return writePi(context, contextToPi)
}

func messageToPi(message *aiv1.AgentMessage) *jsonObject {
	switch role := message.GetRole().(type) {
	case *aiv1.AgentMessage_System:
		return systemToPi(role.System)
	case *aiv1.AgentMessage_User:
		return userToPi(role.User)
	case *aiv1.AgentMessage_Assistant:
		return assistantToPi(role.Assistant)
	case *aiv1.AgentMessage_ToolResult:
		return toolResultToPi(role.ToolResult)
	case *aiv1.AgentMessage_Custom:
		out := newObject()
		out.set("role", jsonString(role.Custom.GetRole()))
		fields := storedObject(role.Custom.GetFieldsJson(), "CustomMessage.fields_json")
		for _, key := range fields.keys {
			out.set(key, fields.values[key])
		}
		return out
	}
	panic(failure("AgentMessage", "no role is set"))
}

func assistantToPi(message *aiv1.AssistantMessage) *jsonObject {
	out := newObject()
	out.set("role", jsonString("assistant"))
	content := make(jsonArray, len(message.GetContent()))
	for i, block := range message.GetContent() {
		content[i] = assistantBlockToPi(block)
	}
	out.set("content", content)
	putString(out, "api", message.Api)
	putString(out, "provider", message.Provider)
	putString(out, "model", message.Model)
	if message.GetUsage() != nil {
		out.set("usage", usageToPi(message.GetUsage()))
	}
	if word, ok := stopReasons.word(message.GetStopReason()); ok {
		out.set("stopReason", jsonString(word))
	}
	if message.GetDeferred() != nil {
		out.set("deferred", deferredToPi(message.GetDeferred()))
	}
	putInteger(out, "timestamp", message.Timestamp)
	putString(out, "providerThinkingLevel", message.ProviderThinkingLevel)
	putString(out, "responseId", message.ResponseId)
	putString(out, "responseModel", message.ResponseModel)
	putString(out, "rawStopReason", message.RawStopReason)
	putBoolean(out, "endTurn", message.EndTurn)
	putString(out, "errorMessage", message.ErrorMessage) // pi sets it once the call has failed
	if len(message.GetDiagnostics()) > 0 {
		diagnostics := make(jsonArray, len(message.GetDiagnostics()))
		for i, diagnostic := range message.GetDiagnostics() {
			diagnostics[i] = diagnosticToPi(diagnostic)
		}
		out.set("diagnostics", diagnostics)
	}
	putInteger(out, "durationMs", message.DurationMs)
	if word, ok := thinkingLevels.word(message.GetThinkingLevel()); ok {
		out.set("thinkingLevel", jsonString(word))
	}
	return withExtra(out, message.GetExtraJson(), "AssistantMessage", assistantKeys)
}

func contextToPi(context *aiv1.AgentContext) *jsonObject {
	out := newObject()
	putString(out, "systemPrompt", context.SystemPrompt)
	messages := make(jsonArray, len(context.GetMessages()))
	for i, message := range context.GetMessages() {
		messages[i] = messageToPi(message)
	}
	out.set("messages", messages)
	if len(context.GetTools()) > 0 {
		out.set("tools", toolsToPi(context.GetTools()))
	}
	return withExtra(out, context.GetExtraJson(), "AgentContext", contextKeys)
}

func systemToPi(message *aiv1.SystemMessage) *jsonObject {
	out := newObject()
	out.set("role", jsonString("system"))
	if message.GetStringContent() && len(message.GetContent()) == 1 {
		out.set("content", jsonString(message.GetContent()[0].GetText()))
	} else {
		content := make(jsonArray, len(message.GetContent()))
		for i, block := range message.GetContent() {
			content[i] = textToPi(block)
		}
		out.set("content", content)
	}
	if sections := sectionsToPi(message.GetSections()); sections != nil {
		out.set("sections", sections)
	}
	if len(message.GetToolsAdded()) > 0 {
		out.set("toolsAdded", toolsToPi(message.GetToolsAdded()))
	}
	if len(message.GetToolsRemoved()) > 0 {
		removed := make(jsonArray, len(message.GetToolsRemoved()))
		for i, reference := range message.GetToolsRemoved() {
			object := newObject()
			object.set("name", jsonString(reference.GetName()))
			removed[i] = withExtra(object, reference.GetExtraJson(), "ToolReference", toolReferenceKeys)
		}
		out.set("toolsRemoved", removed)
	}
	putInteger(out, "timestamp", message.Timestamp)
	return withExtra(out, message.GetExtraJson(), "SystemMessage", systemKeys)
}

func userToPi(message *aiv1.UserMessage) *jsonObject {
	out := newObject()
	out.set("role", jsonString("user"))
	out.set("content", userContentToPi(message.GetContent(), message.GetStringContent()))
	putInteger(out, "timestamp", message.Timestamp)
	return withExtra(out, message.GetExtraJson(), "UserMessage", userKeys)
}

// userContentToPi writes a user's content as pi does: one string where it was one, else its
// blocks.
func userContentToPi(content []*aiv1.UserContent, stringContent bool) jsonValue {
	if stringContent && len(content) == 1 && content[0].GetText() != nil {
		return jsonString(content[0].GetText().GetText())
	}
	blocks := make(jsonArray, len(content))
	for i, block := range content {
		blocks[i] = mediaToPi(block.GetText(), block.GetImage())
	}
	return blocks
}

func toolResultToPi(message *aiv1.ToolResultMessage) *jsonObject {
	out := newObject()
	out.set("role", jsonString("toolResult"))
	out.set("toolCallId", jsonString(message.GetToolCallId()))
	putString(out, "toolName", message.ToolName)
	content := make(jsonArray, len(message.GetContent()))
	for i, block := range message.GetContent() {
		content[i] = mediaToPi(block.GetText(), block.GetImage())
	}
	out.set("content", content)
	putJSON(out, "details", message.DetailsJson, "ToolResultMessage.details_json")
	if message.GetUsage() != nil {
		out.set("usage", usageToPi(message.GetUsage()))
	}
	if message.GetNestedCalls() != nil {
		out.set("nestedCalls", nestedCallsToPi(message.GetNestedCalls()))
	}
	putBoolean(out, "isError", message.IsError)
	putInteger(out, "durationMs", message.DurationMs)
	putInteger(out, "timestamp", message.Timestamp)
	return withExtra(out, message.GetExtraJson(), "ToolResultMessage", toolResultKeys)
}

func assistantBlockToPi(content *aiv1.AssistantContent) *jsonObject {
	switch block := content.GetBlock().(type) {
	case *aiv1.AssistantContent_Text:
		return textToPi(block.Text)
	case *aiv1.AssistantContent_Thinking:
		return thinkingToPi(block.Thinking)
	case *aiv1.AssistantContent_ToolCall:
		return toolCallToPi(block.ToolCall)
	}
	panic(failure("AssistantContent", "no block is set"))
}

func thinkingToPi(thinking *aiv1.ThinkingContent) *jsonObject {
	out := newObject()
	out.set("type", jsonString("thinking"))
	out.set("thinking", jsonString(thinking.GetThinking()))
	putString(out, "thinkingSignature", thinking.ThinkingSignature)
	putBoolean(out, "redacted", thinking.Redacted)
	return withExtra(out, thinking.GetExtraJson(), "ThinkingContent", thinkingKeys)
}

func toolCallToPi(call *aiv1.ToolCall) *jsonObject {
	out := newObject()
	out.set("type", jsonString("toolCall"))
	out.set("id", jsonString(call.GetId()))
	out.set("name", jsonString(call.GetName()))
	putJSON(out, "arguments", call.ArgumentsJson, "ToolCall.arguments_json")
	putString(out, "rawArguments", call.RawArguments)
	putString(out, "thoughtSignature", call.ThoughtSignature)
	putString(out, "namespace", call.Namespace)
	putString(out, "argumentsError", call.ArgumentsError)
	return withExtra(out, call.GetExtraJson(), "ToolCall", toolCallKeys)
}

// mediaToPi writes the block of a user's or a tool result's content that is set: text or image.
func mediaToPi(text *aiv1.TextContent, image *aiv1.ImageContent) *jsonObject {
	switch {
	case text != nil:
		return textToPi(text)
	case image != nil:
		out := newObject()
		out.set("type", jsonString("image"))
		out.set("data", jsonString(base64.StdEncoding.EncodeToString(image.GetData())))
		out.set("mimeType", jsonString(image.GetMimeType()))
		return withExtra(out, image.GetExtraJson(), "ImageContent", imageKeys)
	}
	panic(failure("content", "no block is set"))
}

func textToPi(text *aiv1.TextContent) *jsonObject {
	out := newObject()
	out.set("type", jsonString("text"))
	out.set("text", jsonString(text.GetText()))
	putString(out, "textSignature", text.TextSignature)
	return withExtra(out, text.GetExtraJson(), "TextContent", textKeys)
}

func usageToPi(usage *aiv1.Usage) *jsonObject {
	out := newObject()
	putInteger(out, "input", usage.Input)
	putInteger(out, "output", usage.Output)
	putInteger(out, "cacheRead", usage.CacheRead)
	putInteger(out, "cacheWrite", usage.CacheWrite)
	putInteger(out, "reasoning", usage.Reasoning)
	putInteger(out, "totalTokens", usage.TotalTokens)
	if usage.GetCost() != nil {
		out.set("cost", costToPi(usage.GetCost()))
	}
	putInteger(out, "cacheWrite1h", usage.CacheWrite_1H)
	return withExtra(out, usage.GetExtraJson(), "Usage", usageKeys)
}

func costToPi(cost *aiv1.Cost) *jsonObject {
	out := newObject()
	for _, amount := range []struct {
		key   string
		value *float64
	}{
		{"input", cost.Input}, {"output", cost.Output}, {"cacheRead", cost.CacheRead},
		{"cacheWrite", cost.CacheWrite}, {"total", cost.Total},
	} {
		if amount.value != nil {
			out.set(amount.key, fromDouble(*amount.value, "Cost."+amount.key))
		}
	}
	putBoolean(out, "totalFromProvider", cost.TotalFromProvider)
	return withExtra(out, cost.GetExtraJson(), "Cost", costKeys)
}

func toolsToPi(tools []*aiv1.Tool) jsonArray {
	out := make(jsonArray, len(tools))
	for i, tool := range tools {
		out[i] = toolToPi(tool)
	}
	return out
}

func toolToPi(tool *aiv1.Tool) *jsonObject {
	out := newObject()
	out.set("name", jsonString(tool.GetName()))
	putString(out, "description", tool.Description)
	putJSON(out, "parameters", tool.ParametersJson, "Tool.parameters_json")
	if tool.GetConstrainedSampling() != nil {
		out.set("constrainedSampling", constrainedSamplingToPi(tool.GetConstrainedSampling()))
	}
	return withExtra(out, tool.GetExtraJson(), "Tool", toolKeys)
}

// sectionsToPi is pi's `sections` object; nil when there are none, which the writer leaves out.
func sectionsToPi(sections []*aiv1.SystemSection) *jsonObject {
	if len(sections) == 0 {
		return nil
	}
	out := newObject()
	for i, section := range sections {
		if out.has(section.GetName()) {
			where := fmt.Sprintf("SystemMessage.sections[%d].name", i)
			panic(failure(where, "%q is named twice, and pi's sections are an object", section.GetName()))
		}
		if section.Text == nil {
			out.set(section.GetName(), jsonNull{})
		} else {
			out.set(section.GetName(), jsonString(*section.Text))
		}
	}
	return out
}

func constrainedSamplingToPi(sampling *aiv1.ConstrainedSampling) jsonValue {
	switch config := sampling.GetConfig().(type) {
	case *aiv1.ConstrainedSampling_Off:
		return jsonBool(false)
	case *aiv1.ConstrainedSampling_JsonSchema:
		word, ok := strictness.word(config.JsonSchema.GetStrict())
		if !ok {
			panic(failure("JsonSchemaSampling.strict", "must be one of %s, got %v", strictness, config.JsonSchema.GetStrict()))
		}
		out := newObject()
		out.set("type", jsonString("json_schema"))
		out.set("strict", jsonString(word))
		return withExtra(out, config.JsonSchema.GetExtraJson(), "JsonSchemaSampling", jsonSchemaKeys)
	case *aiv1.ConstrainedSampling_Grammar:
		grammar := config.Grammar
		variants := newObject()
		putString(variants, "openai_lark", grammar.OpenaiLark)
		putString(variants, "openai_regex", grammar.OpenaiRegex)
		out := newObject()
		out.set("type", jsonString("grammar"))
		out.set("variants", withExtra(variants, grammar.GetVariantsExtraJson(), "GrammarSampling.variants", variantsKeys))
		return withExtra(out, grammar.GetExtraJson(), "GrammarSampling", grammarKeys)
	}
	panic(failure("ConstrainedSampling", "no choice is set"))
}

func diagnosticToPi(diagnostic *aiv1.Diagnostic) *jsonObject {
	out := newObject()
	out.set("type", jsonString(diagnostic.GetType()))
	out.set("timestamp", fromInteger(diagnostic.GetTimestamp()))
	if diagnosticError := diagnostic.GetError(); diagnosticError != nil {
		errorOut := newObject()
		putString(errorOut, "name", diagnosticError.Name)
		errorOut.set("message", jsonString(diagnosticError.GetMessage()))
		putString(errorOut, "stack", diagnosticError.Stack)
		switch code := diagnosticError.GetCode().(type) {
		case *aiv1.DiagnosticError_CodeText:
			errorOut.set("code", jsonString(code.CodeText))
		case *aiv1.DiagnosticError_CodeNumber:
			errorOut.set("code", fromDouble(code.CodeNumber, "DiagnosticError.code_number"))
		}
		out.set("error", withExtra(errorOut, diagnosticError.GetExtraJson(), "DiagnosticError", diagnosticErrorKeys))
	}
	putJSON(out, "details", diagnostic.DetailsJson, "Diagnostic.details_json")
	return withExtra(out, diagnostic.GetExtraJson(), "Diagnostic", diagnosticKeys)
}

func deferredToPi(handle *aiv1.DeferredHandle) *jsonObject {
	out := newObject()
	out.set("provider", jsonString(handle.GetProvider()))
	out.set("modelId", jsonString(handle.GetModelId()))
	out.set("api", jsonString(handle.GetApi()))
	out.set("id", jsonString(handle.GetId()))
	putInteger(out, "expiresAt", handle.ExpiresAt)
	putInteger(out, "pollAfterMs", handle.PollAfterMs)
	putJSON(out, "data", handle.DataJson, "DeferredHandle.data_json")
	return withExtra(out, handle.GetExtraJson(), "DeferredHandle", deferredKeys)
}

func nestedCallsToPi(nested *aiv1.NestedToolCalls) *jsonObject {
	calls := make(jsonArray, len(nested.GetCalls()))
	for i, call := range nested.GetCalls() {
		calls[i] = nestedCallToPi(call)
	}
	out := newObject()
	out.set("calls", calls)
	out.set("complete", jsonBool(nested.GetComplete()))
	return withExtra(out, nested.GetExtraJson(), "NestedToolCalls", nestedCallsKeys)
}

func nestedCallToPi(call *aiv1.NestedToolCall) *jsonObject {
	out := newObject()
	out.set("id", jsonString(call.GetId()))
	out.set("name", jsonString(call.GetName()))
	putJSON(out, "arguments", call.ArgumentsJson, "NestedToolCall.arguments_json")
	putInteger(out, "argumentsBytes", call.ArgumentsBytes)
	word, ok := nestedCallStatuses.word(call.GetStatus())
	if !ok {
		panic(failure("NestedToolCall.status", "must be one of %s, got %v", nestedCallStatuses, call.GetStatus()))
	}
	out.set("status", jsonString(word))
	putInteger(out, "durationMs", call.DurationMs)
	putString(out, "error", call.Error)
	return withExtra(out, call.GetExtraJson(), "NestedToolCall", nestedCallKeys)
}
