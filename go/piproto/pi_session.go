package piproto

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	aiv1 "github.com/pi-proto/pi-proto/go/gen/pi/ai/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// The lines of a pi session file, typed: a message entry, the header, and every entry type
// pi-coding-agent defines (a model change, a compaction, a label, ...), each line's id, parentId
// and timestamp on its TranscriptEntry so the session's tree can be walked without JSON. An entry
// of a type without a body here keeps its other keys in SessionEntry.fields_json. Each type's
// keys are written in the order pi's session manager writes them, which the schema gives as the
// modelled_keys of the body's extra_json. Everything the codec knows of session entries is in
// this file.
//
// A whole file is read by ReadSession, one entry a line: a line that is not one JSON entry (a
// blank line, text that is not JSON, JSON that is not an object, two entries run together) is
// kept byte for byte as an unparsed_line, named in a SessionWarning, and WriteSession writes it
// back as it was. pi's own loader skips such a line; refusing the file would lose the rest of it.

// MaxSessionLineBytes is the most bytes one line of a session file may take in [ReadSession].
const MaxSessionLineBytes = 64 << 20

// EntryFromPi reads one line of a pi session file, or one bare pi-JSON message.
func EntryFromPi(text []byte) (*aiv1.TranscriptEntry, error) {
	return readPi(text, entryFromPi)
}

// EntryToPi writes a transcript entry as its line: a session file's entry if it came from one,
// an unparsed line as it was read.
func EntryToPi(entry *aiv1.TranscriptEntry) ([]byte, error) {
	if unparsed, ok := entry.GetEntry().(*aiv1.TranscriptEntry_UnparsedLine); ok {
		if strings.ContainsRune(unparsed.UnparsedLine, '\n') {
			return nil, failure("TranscriptEntry.unparsed_line", "holds a newline, so it would be read back as two lines")
		}
		return []byte(unparsed.UnparsedLine), nil
	}
	return writePi(entry, entryToPi)
}

// SessionWarning names a line of a session file that is not one JSON entry, which [ReadSession]
// reads as an unparsed_line.
type SessionWarning struct {
	// Line is the line's number, counted from 1.
	Line int
	// Message says why the line is not one JSON entry.
	Message string
}

// ReadSession reads a pi session file, one entry a line: the entry of line n is entries[n-1]. A
// line that is not one JSON entry is an unparsed_line, kept byte for byte, and named in a
// SessionWarning. An error names the line it is on ("line 12: message.content[0].type: ...").
func ReadSession(file io.Reader) ([]*aiv1.TranscriptEntry, []SessionWarning, error) {
	lines := bufio.NewScanner(file)
	lines.Buffer(nil, MaxSessionLineBytes+1) // +1: the newline
	lines.Split(scanLines)
	var entries []*aiv1.TranscriptEntry
	var warnings []SessionWarning
	number := 0
	for lines.Scan() {
		number++
		entry, unparsed, err := sessionLineFromPi(lines.Bytes())
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", number, err)
		}
		if unparsed != "" {
			message := "not one JSON entry (" + unparsed + "); kept as it is"
			warnings = append(warnings, SessionWarning{Line: number, Message: message})
		}
		entries = append(entries, entry)
	}
	if err := lines.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, nil, fmt.Errorf("line %d: longer than %d bytes", number+1, MaxSessionLineBytes)
	} else if err != nil {
		return nil, nil, err
	}
	return entries, warnings, nil
}

// scanLines is bufio.ScanLines without its dropping of a carriage return before the newline: an
// unparsed line keeps every byte.
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	if end := bytes.IndexByte(data, '\n'); end >= 0 {
		return end + 1, data[:end], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil // a last line without its newline
	}
	return 0, nil, nil
}

// sessionLineFromPi reads one line, without its newline: its entry, and why it is not one JSON
// entry ("" when it is).
func sessionLineFromPi(line []byte) (*aiv1.TranscriptEntry, string, error) {
	value, err := parseJSON(line, true)
	var unparsed string
	switch _, isObject := value.(*jsonObject); {
	case err != nil && len(bytes.Trim(line, " \t\r")) == 0:
		unparsed = "a blank line"
	case err != nil:
		unparsed = "not JSON: " + err.Error()
	case !isObject:
		unparsed = "JSON that is not an object: " + typeName(value)
	default:
		entry, err := entryOf(value)
		return entry, "", err
	}
	if !utf8.Valid(line) { // a protobuf string holds UTF-8 only
		return nil, "", errors.New("not UTF-8 text")
	}
	return &aiv1.TranscriptEntry{Entry: &aiv1.TranscriptEntry_UnparsedLine{UnparsedLine: string(line)}}, unparsed, nil
}

func entryOf(value jsonValue) (entry *aiv1.TranscriptEntry, err error) {
	defer caught(&err)
	return entryFromPi(value, ""), nil
}

// WriteSession writes entries as a pi session file: each entry's line and a newline, as pi
// writes them, and an unparsed line as it was read.
func WriteSession(file io.Writer, entries []*aiv1.TranscriptEntry) error {
	out := bufio.NewWriter(file)
	for i, entry := range entries {
		line, err := EntryToPi(entry)
		if err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		if _, err := out.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return out.Flush()
}

// The keys of each kind of line, in the order pi writes them, as the schema states them.
var (
	messageEntryKeys        = modelledKeys(&aiv1.TranscriptEntry{}, "session_json")
	headerKeys              = modelledKeys(&aiv1.SessionHeader{}, "extra_json")
	thinkingLevelChangeKeys = modelledKeys(&aiv1.ThinkingLevelChange{}, "extra_json")
	modelChangeKeys         = modelledKeys(&aiv1.ModelChange{}, "extra_json")
	usageRecordKeys         = modelledKeys(&aiv1.UsageRecord{}, "extra_json")
	compactionKeys          = modelledKeys(&aiv1.Compaction{}, "extra_json")
	branchSummaryKeys       = modelledKeys(&aiv1.BranchSummary{}, "extra_json")
	customKeys              = modelledKeys(&aiv1.CustomEntry{}, "extra_json")
	customMessageKeys       = modelledKeys(&aiv1.CustomMessageEntry{}, "extra_json")
	labelKeys               = modelledKeys(&aiv1.Label{}, "extra_json")
	sessionInfoKeys         = modelledKeys(&aiv1.SessionInfo{}, "extra_json")
	contextEditKeys         = modelledKeys(&aiv1.ContextEdit{}, "extra_json")
	replacementKeys         = modelledKeys(&aiv1.ContextReplacement{}, "extra_json")
	// What a line of a type without a body is written with; its other keys follow.
	untypedKeys = keysOf("type", "id", "parentId", "timestamp")
)

// --- reading -------------------------------------------------------------------------------------

// entryBody is how a line of a type with a body reads: its keys, and the reader of the body,
// which also sets the body's extra_json (so it reads after the line's place).
type entryBody struct {
	keys keyOrder
	read func(*objectReader) *aiv1.SessionEntry
}

// entryBodies is the typed entry types by pi's type name.
var entryBodies = map[string]entryBody{
	"session":               {headerKeys, headerFromPi},
	"thinking_level_change": {thinkingLevelChangeKeys, thinkingLevelChangeFromPi},
	"model_change":          {modelChangeKeys, modelChangeFromPi},
	"usage":                 {usageRecordKeys, usageRecordFromPi},
	"compaction":            {compactionKeys, compactionFromPi},
	"branch_summary":        {branchSummaryKeys, branchSummaryFromPi},
	"custom":                {customKeys, customFromPi},
	"custom_message":        {customMessageKeys, customMessageFromPi},
	"label":                 {labelKeys, labelFromPi},
	"session_info":          {sessionInfoKeys, sessionInfoFromPi},
	"context_edit":          {contextEditKeys, contextEditFromPi},
}

// untypedBody reads a line of any other type: no body, its keys but its place in fields_json.
var untypedBody = entryBody{untypedKeys, func(r *objectReader) *aiv1.SessionEntry {
	return &aiv1.SessionEntry{FieldsJson: r.extraJSON()}
}}

func entryFromPi(value jsonValue, where string) *aiv1.TranscriptEntry {
	object, ok := value.(*jsonObject)
	if !ok {
		panic(failure(where, "expected an object, got %s", typeName(value)))
	}
	if object.has("role") {
		return &aiv1.TranscriptEntry{Entry: &aiv1.TranscriptEntry_Message{Message: messageFromPi(object, where)}}
	}
	kind, isString := object.values["type"].(jsonString)
	if kind == "message" && object.has("message") {
		return messageEntryFromPi(object, where)
	}
	if !isString || kind == "" {
		panic(failure(where, "neither a message (no 'role') nor a session entry (no 'type')"))
	}
	body, typed := entryBodies[string(kind)]
	if !typed {
		body = untypedBody
	}
	r := newReader(object, where, body.keys)
	entry := placed(r)
	session := body.read(r)
	session.Type = string(kind)
	entry.Entry = &aiv1.TranscriptEntry_SessionEntry{SessionEntry: session}
	return entry
}

// messageEntryFromPi reads a `message` line: its message (read first, so its errors come first),
// its place, and the keys left in session_json, "{}" when there are none and no place either, to
// tell the line from a bare message.
func messageEntryFromPi(object *jsonObject, where string) *aiv1.TranscriptEntry {
	message := messageFromPi(object.values["message"], join(where, "message"))
	r := newReader(object, where, messageEntryKeys)
	entry := placed(r)
	entry.Entry = &aiv1.TranscriptEntry_Message{Message: message}
	entry.SessionJson = r.extraJSON()
	if entry.SessionJson == "" && !isPlaced(entry) {
		entry.SessionJson = "{}"
	}
	return entry
}

// placed is a TranscriptEntry with the line's id, parent and timestamp, each where its type has
// it (a header has no parentId: one there is an extra).
func placed(r *objectReader) *aiv1.TranscriptEntry {
	r.string("type")
	entry := &aiv1.TranscriptEntry{}
	if r.order.known["parentId"] {
		switch r.get("parentId").(type) {
		case nil:
		case jsonNull:
			entry.Parent = &aiv1.TranscriptEntry_Root{Root: structpb.NullValue_NULL_VALUE}
		default:
			entry.Parent = &aiv1.TranscriptEntry_ParentId{ParentId: r.string("parentId")}
		}
	}
	if r.order.known["id"] {
		entry.Id = r.optionalString("id")
	}
	if r.order.known["timestamp"] {
		entry.Timestamp = r.optionalString("timestamp")
	}
	return entry
}

func isPlaced(entry *aiv1.TranscriptEntry) bool {
	return entry.Id != nil || entry.GetParent() != nil || entry.Timestamp != nil
}

// textOrEmpty reads a value kept as JSON text in a field without presence: "" when absent.
func textOrEmpty(r *objectReader, key string) string {
	if text := r.jsonText(key, false); text != nil {
		return *text
	}
	return ""
}

func headerFromPi(r *objectReader) *aiv1.SessionEntry {
	header := &aiv1.SessionHeader{Version: r.optionalInteger("version")}
	header.Cwd = r.optionalString("cwd")
	header.ParentSession = r.optionalString("parentSession")
	header.ExtraJson = r.extraJSON()
	return &aiv1.SessionEntry{Body: &aiv1.SessionEntry_Header{Header: header}}
}

func thinkingLevelChangeFromPi(r *objectReader) *aiv1.SessionEntry {
	change := &aiv1.ThinkingLevelChange{ThinkingLevel: r.optionalString("thinkingLevel")}
	change.ExtraJson = r.extraJSON()
	return &aiv1.SessionEntry{Body: &aiv1.SessionEntry_ThinkingLevelChange{ThinkingLevelChange: change}}
}

func modelChangeFromPi(r *objectReader) *aiv1.SessionEntry {
	change := &aiv1.ModelChange{Provider: r.optionalString("provider")}
	change.ModelId = r.optionalString("modelId")
	change.ExtraJson = r.extraJSON()
	return &aiv1.SessionEntry{Body: &aiv1.SessionEntry_ModelChange{ModelChange: change}}
}

func usageRecordFromPi(r *objectReader) *aiv1.SessionEntry {
	record := &aiv1.UsageRecord{Kind: r.optionalString("kind")}
	record.Provider = r.optionalString("provider")
	record.Model = r.optionalString("model")
	record.Usage = child(r, "usage", usageFromPi)
	record.Note = r.optionalString("note")
	record.ExtraJson = r.extraJSON()
	return &aiv1.SessionEntry{Body: &aiv1.SessionEntry_Usage{Usage: record}}
}

func compactionFromPi(r *objectReader) *aiv1.SessionEntry {
	compaction := &aiv1.Compaction{Summary: r.optionalString("summary")}
	compaction.FirstKeptEntryId = r.optionalString("firstKeptEntryId")
	compaction.TokensBefore = r.optionalInteger("tokensBefore")
	compaction.DetailsJson = textOrEmpty(r, "details")
	compaction.Usage = child(r, "usage", usageFromPi)
	compaction.FromHook = r.optionalBoolean("fromHook")
	compaction.SystemMessage = child(r, "systemMessage", systemFromPi)
	compaction.ExtraJson = r.extraJSON()
	return &aiv1.SessionEntry{Body: &aiv1.SessionEntry_Compaction{Compaction: compaction}}
}

func branchSummaryFromPi(r *objectReader) *aiv1.SessionEntry {
	summary := &aiv1.BranchSummary{FromId: r.optionalString("fromId")}
	summary.Summary = r.optionalString("summary")
	summary.DetailsJson = textOrEmpty(r, "details")
	summary.Usage = child(r, "usage", usageFromPi)
	summary.FromHook = r.optionalBoolean("fromHook")
	summary.ExtraJson = r.extraJSON()
	return &aiv1.SessionEntry{Body: &aiv1.SessionEntry_BranchSummary{BranchSummary: summary}}
}

func customFromPi(r *objectReader) *aiv1.SessionEntry {
	custom := &aiv1.CustomEntry{CustomType: r.optionalString("customType")}
	custom.DataJson = textOrEmpty(r, "data")
	custom.ExtraJson = r.extraJSON()
	return &aiv1.SessionEntry{Body: &aiv1.SessionEntry_Custom{Custom: custom}}
}

func customMessageFromPi(r *objectReader) *aiv1.SessionEntry {
	custom := &aiv1.CustomMessageEntry{}
	if r.object.has("content") {
		custom.Content, custom.StringContent = userContent(r)
	}
	custom.CustomType = r.optionalString("customType")
	custom.Display = r.optionalBoolean("display")
	custom.DetailsJson = textOrEmpty(r, "details")
	custom.ExtraJson = r.extraJSON()
	return &aiv1.SessionEntry{Body: &aiv1.SessionEntry_CustomMessage{CustomMessage: custom}}
}

func labelFromPi(r *objectReader) *aiv1.SessionEntry {
	label := &aiv1.Label{TargetId: r.optionalString("targetId"), Label: r.optionalString("label")}
	label.ExtraJson = r.extraJSON()
	return &aiv1.SessionEntry{Body: &aiv1.SessionEntry_Label{Label: label}}
}

func sessionInfoFromPi(r *objectReader) *aiv1.SessionEntry {
	info := &aiv1.SessionInfo{Name: r.optionalString("name")}
	info.ExtraJson = r.extraJSON()
	return &aiv1.SessionEntry{Body: &aiv1.SessionEntry_SessionInfo{SessionInfo: info}}
}

// contextEditFromPi reads a context edit; pi's "replacement":null (the target left out of the
// context) is no replacement.
func contextEditFromPi(r *objectReader) *aiv1.SessionEntry {
	edit := &aiv1.ContextEdit{TargetId: r.optionalString("targetId")}
	if _, isNull := r.get("replacement").(jsonNull); !isNull {
		edit.Replacement = child(r, "replacement", replacementFromPi)
	}
	edit.ExtraJson = r.extraJSON()
	return &aiv1.SessionEntry{Body: &aiv1.SessionEntry_ContextEdit{ContextEdit: edit}}
}

func replacementFromPi(value jsonValue, where string) *aiv1.ContextReplacement {
	r := newReader(value, where, replacementKeys)
	replacement := &aiv1.ContextReplacement{}
	if content, ok := r.get("content").(jsonString); ok {
		text := &aiv1.TextContent{Text: string(content)}
		replacement.Content = []*aiv1.ContentBlock{{Block: &aiv1.ContentBlock_Text{Text: text}}}
		replacement.StringContent = true
	} else {
		replacement.Content = items(r, "content", contentBlock)
	}
	replacement.ExtraJson = r.extraJSON()
	return replacement
}

// contentBlock reads a block of any role's content: what a context edit may put in place of a
// message's.
func contentBlock(value jsonValue, where string) *aiv1.ContentBlock {
	if object, ok := value.(*jsonObject); ok && object.values["type"] == jsonString("image") {
		return &aiv1.ContentBlock{Block: &aiv1.ContentBlock_Image{Image: mediaBlock(value, where).image}}
	}
	switch block := assistantBlock(value, where); {
	case block.GetText() != nil:
		return &aiv1.ContentBlock{Block: &aiv1.ContentBlock_Text{Text: block.GetText()}}
	case block.GetThinking() != nil:
		return &aiv1.ContentBlock{Block: &aiv1.ContentBlock_Thinking{Thinking: block.GetThinking()}}
	default:
		return &aiv1.ContentBlock{Block: &aiv1.ContentBlock_ToolCall{ToolCall: block.GetToolCall()}}
	}
}

// --- writing -------------------------------------------------------------------------------------

func entryToPi(entry *aiv1.TranscriptEntry) *jsonObject {
	switch member := entry.GetEntry().(type) {
	case *aiv1.TranscriptEntry_SessionEntry:
		return sessionEntryToPi(entry, member.SessionEntry)
	case *aiv1.TranscriptEntry_Message:
		message := messageToPi(member.Message)
		if !isPlaced(entry) && entry.GetSessionJson() == "" {
			return message // a bare message
		}
		out := placedToPi("message", entry)
		out.set("message", message)
		return withKept(out, entry.GetSessionJson(), "TranscriptEntry.session_json", messageEntryKeys)
	case *aiv1.TranscriptEntry_UnparsedLine: // EntryToPi writes it as it is
		panic(failure("TranscriptEntry.unparsed_line", "a line that is not one JSON entry has no object to write"))
	}
	panic(failure("TranscriptEntry", "no entry is set"))
}

// sessionEntryToPi writes the line of an entry without a message: its body's keys in the order
// the schema gives for the body, or for an entry without a body, its fields_json after its place.
func sessionEntryToPi(entry *aiv1.TranscriptEntry, session *aiv1.SessionEntry) *jsonObject {
	out := placedToPi(session.GetType(), entry)
	switch body := session.GetBody().(type) {
	case *aiv1.SessionEntry_Header:
		return headerToPi(out, body.Header)
	case *aiv1.SessionEntry_ThinkingLevelChange:
		return thinkingLevelChangeToPi(out, body.ThinkingLevelChange)
	case *aiv1.SessionEntry_ModelChange:
		return modelChangeToPi(out, body.ModelChange)
	case *aiv1.SessionEntry_Usage:
		return usageRecordToPi(out, body.Usage)
	case *aiv1.SessionEntry_Compaction:
		return compactionToPi(out, body.Compaction)
	case *aiv1.SessionEntry_BranchSummary:
		return branchSummaryToPi(out, body.BranchSummary)
	case *aiv1.SessionEntry_Custom:
		return customToPi(out, body.Custom)
	case *aiv1.SessionEntry_CustomMessage:
		return customMessageToPi(out, body.CustomMessage)
	case *aiv1.SessionEntry_Label:
		return labelToPi(out, body.Label)
	case *aiv1.SessionEntry_SessionInfo:
		return sessionInfoToPi(out, body.SessionInfo)
	case *aiv1.SessionEntry_ContextEdit:
		return contextEditToPi(out, body.ContextEdit)
	}
	return withKept(out, session.GetFieldsJson(), "SessionEntry.fields_json", untypedKeys)
}

// placedToPi is the start of a line: its type, id, parent and timestamp, those the entry has.
func placedToPi(kind string, entry *aiv1.TranscriptEntry) *jsonObject {
	out := newObject()
	out.set("type", jsonString(kind))
	putString(out, "id", entry.Id)
	switch parent := entry.GetParent().(type) {
	case *aiv1.TranscriptEntry_ParentId:
		out.set("parentId", jsonString(parent.ParentId))
	case *aiv1.TranscriptEntry_Root:
		out.set("parentId", jsonNull{})
	}
	putString(out, "timestamp", entry.Timestamp)
	return out
}

// putText writes a value held as JSON text in a field without presence: empty leaves the key out.
func putText(out *jsonObject, key, text, where string) {
	if text != "" {
		out.set(key, storedJSON(text, where))
	}
}

func headerToPi(out *jsonObject, header *aiv1.SessionHeader) *jsonObject {
	putInteger(out, "version", header.Version)
	putString(out, "cwd", header.Cwd)
	putString(out, "parentSession", header.ParentSession)
	return withExtra(out, header.GetExtraJson(), "SessionHeader", headerKeys)
}

func thinkingLevelChangeToPi(out *jsonObject, change *aiv1.ThinkingLevelChange) *jsonObject {
	putString(out, "thinkingLevel", change.ThinkingLevel)
	return withExtra(out, change.GetExtraJson(), "ThinkingLevelChange", thinkingLevelChangeKeys)
}

func modelChangeToPi(out *jsonObject, change *aiv1.ModelChange) *jsonObject {
	putString(out, "provider", change.Provider)
	putString(out, "modelId", change.ModelId)
	return withExtra(out, change.GetExtraJson(), "ModelChange", modelChangeKeys)
}

func usageRecordToPi(out *jsonObject, record *aiv1.UsageRecord) *jsonObject {
	putString(out, "kind", record.Kind)
	putString(out, "provider", record.Provider)
	putString(out, "model", record.Model)
	if record.GetUsage() != nil {
		out.set("usage", usageToPi(record.GetUsage()))
	}
	putString(out, "note", record.Note)
	return withExtra(out, record.GetExtraJson(), "UsageRecord", usageRecordKeys)
}

func compactionToPi(out *jsonObject, compaction *aiv1.Compaction) *jsonObject {
	putString(out, "summary", compaction.Summary)
	putString(out, "firstKeptEntryId", compaction.FirstKeptEntryId)
	putInteger(out, "tokensBefore", compaction.TokensBefore)
	putText(out, "details", compaction.GetDetailsJson(), "Compaction.details_json")
	if compaction.GetUsage() != nil {
		out.set("usage", usageToPi(compaction.GetUsage()))
	}
	putBoolean(out, "fromHook", compaction.FromHook)
	if compaction.GetSystemMessage() != nil {
		out.set("systemMessage", systemToPi(compaction.GetSystemMessage()))
	}
	return withExtra(out, compaction.GetExtraJson(), "Compaction", compactionKeys)
}

func branchSummaryToPi(out *jsonObject, summary *aiv1.BranchSummary) *jsonObject {
	putString(out, "fromId", summary.FromId)
	putString(out, "summary", summary.Summary)
	putText(out, "details", summary.GetDetailsJson(), "BranchSummary.details_json")
	if summary.GetUsage() != nil {
		out.set("usage", usageToPi(summary.GetUsage()))
	}
	putBoolean(out, "fromHook", summary.FromHook)
	return withExtra(out, summary.GetExtraJson(), "BranchSummary", branchSummaryKeys)
}

func customToPi(out *jsonObject, custom *aiv1.CustomEntry) *jsonObject {
	putString(out, "customType", custom.CustomType)
	putText(out, "data", custom.GetDataJson(), "CustomEntry.data_json")
	return withExtra(out, custom.GetExtraJson(), "CustomEntry", customKeys)
}

func customMessageToPi(out *jsonObject, custom *aiv1.CustomMessageEntry) *jsonObject {
	putString(out, "customType", custom.CustomType)
	out.set("content", userContentToPi(custom.GetContent(), custom.GetStringContent()))
	putBoolean(out, "display", custom.Display)
	putText(out, "details", custom.GetDetailsJson(), "CustomMessageEntry.details_json")
	return withExtra(out, custom.GetExtraJson(), "CustomMessageEntry", customMessageKeys)
}

func labelToPi(out *jsonObject, label *aiv1.Label) *jsonObject {
	putString(out, "targetId", label.TargetId)
	putString(out, "label", label.Label)
	return withExtra(out, label.GetExtraJson(), "Label", labelKeys)
}

func sessionInfoToPi(out *jsonObject, info *aiv1.SessionInfo) *jsonObject {
	putString(out, "name", info.Name)
	return withExtra(out, info.GetExtraJson(), "SessionInfo", sessionInfoKeys)
}

func contextEditToPi(out *jsonObject, edit *aiv1.ContextEdit) *jsonObject {
	putString(out, "targetId", edit.TargetId)
	if edit.GetReplacement() == nil {
		out.set("replacement", jsonNull{})
	} else {
		out.set("replacement", replacementToPi(edit.GetReplacement()))
	}
	return withExtra(out, edit.GetExtraJson(), "ContextEdit", contextEditKeys)
}

func replacementToPi(replacement *aiv1.ContextReplacement) *jsonObject {
	out := newObject()
	blocks := replacement.GetContent()
	if replacement.GetStringContent() && len(blocks) == 1 && blocks[0].GetText() != nil {
		out.set("content", jsonString(blocks[0].GetText().GetText()))
	} else {
		content := make(jsonArray, len(blocks))
		for i, block := range blocks {
			content[i] = contentBlockToPi(block)
		}
		out.set("content", content)
	}
	return withExtra(out, replacement.GetExtraJson(), "ContextReplacement", replacementKeys)
}

func contentBlockToPi(block *aiv1.ContentBlock) *jsonObject {
	switch member := block.GetBlock().(type) {
	case *aiv1.ContentBlock_Text:
		return textToPi(member.Text)
	case *aiv1.ContentBlock_Image:
		return mediaToPi(nil, member.Image)
	case *aiv1.ContentBlock_Thinking:
		return thinkingToPi(member.Thinking)
	case *aiv1.ContentBlock_ToolCall:
		return toolCallToPi(member.ToolCall)
	}
	panic(failure("ContentBlock", "no block is set"))
}
