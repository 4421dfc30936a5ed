package io.github.piproto;

import static io.github.piproto.Fixtures.TEST_TIMEOUT_SECONDS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.NullValue;
import io.github.piproto.ai.v1.CustomEntry;
import io.github.piproto.ai.v1.CustomMessageEntry;
import io.github.piproto.ai.v1.Label;
import io.github.piproto.ai.v1.SessionEntry;
import io.github.piproto.ai.v1.TranscriptEntry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The typed lines of pi's session files: every entry pi 1.6 writes has its body and its place in
 * the session's tree, an entry of a type the schema does not know keeps its place typed, and an
 * edit of a typed entry is written in pi's order.
 */
class PiEntriesTest {
  private static final Path PI_16 = Fixtures.repoRoot().resolve("tests/fixtures/pi-1.6-sessions");

  /** pi 1.6's session files (not the one of events). */
  static Stream<Path> pi16Sessions() throws IOException {
    List<Path> files;
    try (Stream<Path> listed = Files.list(PI_16)) {
      files =
          listed
              .filter(path -> path.toString().endsWith(".jsonl"))
              .filter(path -> !path.getFileName().toString().equals("events-json-mode.jsonl"))
              .sorted()
              .toList();
    }
    assertTrue(files.size() >= 15, "pi 1.6's sessions: " + files);
    assertTrue(files.contains(PI_16.resolve("extension-entries.jsonl")), files.toString());
    return files.stream();
  }

  private static List<TranscriptEntry> session(Path path) throws IOException {
    return PiJson.sessionFromPi(Files.readString(path, StandardCharsets.UTF_8));
  }

  private static String line(String file, String containing) throws IOException {
    return Files.readString(PI_16.resolve(file), StandardCharsets.UTF_8)
        .lines()
        .filter(text -> text.contains(containing))
        .findFirst()
        .orElseThrow();
  }

  private static String json(String text) {
    return text.replace('\'', '"');
  }

  private static TranscriptEntry throughTheWire(TranscriptEntry entry)
      throws InvalidProtocolBufferException {
    return TranscriptEntry.parseFrom(entry.toByteArray());
  }

  /** The {@code extra_json} of the entry's body, whichever body it is; null when it has none. */
  private static String bodyExtraJson(SessionEntry session) {
    if (session.getBodyCase() == SessionEntry.BodyCase.BODY_NOT_SET) {
      return null;
    }
    FieldDescriptor member =
        SessionEntry.getDescriptor().findFieldByNumber(session.getBodyCase().getNumber());
    Message body = (Message) session.getField(member);
    return (String) body.getField(body.getDescriptorForType().findFieldByName("extra_json"));
  }

  @ParameterizedTest
  @MethodSource("pi16Sessions")
  @Timeout(TEST_TIMEOUT_SECONDS)
  void everyEntryPiWritesIsTypedAndPlaced(Path path) throws IOException {
    List<TranscriptEntry> entries = session(path);
    int sessionEntries = 0;
    for (int index = 0; index < entries.size(); index++) {
      TranscriptEntry entry = entries.get(index);
      String where = path.getFileName() + ":" + (index + 1);
      assertTrue(entry.hasId(), where + " has an id");
      assertTrue(entry.hasTimestamp(), where + " has a timestamp");
      if (entry.hasMessage()) {
        assertEquals("", entry.getSessionJson(), where + ": no envelope left in session_json");
        continue;
      }
      sessionEntries += 1;
      SessionEntry session = entry.getSessionEntry();
      assertEquals("", session.getFieldsJson(), where + " " + session.getType());
      assertEquals("", bodyExtraJson(session), where + " " + session.getType() + " is typed");
      if (index == 0) {
        assertEquals(SessionEntry.BodyCase.HEADER, session.getBodyCase(), where);
        assertEquals(TranscriptEntry.ParentCase.PARENT_NOT_SET, entry.getParentCase(), where);
      } else {
        assertNotEquals(TranscriptEntry.ParentCase.PARENT_NOT_SET, entry.getParentCase(), where);
      }
    }
    assertTrue(sessionEntries >= 2, path + ": a header and a model change at least");
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theExtensionEntriesAreTyped() throws IOException {
    List<TranscriptEntry> entries = session(PI_16.resolve("extension-entries.jsonl"));
    Map<SessionEntry.BodyCase, List<SessionEntry>> byBody = new HashMap<>();
    entries.stream()
        .filter(TranscriptEntry::hasSessionEntry)
        .map(TranscriptEntry::getSessionEntry)
        .forEach(s -> byBody.computeIfAbsent(s.getBodyCase(), k -> new ArrayList<>()).add(s));

    CustomEntry custom = byBody.get(SessionEntry.BodyCase.CUSTOM).get(0).getCustom();
    assertEquals("todo-list", custom.getCustomType());
    assertEquals(json("{'items':['tests','docs'],'done':0}"), custom.getDataJson());
    CustomMessageEntry message =
        byBody.get(SessionEntry.BodyCase.CUSTOM_MESSAGE).get(0).getCustomMessage();
    assertEquals("reminder", message.getCustomType());
    assertTrue(message.getStringContent());
    assertEquals("Run the tests first.", message.getContent(0).getText().getText());
    assertTrue(message.getDisplay());
    List<SessionEntry> labels = byBody.get(SessionEntry.BodyCase.LABEL);
    assertEquals(2, labels.size());
    assertEquals("checkpoint-1", labels.get(0).getLabel().getLabel());
    assertFalse(labels.get(1).getLabel().hasLabel(), "the cleared label has none");
    assertTrue(labels.get(1).getLabel().hasTargetId());
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void aSessionsTreeIsWalkedByIdAndParent() throws IOException {
    List<TranscriptEntry> entries = session(PI_16.resolve("branch.jsonl"));
    // The header is the session, not a node; the rest is a tree: one root, each parent earlier.
    Map<String, TranscriptEntry> byId = new HashMap<>();
    String root = null;
    for (TranscriptEntry entry : entries.subList(1, entries.size())) {
      switch (entry.getParentCase()) {
        case ROOT -> {
          assertEquals(null, root, "one root");
          assertEquals(NullValue.NULL_VALUE, entry.getRoot());
          root = entry.getId();
        }
        case PARENT_ID ->
            assertTrue(
                byId.containsKey(entry.getParentId()),
                entry.getId() + "'s parent is an earlier entry");
        case PARENT_NOT_SET -> throw new AssertionError(entry.getId() + " has no parent");
      }
      assertEquals(null, byId.put(entry.getId(), entry), "ids are unique");
    }
    assertTrue(root != null, "a root");

    // From the last entry up to the root: the branch taken, which leaves the abandoned one out.
    List<String> path = new ArrayList<>();
    TranscriptEntry at = entries.get(entries.size() - 1);
    while (true) {
      path.add(at.getId());
      if (at.hasRoot()) {
        break;
      }
      at = byId.get(at.getParentId());
    }
    assertEquals(root, path.get(path.size() - 1));
    assertEquals(8, path.size(), path.toString());
    SessionEntry summary =
        entries.stream()
            .filter(entry -> entry.getSessionEntry().hasBranchSummary())
            .findFirst()
            .orElseThrow()
            .getSessionEntry();
    String left = summary.getBranchSummary().getFromId();
    assertTrue(byId.containsKey(left), "the branch left is in the file");
    assertFalse(path.contains(left), "and off the path taken: " + path);
    Set<String> offPath = new HashSet<>(byId.keySet());
    path.forEach(offPath::remove);
    assertEquals(2, offPath.size(), "the abandoned prompt and answer: " + offPath);
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anUnknownEntryTypeKeepsItsPlaceTyped() throws InvalidProtocolBufferException {
    String text =
        json(
            "{'type':'bookmark','id':'77aa88bb','parentId':'74d38200',"
                + "'timestamp':'2026-12-02T06:20:00.487Z','note':'look here','weight':2}");
    TranscriptEntry entry = throughTheWire(PiJson.entryFromPi(text));
    assertEquals("77aa88bb", entry.getId());
    assertEquals("74d38200", entry.getParentId());
    assertEquals("2026-12-02T06:20:00.487Z", entry.getTimestamp());
    SessionEntry session = entry.getSessionEntry();
    assertEquals("bookmark", session.getType());
    assertEquals(SessionEntry.BodyCase.BODY_NOT_SET, session.getBodyCase());
    assertEquals(json("{'note':'look here','weight':2}"), session.getFieldsJson());
    assertEquals(text, PiJson.entryToPi(entry));

    // A root, its keys in an order of their own.
    String own = json("{'type':'bookmark','note':'n','parentId':null,'id':'77aa88bc'}");
    TranscriptEntry rooted = throughTheWire(PiJson.entryFromPi(own));
    assertTrue(rooted.hasRoot());
    assertEquals("77aa88bc", rooted.getId());
    assertFalse(rooted.hasTimestamp());
    assertEquals(
        json("{'note':'n','$order':['type','note','parentId','id']}"),
        rooted.getSessionEntry().getFieldsJson());
    assertEquals(own, PiJson.entryToPi(rooted));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void anEditOfATypedEntryIsWrittenInPisOrder() throws IOException {
    String line = line("extension-entries.jsonl", "\"label\":\"checkpoint-1\"");
    TranscriptEntry entry = PiJson.entryFromPi(line);
    assertEquals(line, PiJson.entryToPi(entry));
    Label label = entry.getSessionEntry().getLabel();
    TranscriptEntry edited =
        entry.toBuilder()
            .setParentId("0badc0de")
            .setSessionEntry(
                entry.getSessionEntry().toBuilder()
                    .setLabel(label.toBuilder().setLabel("checkpoint-2")))
            .build();
    String expected =
        json(
            "{'type':'label','id':'"
                + entry.getId()
                + "','parentId':'0badc0de','timestamp':'"
                + entry.getTimestamp()
                + "','targetId':'"
                + label.getTargetId()
                + "','label':'checkpoint-2'}");
    assertEquals(expected, PiJson.entryToPi(edited));

    // Cleared, as pi writes a cleared label: no label key.
    TranscriptEntry cleared =
        edited.toBuilder()
            .setSessionEntry(
                edited.getSessionEntry().toBuilder().setLabel(label.toBuilder().clearLabel()))
            .build();
    assertEquals(expected.replace(json(",'label':'checkpoint-2'"), ""), PiJson.entryToPi(cleared));

    // A custom entry, whose id, parentId and timestamp pi writes after its own keys, stays so.
    String customLine = line("extension-entries.jsonl", "\"type\":\"custom\"");
    TranscriptEntry custom = PiJson.entryFromPi(customLine);
    TranscriptEntry changed =
        custom.toBuilder()
            .setId("5f0c1a2e")
            .setSessionEntry(
                custom.getSessionEntry().toBuilder()
                    .setCustom(custom.getSessionEntry().getCustom().toBuilder().setDataJson("[]")))
            .build();
    assertEquals(
        json(
            "{'type':'custom','customType':'todo-list','data':[],'id':'5f0c1a2e','parentId':'"
                + custom.getParentId()
                + "','timestamp':'"
                + custom.getTimestamp()
                + "'}"),
        PiJson.entryToPi(changed));
  }
}
