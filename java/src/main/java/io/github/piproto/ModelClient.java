package io.github.piproto;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.github.piproto.ai.v1.AgentContext;
import io.github.piproto.ai.v1.CancelRequest;
import io.github.piproto.ai.v1.CancelResponse;
import io.github.piproto.ai.v1.GetModelRequest;
import io.github.piproto.ai.v1.GetModelResponse;
import io.github.piproto.ai.v1.ListModelsRequest;
import io.github.piproto.ai.v1.Model;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.ModelServiceGrpc;
import io.github.piproto.ai.v1.ResumeRequest;
import io.github.piproto.ai.v1.StopReason;
import io.github.piproto.ai.v1.StreamRequest;
import io.github.piproto.ai.v1.StreamRule;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A client of {@code pi.ai.v1.ModelService} over one gRPC channel.
 *
 * <p>Every failure becomes the stream's one {@code error} event, carrying everything received
 * before it, and the stream's {@code failure()} says which it was: a non-OK status or transport
 * failure is ERROR with the status description (the code name if it has none), failure = the status
 * code; an undecodable event, an event that breaks the stream rules, or a stream that closes
 * without a terminal event ("stream ended without a terminal event") is ERROR, failure = the rule
 * ({@code event-decode}, the rule broken, {@code terminal-missing}); {@code cancel()} on the
 * returned stream is ABORTED "cancelled", with no failure.
 *
 * <p>A stream calls {@code StreamBatched}, which carries the events that are ready together in one
 * message, and falls back to {@code Stream}, within the same deadline and with the same headers,
 * when the server answers UNIMPLEMENTED before any event (a server without {@code StreamBatched});
 * {@link #withBatched withBatched(false)} calls {@code Stream} alone. The events of a batch are
 * delivered one at a time, exactly as if each had come in a message of its own: each has its own
 * partial, every event index counts events, and an undecodable event fails at its own index after
 * the events in front of it ({@link Batched}: a batch that does not parse fails as a whole).
 *
 * <p>A numbered stream ({@code ModelEvent.seq}) is checked by its numbers ({@link Numbering}: a
 * repeat is dropped, a gap breaks rule {@code sequence}). A call whose start event gave a stream id
 * and that then fails with UNAVAILABLE, or ends without a terminal event, is resumed by the client
 * itself: after {@link #RESUME_BACKOFF}, doubled for each attempt in a row, it calls {@code Resume}
 * for the events after the last one applied, within the first call's deadline and with its headers,
 * and goes on applying events as from the first call, so the consumer sees one stream. At most
 * {@link #MAX_RESUMES} attempts in a row without an event between them; when it cannot resume, the
 * stream ends as it would have without resuming, and a Resume that fails with another status ends
 * it with that status. Cancelling a stream that has a stream id (its {@code cancel()}, a consumer
 * interrupted, {@link #close()}) also sends {@code Cancel} for it, best effort and without waiting
 * for it, since a server keeps a stream running for a while after its client goes away and cannot
 * tell a cancel from a connection lost.
 *
 * <p>A call without a deadline of its own gets {@link #DEFAULT_TIMEOUT} (15 minutes); a stream
 * whose block events add up to more than {@link Accumulator#DEFAULT_MAX_MESSAGE_BYTES} (64 MiB)
 * ends with rule {@code size-limit}. {@link #withDefaultTimeout} and {@link #withMaxMessageBytes}
 * change both.
 *
 * <p>The catalog calls, {@link #listModels} and {@link #getModel}, are plain blocking calls with a
 * deadline of {@link #CATALOG_TIMEOUT}; they throw {@link CallException} with the status code.
 *
 * <p>{@link #close()} ends the streams still open with an ABORTED {@code error} event, {@link
 * #CLIENT_CLOSED}, as {@code cancel()} does; a stream started after it ends that way at once, and a
 * catalog call throws CANCELLED. Clients made from this one ({@link #withBatched} and the like)
 * share its channel, so closing any of them closes them all.
 */
public final class ModelClient implements AutoCloseable {
  /** The largest single message (an event, or a batch of them) the client accepts, in bytes. */
  public static final int MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

  /** The deadline of a call that sets none: longer than a server's usual stream limit. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(15);

  /** The deadline of a catalog call, {@link #listModels} or {@link #getModel}. */
  public static final Duration CATALOG_TIMEOUT = Duration.ofSeconds(30);

  /** The {@code error_message} of a stream ended by {@link #close()}. */
  public static final String CLIENT_CLOSED = "the client was closed";

  /**
   * How many times in a row a call cut off after its stream id arrived is resumed ({@code
   * ModelService.Resume}) without an event applied between the attempts.
   */
  public static final int MAX_RESUMES = 5;

  /** The wait before the first Resume of a row, doubled before each further one. */
  public static final Duration RESUME_BACKOFF = Duration.ofMillis(50);

  /** How long a Cancel call may take, and how long {@link #close()} waits for those under way. */
  public static final Duration CANCEL_TIMEOUT = Duration.ofSeconds(1);

  private final ManagedChannel channel;
  private final OpenStreams open; // shared by the clients on this channel
  private final Duration defaultTimeout;
  private final long maxMessageBytes;
  private final boolean batched;

  /** A client of the server at {@code target} (host:port), over plaintext HTTP/2. */
  public ModelClient(String target) {
    this(
        Grpc.newChannelBuilder(target, InsecureChannelCredentials.create())
            .maxInboundMessageSize(MAX_RECEIVE_BYTES)
            .build());
  }

  /** A client over a channel of your own (TLS, interceptors, ...); {@link #close} shuts it down. */
  public ModelClient(ManagedChannel channel) {
    this(channel, new OpenStreams(), DEFAULT_TIMEOUT, Accumulator.DEFAULT_MAX_MESSAGE_BYTES, true);
  }

  private ModelClient(
      ManagedChannel channel,
      OpenStreams open,
      Duration defaultTimeout,
      long maxMessageBytes,
      boolean batched) {
    this.channel = channel;
    this.open = open;
    this.defaultTimeout = defaultTimeout;
    this.maxMessageBytes = maxMessageBytes;
    this.batched = batched;
  }

  /**
   * This client, on the same channel, with {@code timeout} as the deadline of calls that set none;
   * null for no deadline.
   */
  public ModelClient withDefaultTimeout(Duration timeout) {
    return new ModelClient(channel, open, timeout, maxMessageBytes, batched);
  }

  /**
   * This client, on the same channel, ending a stream whose deltas add up to more than {@code
   * bytes} bytes of UTF-8 (rule {@code size-limit}).
   */
  public ModelClient withMaxMessageBytes(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("maxMessageBytes must not be negative");
    }
    return new ModelClient(channel, open, defaultTimeout, bytes, batched);
  }

  /**
   * This client, on the same channel, calling {@code StreamBatched} with a fallback to {@code
   * Stream} (true, the default) or {@code Stream} alone (false). The events a stream yields are the
   * same either way.
   */
  public ModelClient withBatched(boolean batched) {
    return new ModelClient(channel, open, defaultTimeout, maxMessageBytes, batched);
  }

  /**
   * Start one call with the server's default model and options; the stream's {@code partial()}
   * rebuilds the message as its events are taken.
   */
  public AssistantMessageEventStream stream(AgentContext context) {
    return stream(StreamRequest.newBuilder().setContext(context).build());
  }

  /**
   * Start one call of the model {@code model} (its id) of {@code provider}, as pi names a model; an
   * empty provider leaves it to the server to find the only provider that serves the model, an
   * empty model id asks for the server's default model.
   */
  public AssistantMessageEventStream stream(String provider, String model, AgentContext context) {
    return stream(
        StreamRequest.newBuilder()
            .setProvider(provider)
            .setModel(model)
            .setContext(context)
            .build());
  }

  /** Start one call of {@code request}, with the client's default deadline. */
  public AssistantMessageEventStream stream(StreamRequest request) {
    return stream(request, null, new Metadata());
  }

  /**
   * Start one call of {@code request}.
   *
   * @param timeout the call's deadline, after which the stream ends with ERROR (DEADLINE_EXCEEDED);
   *     null for the client's default
   */
  public AssistantMessageEventStream stream(StreamRequest request, Duration timeout) {
    return stream(request, timeout, new Metadata());
  }

  /**
   * Start one call of {@code request}, sending {@code headers} as request metadata.
   *
   * @param timeout the call's deadline; null for the client's default
   */
  public AssistantMessageEventStream stream(
      StreamRequest request, Duration timeout, Metadata headers) {
    // Resume and Cancel carry the call's headers too: they name the same stream to the server.
    Channel target =
        ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(headers));
    ModelCallStream events =
        new ModelCallStream(maxMessageBytes, streamId -> sendCancel(target, streamId));
    String invalid = invalidHeader(headers);
    if (invalid != null) {
      // grpc-java would log a warning and send the call without it (an authorization header, say).
      String message = "request metadata '%s' must be printable ASCII".formatted(invalid);
      events.fail(
          StopReason.STOP_REASON_ERROR,
          message,
          StreamFailure.ofStatus(Status.Code.INVALID_ARGUMENT.name(), message));
      return events;
    }
    if (!open.add(events)) {
      events.fail(StopReason.STOP_REASON_ABORTED, CLIENT_CLOSED);
      return events;
    }
    Duration deadline = timeout != null ? timeout : defaultTimeout;
    CallOptions options =
        deadline == null
            ? CallOptions.DEFAULT
            : CallOptions.DEFAULT.withDeadlineAfter(nanos(deadline), TimeUnit.NANOSECONDS);
    // Every client here resumes a stream cut off, and says so: the server keeps the call for it.
    StreamRequest resumable = request.toBuilder().setResumable(true).build();
    Receiver receiver = new Receiver(events, target, resumable, options, batched);
    events.drive(
        stream -> {
          try {
            receiver.receive();
          } finally {
            open.remove(stream);
          }
        });
    return events;
  }

  /**
   * Tell the server to cancel the stream it keeps as {@code streamId}, without waiting for its
   * answer: it cannot tell a cancelled call from a connection lost. Best effort: errors are
   * ignored, since a stream nobody reads is cancelled by its server soon after anyway.
   */
  private void sendCancel(Channel target, String streamId) {
    CancelRequest request = CancelRequest.newBuilder().setStreamId(streamId).build();
    open.cancelStarted();
    StreamObserver<CancelResponse> done =
        new StreamObserver<>() {
          @Override
          public void onNext(CancelResponse response) {}

          @Override
          public void onError(Throwable error) {
            open.cancelEnded();
          }

          @Override
          public void onCompleted() {
            open.cancelEnded();
          }
        };
    // Forked: the call being cancelled is this thread's context at times, and must not take the
    // Cancel call down with it.
    Context.current()
        .fork()
        .run(
            () -> {
              try {
                ModelServiceGrpc.newStub(target)
                    .withDeadlineAfter(CANCEL_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS)
                    .cancel(request, done);
              } catch (RuntimeException refused) { // a channel shut down, say
                open.cancelEnded();
              }
            });
  }

  /**
   * {@code duration} in nanoseconds, or the longest there is when it does not fit a long (about 292
   * years; gRPC cuts a deadline at 100 years anyway).
   */
  private static long nanos(Duration duration) {
    try {
      return duration.toNanos();
    } catch (ArithmeticException tooLong) {
      return duration.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
  }

  /**
   * The name of the first ASCII header whose value grpc-java would not send (a character outside
   * space to tilde, such as a token's trailing newline), or null if it sends them all.
   */
  private static String invalidHeader(Metadata headers) {
    for (String name : headers.keys()) {
      if (name.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
        continue;
      }
      for (String value : headers.getAll(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER))) {
        if (!value.chars().allMatch(c -> c >= 0x20 && c <= 0x7e)) {
          return name;
        }
      }
    }
    return null;
  }

  /** Every model the server serves, in its catalog order. */
  public List<Model> listModels() {
    return listModels("");
  }

  /**
   * The models of {@code provider} the server serves, in its catalog order; every provider's when
   * empty.
   *
   * @throws CallException if the call ends with a status other than OK
   */
  public List<Model> listModels(String provider) {
    ListModelsRequest request = ListModelsRequest.newBuilder().setProvider(provider).build();
    try {
      return catalog().listModels(request).getModelsList();
    } catch (StatusRuntimeException error) {
      throw CallException.of(error.getStatus());
    }
  }

  /** The model {@code id} of the only provider that serves it. */
  public Model getModel(String id) {
    return getModel(id, "");
  }

  /**
   * The model {@code id} of {@code provider} (empty: the only provider that serves it).
   *
   * @throws CallException if the call ends with a status other than OK: NOT_FOUND when the server
   *     does not serve the model
   */
  public Model getModel(String id, String provider) {
    GetModelRequest request = GetModelRequest.newBuilder().setProvider(provider).setId(id).build();
    GetModelResponse response;
    try {
      response = catalog().getModel(request);
    } catch (StatusRuntimeException error) {
      throw CallException.of(error.getStatus());
    }
    if (!response.hasModel()) {
      throw new CallException("INTERNAL", "the server answered GetModel without a model");
    }
    return response.getModel();
  }

  private ModelServiceGrpc.ModelServiceBlockingStub catalog() {
    if (open.isClosed()) { // grpc-java would say UNAVAILABLE, "Channel shutdown invoked"
      throw new CallException(Status.Code.CANCELLED.name(), CLIENT_CLOSED);
    }
    return ModelServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(CATALOG_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * Shut the channel down. Streams still open end first, with an ABORTED {@code error} event,
   * {@link #CLIENT_CLOSED}, and no {@code failure()}; streams started from now on end that way at
   * once, and catalog calls throw {@link CallException} CANCELLED. The Cancel calls of the streams
   * the server keeps get up to {@link #CANCEL_TIMEOUT} to reach it before the channel goes.
   */
  @Override
  public void close() {
    // Ended before the channel cancels their calls, so that no consumer sees that as a failure.
    for (AssistantMessageEventStream events : open.close()) {
      events.cancel(CLIENT_CLOSED, StopReason.STOP_REASON_ABORTED);
    }
    try {
      open.awaitCancels(CANCEL_TIMEOUT); // the servers' streams are told before the channel goes
      channel.shutdownNow();
      channel.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException interrupted) {
      channel.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The stream of one call: it sends the Cancel of the stream the server keeps when the caller
   * cancels it (its own cancel, a consumer interrupted, the client closed).
   */
  private static final class ModelCallStream extends AssistantMessageEventStream {
    private final Consumer<String> cancelKept;

    ModelCallStream(long maxMessageBytes, Consumer<String> cancelKept) {
      super(maxMessageBytes);
      this.cancelKept = cancelKept;
    }

    @Override
    protected void cancelled() {
      String kept = streamId();
      if (!kept.isEmpty()) {
        cancelKept.accept(kept);
      }
    }
  }

  /**
   * Reads one call into its stream, on the stream's producer thread: the first call, its fallback
   * to Stream, and the Resume calls that go on from it when it is cut off, as one stream.
   */
  private static final class Receiver {
    private final AssistantMessageEventStream events;
    private final Channel target;
    private final StreamRequest request;
    private final CallOptions options; // the deadline, an instant, holds for every call
    private final Numbering numbering;
    private boolean batched;
    private int received; // events applied, not messages: every index counts events
    private int resumes; // in a row, since the last event applied

    Receiver(
        AssistantMessageEventStream events,
        Channel target,
        StreamRequest request,
        CallOptions options,
        boolean batched) {
      this.events = events;
      this.target = target;
      this.request = request;
      this.options = options;
      this.batched = batched;
      this.numbering = new Numbering(request.getCoalesceDeltas());
    }

    void receive() throws InterruptedException {
      // The calls belong to this context: cancelling it ends the one running wherever the loop
      // stands.
      Context.CancellableContext call = Context.current().withCancellation();
      Context outer = call.attach();
      try {
        Iterator<Batched> messages =
            ClientCalls.blockingServerStreamingCall(
                target, batched ? Batched.STREAM_BATCHED : Batched.STREAM, options, request);
        while (true) {
          boolean more;
          try {
            more = messages.hasNext();
          } catch (StatusRuntimeException error) {
            Status.Code code = error.getStatus().getCode();
            if (batched && received == 0 && code == Status.Code.UNIMPLEMENTED) {
              // A server without StreamBatched: the same request goes to Stream.
              batched = false;
              messages =
                  ClientCalls.blockingServerStreamingCall(target, Batched.STREAM, options, request);
              continue;
            }
            // UNAVAILABLE is a connection lost rather than a call refused.
            Iterator<Batched> resumed = code == Status.Code.UNAVAILABLE ? resumed() : null;
            if (resumed == null) {
              throw error;
            }
            messages = resumed;
            continue;
          }
          if (!more) {
            Iterator<Batched> resumed = resumed(); // ended OK, but without its terminal event
            if (resumed == null) {
              break;
            }
            messages = resumed;
            continue;
          }
          Batched message = messages.next();
          for (ByteString event : message.events()) {
            if (!deliver(event)) {
              return;
            }
          }
          if (message.malformed() != null) {
            String detail = "cannot decode the batch: " + message.malformed();
            events.fail(
                new StreamProtocolException(received, StreamRule.STREAM_RULE_EVENT_DECODE, detail));
            return;
          }
        }
        events.endWithoutTerminal();
      } catch (StreamProtocolException broken) {
        events.fail(broken);
      } catch (RuntimeException error) {
        Status status = Status.fromThrowable(error);
        String code = status.getCode().name();
        String description = status.getDescription();
        String message = description == null || description.isEmpty() ? code : description;
        events.fail(StopReason.STOP_REASON_ERROR, message, StreamFailure.ofStatus(code, message));
      } finally {
        call.detach(outer);
        call.cancel(null);
      }
    }

    /**
     * The Resume call that goes on after the last event applied, made once the backoff has passed;
     * null when the call cannot be resumed: no stream id, the attempts or the deadline used up.
     */
    private Iterator<Batched> resumed() throws InterruptedException {
      String streamId = events.streamId();
      if (streamId.isEmpty() || resumes >= MAX_RESUMES || events.isDone()) {
        return null;
      }
      long wait = RESUME_BACKOFF.toNanos() << resumes;
      Deadline deadline = options.getDeadline();
      if (deadline != null && deadline.timeRemaining(TimeUnit.NANOSECONDS) <= wait) {
        return null;
      }
      resumes += 1;
      TimeUnit.NANOSECONDS.sleep(wait); // cancel() interrupts it
      batched = false; // Resume streams single events, and has no fallback
      ResumeRequest resume =
          ResumeRequest.newBuilder()
              .setStreamId(streamId)
              .setAfterSeq(numbering.last())
              .setCoalesceDeltas(request.getCoalesceDeltas())
              .build();
      return ClientCalls.blockingServerStreamingCall(target, Batched.RESUME, options, resume);
    }

    /**
     * Decode {@code data}, the next event of the stream, and send it unless it is a repeat; false
     * once the stream has ended, by this event's failure to decode or by a terminal event (anything
     * after it is ignored: the call is then cancelled).
     *
     * @throws StreamProtocolException if the event breaks a stream rule
     */
    private boolean deliver(ByteString data) throws InterruptedException {
      int index = received;
      ModelEvent event;
      try {
        event = ModelEvent.parseFrom(data);
      } catch (InvalidProtocolBufferException | RuntimeException error) {
        // Untrusted bytes: whatever goes wrong reading them is this one rule.
        String detail =
            "cannot decode a ModelEvent from %d bytes: %s"
                .formatted(data.size(), error.getMessage());
        events.fail(
            new StreamProtocolException(index, StreamRule.STREAM_RULE_EVENT_DECODE, detail));
        return false;
      }
      if (!numbering.admit(event, index)) {
        return true; // a repeat of an event applied before, which a resumed server may send
      }
      received += 1;
      resumes = 0;
      events.send(event); // waits while the consumers are behind
      return !events.isDone();
    }
  }

  /** The streams of the clients on one channel that are still running, until it is closed. */
  private static final class OpenStreams {
    private final Set<AssistantMessageEventStream> running =
        Collections.newSetFromMap(new IdentityHashMap<>());
    private boolean closed;
    private int cancelling; // Cancel calls under way

    /** Count {@code events} as running; false once the channel is closed. */
    synchronized boolean add(AssistantMessageEventStream events) {
      return !closed && running.add(events);
    }

    synchronized void remove(AssistantMessageEventStream events) {
      running.remove(events);
    }

    synchronized boolean isClosed() {
      return closed;
    }

    synchronized void cancelStarted() {
      cancelling += 1;
    }

    synchronized void cancelEnded() {
      cancelling -= 1;
      notifyAll();
    }

    /** Wait until no Cancel call is under way, for {@code timeout} at most. */
    synchronized void awaitCancels(Duration timeout) throws InterruptedException {
      long end = System.nanoTime() + timeout.toNanos();
      for (long left = timeout.toNanos(); cancelling > 0 && left > 0; ) {
        TimeUnit.NANOSECONDS.timedWait(this, left);
        left = end - System.nanoTime();
      }
    }

    /** Mark the channel closed, and return the streams still running. */
    synchronized List<AssistantMessageEventStream> close() {
      closed = true;
      List<AssistantMessageEventStream> still = new ArrayList<>(running);
      running.clear();
      return still;
    }
  }
}
