package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.protobuf.InvalidProtocolBufferException;
import io.github.piproto.ai.v1.AgentMessage;
import io.github.piproto.ai.v1.AssistantMessage;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.StartEvent;
import io.github.piproto.ai.v1.TranscriptEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The pi-JSON codec on the session files pi wrote (tests/fixtures/): every line comes back byte for
 * byte, through the wire; and what the conformance corpus pins, shown once each: error paths, an
 * edit, lone surrogates, JavaScript's numbers and strings.
 */
class PiJsonTest {
  private static final Path FIXTURES = Fixtures.repoRoot().resolve("tests/fixtures");

  /** The session files: pi 1.6's (but the one of events), a real session, older pi's shapes. */
  static Stream<Path> sessionFiles() throws IOException {
    List<Path> pi16;
    try (Stream<Path> files = Files.list(FIXTURES.resolve("pi-1.6-sessions"))) {
      pi16 =
          files
              .filter(path -> path.toString().endsWith(".jsonl"))
              .filter(path -> !path.getFileName().toString().equals("events-json-mode.jsonl"))
              .sorted()
              .toList();
    }
    assertTrue(pi16.size() >= 14, "pi 1.6's sessions: " + pi16);
    return Stream.concat(
        pi16.stream(),
        Stream.of(
            FIXTURES.resolve("pi-sessions/before-compaction.jsonl"),
            FIXTURES.resolve("older-pi-shapes.jsonl")));
  }

  /** JSON written with single quotes, which these texts need no other use for, as JSON. */
  private static String json(String text) {
    return text.replace('\'', '"');
  }

  private static String read(Path path) throws IOException {
    return Files.readString(path, StandardCharsets.UTF_8);
  }

  private static TranscriptEntry throughTheWire(TranscriptEntry entry)
      throws InvalidProtocolBufferException {
    return TranscriptEntry.parseFrom(entry.toByteArray());
  }

  @ParameterizedTest
  @MethodSource("sessionFiles")
  @Timeout(TEST_TIMEOUT_SECONDS)
  void everyLineComesBackByteForByte(Path path) throws IOException {
    String text = read(path);
    List<String> lines = text.lines().toList();
    assertFalse(lines.isEmpty());
    for (int number = 1; number <= lines.size(); number++) {
      String line = lines.get(number - 1);
      TranscriptEntry entry = throughTheWire(PiJson.entryFromPi(line));
      assertEquals(line, PiJson.entryToPi(entry), path.getFileName() + ":" + number);
    }
    assertEquals(text, PiJson.sessionToPi(PiJson.sessionFromPi(text)), "the whole file");
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theThinkingFixtureComesBackAsJsonStringifyWritesIt() throws IOException {
    // Indented by its writer: what comes back is its JSON.stringify, no spaces.
    String original =
        read(FIXTURES.resolve("pi-sessions/assistant-message-with-thinking-code.json"));
    AgentMessage message = PiJson.messageFromPi(original);
    assertTrue(message.getAssistant().getContent(0).getThinking().hasThinkingSignature());
    assertEquals(JsJson.stringify(JsJson.parse(original, "")), PiJson.messageToPi(message));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void deltaOnlyEventsComeBackAsPiWroteThem() throws IOException {
    // pi's json mode: each message_update carries an event without its partial; applied, so that
    // an *_end event's content can be written, and written back as pi wrote it.
    Accumulator accumulator = new Accumulator();
    int updates = 0;
    for (String line :
        read(FIXTURES.resolve("pi-1.6-sessions/events-json-mode.jsonl")).lines().toList()) {
      JsonObject event = JsJson.parse(line, "").getAsJsonObject();
      String type = event.get("type").getAsString();
      JsonElement message = event.get("message");
      if (type.equals("message_start")
          && message.getAsJsonObject().get("role").getAsString().equals("assistant")) {
        AssistantMessage header = PiJson.assistantFromPi(JsJson.stringify(message));
        accumulator = new Accumulator();
        accumulator.apply(
            ModelEvent.newBuilder().setStart(StartEvent.newBuilder().setHeader(header)).build());
      }
      if (type.equals("message_update")) {
        String update = JsJson.stringify(event.get("assistantMessageEvent"));
        ModelEvent read = PiJson.eventFromPi(update);
        assertFalse(read.hasPartial(), update);
        accumulator.apply(read);
        ModelEvent applied = read.toBuilder().setPartial(accumulator.partial()).build();
        assertEquals(update, PiJson.eventToPi(applied, PiJson.EventForm.DELTA_ONLY));
        updates += 1;
      }
    }
    assertEquals(25, updates);
    assertEquals("README 的标题就是项目名：tiny-pi。", Messages.textOf(accumulator.partial()));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anEventWithItsPartialComesBack() {
    String text =
        json(
            "{'type':'text_delta','contentIndex':0,'delta':'hi','partial':{'role':'assistant',"
                + "'content':[{'type':'text','text':'hi'}],'stopReason':'pending'}}");
    ModelEvent event = PiJson.eventFromPi(text);
    assertEquals("hi", event.getTextDelta().getDelta());
    assertEquals("hi", Messages.textOf(event.getPartial()));
    assertEquals(text, PiJson.eventToPi(event));
    PiJsonException error =
        assertThrows(
            PiJsonException.class,
            () -> PiJson.eventToPi(event.toBuilder().clearPartial().build()));
    assertEquals("text_delta", error.path());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '`',
      value = {
        "{'role':'user','content':[{'type':'video','url':'x'}],'timestamp':1} | content[0].type",
        "{'role':'user','content':'hi','timestamp':1.5} | timestamp",
        "{'role':'user','content':'hi','timestamp':'1'} | timestamp",
        "{'type':'message','message':{'role':'user','content':[{'type':'text'}]}}"
            + " | message.content[0].text",
        "{'role':'assistant','content':[],'usage':{'input':1.5},'stopReason':'stop'} | usage.input",
        "{'role':'assistant','content':[],'stopReason':'finished'} | stopReason",
        "{'role':'user','content':[{'type':'image','data':'AB','mimeType':'image/png'}]}"
            + " | content[0].data",
        "{'content':'hi'} | ``",
      })
  @Timeout(TEST_TIMEOUT_SECONDS)
  void errorsNameThePathOfTheBadValue(String text, String path) {
    PiJsonException error =
        assertThrows(PiJsonException.class, () -> PiJson.entryFromPi(json(text)));
    assertEquals(path, error.path(), error.getMessage());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aSessionFileNamesTheLineOfItsError() {
    String text = json("{'role':'user','content':'hi'}\n\n{'role':'user','content':[1]}\n");
    PiJsonException error = assertThrows(PiJsonException.class, () -> PiJson.sessionFromPi(text));
    assertEquals(3, error.line());
    assertEquals("content[0]", error.path());
    assertTrue(error.getMessage().startsWith("line 3: content[0]: "), error.getMessage());
  }

  @ParameterizedTest
  @CsvSource({"entries-run-together-message.jsonl, 4", "entries-run-together-compaction.jsonl, 5"})
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aLineOfEntriesRunTogetherIsKeptByteForByteAndNamed(String name, int bad) throws IOException {
    // Excerpts of two session files pi committed to its own repository, each with a line that
    // holds two entries with no newline between them (tests/fixtures/pi-sessions/README.md).
    String text = read(FIXTURES.resolve("pi-sessions").resolve(name));
    List<SessionWarning> warnings = new ArrayList<>();
    List<TranscriptEntry> entries = PiJson.sessionFromPi(text, warnings);
    assertEquals(List.of(bad), warnings.stream().map(SessionWarning::line).toList(), name);
    assertTrue(entries.get(bad - 1).getUnparsedLine().contains("}}{\"type\":"), name);
    List<TranscriptEntry> back = new ArrayList<>();
    for (TranscriptEntry entry : entries) {
      back.add(throughTheWire(entry));
    }
    assertEquals(text, PiJson.sessionToPi(back), name);
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aLineThatIsNotOneEntryKeepsEveryByte() {
    // A blank line, a carriage return, a last line cut short: kept, and the last given its newline.
    String text = "\n{\"role\":\r\n{\"role\":";
    List<SessionWarning> warnings = new ArrayList<>();
    List<TranscriptEntry> entries = PiJson.sessionFromPi(text, warnings);
    assertEquals(List.of(1, 2, 3), warnings.stream().map(SessionWarning::line).toList());
    assertEquals(text + "\n", PiJson.sessionToPi(entries));
    TranscriptEntry two = TranscriptEntry.newBuilder().setUnparsedLine("a\nb").build();
    assertThrows(PiJsonException.class, () -> PiJson.sessionToPi(List.of(two)));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anEditWritesWhatTheFieldsSay() throws IOException {
    String line =
        read(FIXTURES.resolve("pi-1.6-sessions/tool-round-trip.jsonl"))
            .lines()
            .filter(text -> text.contains("\"role\":\"assistant\""))
            .findFirst()
            .orElseThrow();
    TranscriptEntry entry = PiJson.entryFromPi(line);
    AssistantMessage.Builder message = entry.getMessage().getAssistant().toBuilder();
    message.getUsageBuilder().setCacheRead(7).getCostBuilder().setInput(0.25);
    TranscriptEntry edited =
        entry.toBuilder().setMessage(AgentMessage.newBuilder().setAssistant(message)).build();

    // The same line, with the two values in their places.
    JsonObject expected = JsJson.parse(line, "").getAsJsonObject();
    JsonObject usage = expected.getAsJsonObject("message").getAsJsonObject("usage");
    usage.addProperty("cacheRead", 7);
    usage.getAsJsonObject("cost").addProperty("input", 0.25);
    String written = PiJson.entryToPi(edited);
    assertTrue(written.contains("\"cacheRead\":7,"), written);
    assertEquals(JsJson.stringify(expected), written);
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void absentOptionalFieldsStayAbsent() {
    String text = json("{'role':'assistant','content':[],'stopReason':'stop'}");
    AssistantMessage message = PiJson.assistantFromPi(text);
    assertFalse(message.hasApi());
    assertFalse(message.hasTimestamp());
    assertFalse(message.hasUsage());
    assertEquals(text, PiJson.assistantToPi(message));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void keysInAnOrderOfTheirOwnAreWrittenInThatOrder() {
    String text = json("{'role':'user','timestamp':1,'content':'hi','note':2}");
    AgentMessage message = PiJson.messageFromPi(text);
    assertEquals(
        json("{'note':2,'$order':['role','timestamp','content','note']}"),
        message.getUser().getExtraJson());
    assertEquals(text, PiJson.messageToPi(message));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void loneSurrogatesAreKept() throws InvalidProtocolBufferException {
    // Escaped, as JSON.stringify writes them: U+D800 + k is held as U+10F800 + k.
    String text = json("{'role':'user','content':'cut \\ud83d, \\udc00 x','timestamp':1}");
    TranscriptEntry entry = throughTheWire(PiJson.entryFromPi(text));
    String held = entry.getMessage().getUser().getContent(0).getText().getText();
    assertEquals(
        "cut " + Character.toString(0x10F83D) + ", " + Character.toString(0x10FC00) + " x", held);
    assertEquals(text, PiJson.entryToPi(entry));

    // A character of the mapped range in the text itself is held after U+10F7FF, and comes back.
    String range = Character.toString(0x10F83D) + Character.toString(0x10F7FF);
    String inRange = json("{'role':'user','content':'" + range + "','timestamp':1}");
    TranscriptEntry kept = throughTheWire(PiJson.entryFromPi(inRange));
    String escape = Character.toString(0x10F7FF);
    assertEquals(
        escape + Character.toString(0x10F83D) + escape + escape,
        kept.getMessage().getUser().getContent(0).getText().getText());
    assertEquals(inRange, PiJson.entryToPi(kept));
  }

  @ParameterizedTest
  @CsvSource({
    "282879384806159000, 2.82879384806159E17", // Java 17 writes 2.82879384806159008E17
    "1e+21, 1e21",
    "100000000000000000000, 1e20",
    "0.0000015, 1.5e-6",
    "0.000001, 1e-6",
    "1e-7, 1e-7",
    "5e-7, 5e-7",
    "5e-324, 5e-324",
    "1.7976931348623157e+308, 1.7976931348623157e308",
    "1.2345678901234568e+29, 123456789012345678901234567890",
    "9007199254740992, 9007199254740993",
    "0.30000000000000004, 0.30000000000000004",
    "0, -0.0",
    "100, 100.0",
    "-2.5, -2.5",
  })
  @Timeout(TEST_TIMEOUT_SECONDS)
  void numbersAreWrittenAsJavaScriptWritesThem(String javascript, String number) {
    assertEquals(javascript, JsNumbers.toString(Double.parseDouble(number)));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void numbersAreReadAsJavaScriptReadsThem() {
    String text =
        json(
            "{'role':'assistant','content':[{'type':'toolCall','id':'c','name':'n',"
                + "'arguments':{'a':1.0,'b':9007199254740993,'c':1e21,'d':-0}}],"
                + "'usage':{'input':1.0,'output':-0,'cost':{'input':-0}},'stopReason':'toolUse'}");
    AssistantMessage message = PiJson.assistantFromPi(text);
    assertEquals(
        json("{'a':1,'b':9007199254740992,'c':1e+21,'d':0}"),
        message.getContent(0).getToolCall().getArgumentsJson());
    assertEquals(1, message.getUsage().getInput()); // integer fields take 1.0 and -0
    assertEquals(0, message.getUsage().getOutput());
    assertEquals(
        Double.doubleToRawLongBits(-0.0),
        Double.doubleToRawLongBits(message.getUsage().getCost().getInput()));
    assertTrue(
        PiJson.assistantToPi(message)
            .contains(json("'usage':{'input':1,'output':0,'cost':{'input':0}}")));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void stringsAreEscapedAsJsonStringifyEscapesThem() {
    String text = "\"\\\b\f\n\r\t\u0001\u001f\u007f\u2028é😀\ud83d";
    assertEquals(
        "\"\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\u007f\u2028é😀\\ud83d\"",
        JsJson.stringify(new JsonPrimitive(text)));
  }
}
