package pi.proto;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.CallOptions;
import io.grpc.Context;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import pi.ai.v1.Context.AgentContext;
import pi.ai.v1.Event.ModelEvent;
import pi.ai.v1.Message.StopReason;
import pi.ai.v1.ModelServiceGrpc;
import pi.ai.v1.Service.StreamRequest;

/**
 * A client of {@code pi.ai.v1.ModelService} over one gRPC channel.
 *
 * <p>Every failure becomes the stream's {@code error} event, carrying everything received before
 * it: a non-OK status or transport failure is ERROR with the status description (the code name if
 * it has none); a stream that closes without a terminal event is ERROR "stream ended without a
 * terminal event"; an undecodable event or one that breaks the stream rules is ERROR naming the
 * event; {@code cancel()} on the returned stream is ABORTED "cancelled".
 */
public final class ModelClient implements AutoCloseable {
  /** The largest event the client accepts, as in the Python client. */
  public static final int MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

  /**
   * The generated Stream method, receiving each event as bytes: the client decodes them itself, so
   * an undecodable event is reported with its index, as the Python client does.
   */
  private static final MethodDescriptor<StreamRequest, byte[]> STREAM =
      ModelServiceGrpc.getStreamMethod().toBuilder(
              ModelServiceGrpc.getStreamMethod().getRequestMarshaller(), new RawBytes())
          .build();

  private final ManagedChannel channel;

  /** A client of the server at {@code target} (host:port), over plaintext HTTP/2. */
  public ModelClient(String target) {
    this(
        Grpc.newChannelBuilder(target, InsecureChannelCredentials.create())
            .maxInboundMessageSize(MAX_RECEIVE_BYTES)
            .build());
  }

  /** A client over a channel of your own (TLS, interceptors, ...); {@link #close} shuts it down. */
  public ModelClient(ManagedChannel channel) {
    this.channel = channel;
  }

  /**
   * Start one call with the server's default model and options; the stream's {@code partial()}
   * rebuilds the message as its events are taken.
   */
  public AssistantMessageEventStream stream(AgentContext context) {
    return stream(StreamRequest.newBuilder().setContext(context).build(), null);
  }

  /**
   * Start one call; the stream's {@code partial()} rebuilds the message as its events are taken.
   *
   * @param timeout the call's deadline, after which the stream ends with ERROR; null for none
   */
  public AssistantMessageEventStream stream(StreamRequest request, Duration timeout) {
    AssistantMessageEventStream events = new AssistantMessageEventStream();
    CallOptions options =
        timeout == null
            ? CallOptions.DEFAULT
            : CallOptions.DEFAULT.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    events.drive(stream -> receive(stream, request, options));
    return events;
  }

  /** Shut the channel down; streams still open end with an ERROR event. */
  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private void receive(
      AssistantMessageEventStream events, StreamRequest request, CallOptions options)
      throws InterruptedException {
    // The call belongs to this context: cancelling it ends the call wherever the loop stands.
    Context.CancellableContext call = Context.current().withCancellation();
    Context outer = call.attach();
    try {
      Iterator<byte[]> messages =
          ClientCalls.blockingServerStreamingCall(channel, STREAM, options, request);
      for (int index = 0; messages.hasNext(); index++) {
        byte[] data = messages.next();
        ModelEvent event;
        try {
          event = ModelEvent.parseFrom(data);
        } catch (InvalidProtocolBufferException error) {
          events.fail(
              StopReason.STOP_REASON_ERROR,
              "event %d: cannot decode ModelEvent from %d bytes: %s"
                  .formatted(index, data.length, error.getMessage()));
          return;
        }
        events.send(event); // waits while the consumer is behind
        if (events.isDone()) {
          return; // anything after the terminal event is ignored: the call is cancelled below
        }
      }
    } catch (StatusRuntimeException error) {
      events.fail(StopReason.STOP_REASON_ERROR, describe(error.getStatus()));
    } catch (StreamProtocolException error) {
      events.fail(StopReason.STOP_REASON_ERROR, error.getMessage());
    } finally {
      call.detach(outer);
      call.cancel(null);
    }
  }

  /** A status as the stream reports it: its description unchanged, else its code name. */
  private static String describe(Status status) {
    String description = status.getDescription();
    return description == null || description.isEmpty() ? status.getCode().name() : description;
  }

  /** Messages as the bytes they travel in. */
  private static final class RawBytes implements MethodDescriptor.Marshaller<byte[]> {
    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException error) {
        throw new UncheckedIOException(error);
      }
    }
  }
}
