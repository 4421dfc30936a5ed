package io.github.piproto;

import com.google.protobuf.ByteString;
import io.github.piproto.ai.v1.ModelServiceGrpc;
import io.github.piproto.ai.v1.ResumeRequest;
import io.github.piproto.ai.v1.StreamBatchedView;
import io.github.piproto.ai.v1.StreamRequest;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.ProtoUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * The events of one message a stream call receives, each left as its bytes, for the client to
 * decode as a ModelEvent one by one: so the events in front of one that does not decode are
 * delivered, and that one fails at its own index (rule {@code event-decode}).
 *
 * <p>{@link #STREAM_BATCHED} reads each StreamBatchedResponse through the generated {@link
 * StreamBatchedView} (protobuf's own parser, through grpc-java's marshaller), its events as bytes;
 * {@link #STREAM} and {@link #RESUME} take each message of Stream or Resume as one event. A batch
 * that does not parse as a StreamBatchedView has no events, and {@link #malformed()} says why: it
 * fails as a whole, at the index its first event would have had.
 */
final class Batched {
  /** StreamBatched, each response read as a StreamBatchedView. */
  static final MethodDescriptor<StreamRequest, Batched> STREAM_BATCHED =
      ModelServiceGrpc.getStreamBatchedMethod().toBuilder(new SortedMaps(), new Views()).build();

  /** Stream, each response one event. */
  static final MethodDescriptor<StreamRequest, Batched> STREAM =
      ModelServiceGrpc.getStreamMethod().toBuilder(new SortedMaps(), new OneEvent()).build();

  /** Resume, each response one event: it streams single events, whichever call it goes on from. */
  static final MethodDescriptor<ResumeRequest, Batched> RESUME =
      ModelServiceGrpc.getResumeMethod().toBuilder(
              ModelServiceGrpc.getResumeMethod().getRequestMarshaller(), new OneEvent())
          .build();

  private final List<ByteString> events;
  private final String malformed;

  private Batched(List<ByteString> events, String malformed) {
    this.events = events;
    this.malformed = malformed;
  }

  /** The events' bytes, in order. */
  List<ByteString> events() {
    return events;
  }

  /** Why the message cannot be read on after its events; null when it was read whole. */
  String malformed() {
    return malformed;
  }

  /** StreamBatchedResponses through the generated view; one that does not parse has no events. */
  private static final class Views implements MethodDescriptor.Marshaller<Batched> {
    private static final MethodDescriptor.Marshaller<StreamBatchedView> VIEW =
        ProtoUtils.marshaller(StreamBatchedView.getDefaultInstance());

    @Override
    public InputStream stream(Batched value) {
      return VIEW.stream(StreamBatchedView.newBuilder().addAllEvents(value.events).build());
    }

    @Override
    public Batched parse(InputStream stream) {
      try {
        return new Batched(VIEW.parse(stream).getEventsList(), null);
      } catch (StatusRuntimeException error) {
        // The marshaller reports bytes that do not parse as INTERNAL, with protobuf's reason as the
        // cause: the batch fails as a whole, none of its events applied.
        if (error.getStatus().getCode() != Status.Code.INTERNAL) {
          throw error;
        }
        Throwable cause = error.getCause() != null ? error.getCause() : error;
        return new Batched(List.of(), cause.getMessage());
      }
    }
  }

  /** A message of Stream as the bytes of one event. */
  private static final class OneEvent implements MethodDescriptor.Marshaller<Batched> {
    @Override
    public InputStream stream(Batched value) {
      return value.events.get(0).newInput();
    }

    @Override
    public Batched parse(InputStream stream) {
      try {
        return new Batched(List.of(ByteString.readFrom(stream)), null);
      } catch (IOException error) {
        throw new UncheckedIOException(error);
      }
    }
  }

  /** Requests encoded with their map entries in key order, as the schema asks. */
  private static final class SortedMaps implements MethodDescriptor.Marshaller<StreamRequest> {
    @Override
    public InputStream stream(StreamRequest value) {
      return new ByteArrayInputStream(Wire.toBytes(value));
    }

    @Override
    public StreamRequest parse(InputStream stream) {
      try {
        return StreamRequest.parseFrom(stream);
      } catch (IOException error) {
        throw new UncheckedIOException(error);
      }
    }
  }
}
