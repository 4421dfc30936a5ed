package pi.proto;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static pi.proto.Fixtures.TEST_TIMEOUT_SECONDS;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.UnknownFieldSet;
import com.google.protobuf.util.JsonFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import pi.ai.v1.Content;
import pi.ai.v1.Context;
import pi.ai.v1.Event;
import pi.ai.v1.Json;
import pi.ai.v1.Service;

/**
 * The golden wire vectors of tests/vectors: each decodes, re-encodes to identical bytes (unknown
 * fields included), prints the same ProtoJSON as the Python runtime and parses it back. A check
 * listed in known_failures.json for this runtime must fail, and every other must pass.
 */
class VectorsTest {
  private static final Path VECTORS = Fixtures.repoRoot().resolve("tests/vectors");
  private static final Path KNOWN_FAILURES =
      Fixtures.repoRoot().resolve("java/known_failures.json");
  private static final List<String> CHECKS = List.of("decode", "encode", "to_json", "from_json");

  /** The generated files, by their outer classes. */
  private static final List<Class<?>> OUTER_CLASSES =
      List.of(Json.class, Content.class, pi.ai.v1.Message.class, Context.class, Event.class, Service.class);

  /** One check of one vector: it returns normally or throws. */
  private interface Check {
    void run(Message prototype, byte[] data, String json) throws Exception;
  }

  private static final Map<String, Check> RUN =
      Map.of(
          "decode", (prototype, data, json) -> decode(prototype, data),
          "encode",
              (prototype, data, json) ->
                  assertArrayEquals(data, decode(prototype, data).toByteArray()),
          "to_json",
              (prototype, data, json) ->
                  JsonValues.assertSameJson(
                      json, JsonFormat.printer().print(decode(prototype, data))),
          "from_json",
              (prototype, data, json) -> {
                Message.Builder parsed = prototype.newBuilderForType();
                JsonFormat.parser().merge(json, parsed);
                // ProtoJSON has no place for unknown fields: it parses back to the known ones.
                assertEquals(decodeKnownFields(prototype, data), parsed.build());
              });

  static Stream<String> vectorNames() throws IOException {
    return manifest().keySet().stream();
  }

  /** Every vector's name and full type name, from manifest.json. */
  private static Map<String, String> manifest() throws IOException {
    JsonObject manifest =
        JsonParser.parseString(Files.readString(VECTORS.resolve("manifest.json")))
            .getAsJsonObject();
    Map<String, String> types = new TreeMap<>();
    for (JsonElement vector : manifest.getAsJsonArray("vectors")) {
      types.put(
          vector.getAsJsonObject().get("name").getAsString(),
          vector.getAsJsonObject().get("type").getAsString());
    }
    return types;
  }

  /** The checks known_failures.json says fail here, as "check vector". */
  private static Set<String> knownFailures() throws IOException {
    Set<String> known = new TreeSet<>();
    JsonArray entries = JsonParser.parseString(Files.readString(KNOWN_FAILURES)).getAsJsonArray();
    for (JsonElement entry : entries) {
      JsonObject failure = entry.getAsJsonObject();
      if (failure.get("runtime").getAsString().equals("java")) {
        known.add(failure.get("check").getAsString() + " " + failure.get("vector").getAsString());
      }
    }
    return known;
  }

  /** The default instance of every generated message type, by full name. */
  private static Map<String, Message> generatedTypes() throws ReflectiveOperationException {
    Map<String, Message> types = new TreeMap<>();
    for (Class<?> outer : OUTER_CLASSES) {
      for (Class<?> nested : outer.getDeclaredClasses()) {
        if (Message.class.isAssignableFrom(nested)) {
          Message prototype = (Message) nested.getMethod("getDefaultInstance").invoke(null);
          types.put(prototype.getDescriptorForType().getFullName(), prototype);
        }
      }
    }
    return types;
  }

  private static Message decode(Message prototype, byte[] data) throws IOException {
    return prototype.getParserForType().parseFrom(data);
  }

  private static Message decodeKnownFields(Message prototype, byte[] data) throws IOException {
    return withoutUnknownFields(decode(prototype, data));
  }

  /** The message with the unknown fields of it and of every message inside it dropped. */
  private static Message withoutUnknownFields(Message message) {
    Message.Builder builder =
        message.toBuilder().setUnknownFields(UnknownFieldSet.getDefaultInstance());
    for (Map.Entry<FieldDescriptor, Object> field : message.getAllFields().entrySet()) {
      if (field.getKey().getJavaType() != FieldDescriptor.JavaType.MESSAGE) {
        continue;
      }
      if (field.getKey().isRepeated()) {
        List<?> items = (List<?>) field.getValue();
        for (int index = 0; index < items.size(); index++) {
          builder.setRepeatedField(
              field.getKey(), index, withoutUnknownFields((Message) items.get(index)));
        }
      } else {
        builder.setField(field.getKey(), withoutUnknownFields((Message) field.getValue()));
      }
    }
    return builder.build();
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void theManifestCoversEveryMessageOfPiAiV1() throws Exception {
    Set<String> declared = new TreeSet<>();
    for (Class<?> outer : OUTER_CLASSES) {
      FileDescriptor file = (FileDescriptor) outer.getMethod("getDescriptor").invoke(null);
      for (Descriptor message : file.getMessageTypes()) {
        declared.add(message.getFullName());
      }
    }
    assertEquals(declared, generatedTypes().keySet());
    assertEquals(declared, new TreeSet<>(manifest().values()));
  }

  @Test
  @Timeout(TEST_TIMEOUT_SECONDS)
  void knownFailuresNameRealVectorsAndChecks() throws Exception {
    Set<String> vectors = manifest().keySet();
    for (String failure : knownFailures()) {
      String[] parts = failure.split(" ", 2);
      assertEquals(
          true, CHECKS.contains(parts[0]), "unknown check in known_failures.json: " + parts[0]);
      assertEquals(
          true, vectors.contains(parts[1]), "unknown vector in known_failures.json: " + parts[1]);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("vectorNames")
  @Timeout(TEST_TIMEOUT_SECONDS)
  void vector(String name) throws Exception {
    Message prototype = generatedTypes().get(manifest().get(name));
    byte[] data = Files.readAllBytes(VECTORS.resolve(name + ".binpb"));
    String json = Files.readString(VECTORS.resolve(name + ".json"), StandardCharsets.UTF_8);

    List<String> failed = new ArrayList<>();
    List<String> reasons = new ArrayList<>();
    for (String check : CHECKS) {
      try {
        RUN.get(check).run(prototype, data, json);
      } catch (Exception | AssertionError error) {
        failed.add(check + " " + name);
        reasons.add(check + ": " + error);
      }
    }
    List<String> expected = new ArrayList<>();
    for (String failure : knownFailures()) {
      if (failure.endsWith(" " + name)) {
        expected.add(failure);
      }
    }
    assertEquals(
        expected, failed, () -> "failures other than known_failures.json lists: " + reasons);
  }
}
