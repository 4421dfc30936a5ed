package io.github.piproto;

import com.google.protobuf.ByteString;
import io.github.piproto.ai.v1.CancelRequest;
import io.github.piproto.ai.v1.CancelResponse;
import io.github.piproto.ai.v1.GetModelResponse;
import io.github.piproto.ai.v1.ListModelsResponse;
import io.github.piproto.ai.v1.Model;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.ModelServiceGrpc;
import io.github.piproto.ai.v1.ResumeRequest;
import io.github.piproto.ai.v1.StreamBatchedView;
import io.github.piproto.ai.v1.StreamRequest;
import io.grpc.Contexts;
import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A ModelService in the test's own process, on a free port of the loopback interface, that plays
 * whatever its script says: events, raw bytes no correct server sends, statuses and pauses. It
 * serves Stream and StreamBatched with the same script (or Stream alone, as an older server); on
 * StreamBatched each event the script sends is a batch of its own unless it sends a batch. Its
 * catalog (ListModels, GetModel) serves the models it was given. Resume plays a script of its own
 * (NOT_FOUND without one), and Cancel records each request and answers it cancelled.
 */
final class FakeModelServer implements AutoCloseable {
  /** What the server does with one call. */
  @FunctionalInterface
  interface Script {
    void play(StreamRequest request, Metadata headers, Call call) throws Exception;
  }

  /** What the server does with one Resume call; its responses are single events. */
  @FunctionalInterface
  interface ResumeScript {
    void play(ResumeRequest request, Call call) throws Exception;
  }

  /** One call, as the script sees it. */
  static final class Call {
    private final ServerCallStreamObserver<byte[]> responses;
    private final CountDownLatch cancelled;
    private final boolean batched;

    private Call(
        ServerCallStreamObserver<byte[]> responses, CountDownLatch cancelled, boolean batched) {
      this.responses = responses;
      this.cancelled = cancelled;
      this.batched = batched;
    }

    /** Whether this is a StreamBatched call. */
    boolean batched() {
      return batched;
    }

    void send(ModelEvent event) {
      sendBytes(event.toByteArray());
    }

    /** Send these bytes as one event, whatever they hold: a message, or a batch of one. */
    void sendBytes(byte[] event) {
      sendBatchBytes(event);
    }

    /** Send these events in one batch (on Stream, one message each). */
    void sendBatch(ModelEvent... events) {
      byte[][] encoded = new byte[events.length][];
      for (int index = 0; index < events.length; index++) {
        encoded[index] = events[index].toByteArray();
      }
      sendBatchBytes(encoded);
    }

    /** Send these bytes as the events of one batch, whatever they hold (on Stream, one each). */
    void sendBatchBytes(byte[]... events) {
      if (!batched) {
        for (byte[] event : events) {
          sendMessage(event);
        }
        return;
      }
      StreamBatchedView.Builder batch = StreamBatchedView.newBuilder();
      for (byte[] event : events) {
        batch.addEvents(ByteString.copyFrom(event));
      }
      sendMessage(batch.build().toByteArray());
    }

    /** Send these bytes as one message of the call as they are, whatever they hold. */
    void sendMessage(byte[] data) {
      if (cancelled.getCount() > 0) {
        responses.onNext(data);
      }
    }

    void finish() {
      if (cancelled.getCount() > 0) {
        responses.onCompleted();
      }
    }

    void fail(Status status) {
      if (cancelled.getCount() > 0) {
        responses.onError(status.asRuntimeException());
      }
    }

    /** Wait for {@code duration}, or until the client goes away; true if it went away. */
    boolean pause(Duration duration) throws InterruptedException {
      return cancelled.await(duration.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Wait until the client goes away (it cancels the call, or its deadline passes): a server gone
     * quiet, which no time passing ends. The test's own timeout bounds the wait.
     */
    void awaitGone() throws InterruptedException {
      cancelled.await();
    }
  }

  private final Server server;
  private final CountDownLatch anyCancelled = new CountDownLatch(1);
  private final List<String> methods = new CopyOnWriteArrayList<>();
  private final List<ResumeRequest> resumes = new CopyOnWriteArrayList<>();
  private final BlockingQueue<CancelRequest> cancels = new LinkedBlockingQueue<>();
  private final BlockingQueue<Metadata> cancelHeaders = new LinkedBlockingQueue<>();

  private FakeModelServer(Script script, List<Model> catalog, boolean batched) throws IOException {
    this(script, null, catalog, batched);
  }

  private FakeModelServer(Script script, ResumeScript resume, List<Model> catalog, boolean batched)
      throws IOException {
    MethodDescriptor<StreamRequest, byte[]> stream =
        ModelServiceGrpc.getStreamMethod().toBuilder(
                ModelServiceGrpc.getStreamMethod().getRequestMarshaller(), new RawBytes())
            .build();
    MethodDescriptor<StreamRequest, byte[]> streamBatched =
        ModelServiceGrpc.getStreamBatchedMethod().toBuilder(
                ModelServiceGrpc.getStreamBatchedMethod().getRequestMarshaller(), new RawBytes())
            .build();
    io.grpc.Context.Key<Metadata> headersKey = io.grpc.Context.key("headers");
    ServerInterceptor keepHeaders =
        new ServerInterceptor() {
          @Override
          public <Q, A> io.grpc.ServerCall.Listener<Q> interceptCall(
              io.grpc.ServerCall<Q, A> call,
              Metadata headers,
              io.grpc.ServerCallHandler<Q, A> next) {
            return Contexts.interceptCall(
                io.grpc.Context.current().withValue(headersKey, headers), call, headers, next);
          }
        };
    ServerServiceDefinition.Builder definition =
        ServerServiceDefinition.builder(ModelServiceGrpc.SERVICE_NAME);
    if (batched) { // without it, StreamBatched is answered UNIMPLEMENTED, as by an older server
      definition.addMethod(streamBatched, played(script, headersKey, true));
    }
    MethodDescriptor<ResumeRequest, byte[]> resumeMethod =
        ModelServiceGrpc.getResumeMethod().toBuilder(
                ModelServiceGrpc.getResumeMethod().getRequestMarshaller(), new RawBytes())
            .build();
    ServerServiceDefinition service =
        definition
            .addMethod(stream, played(script, headersKey, false))
            .addMethod(resumeMethod, resumed(resume))
            .addMethod(
                ModelServiceGrpc.getCancelMethod(),
                ServerCalls.asyncUnaryCall(
                    (request, observer) -> {
                      cancelHeaders.add(headersKey.get());
                      cancels.add(request);
                      observer.onNext(CancelResponse.newBuilder().setCancelled(true).build());
                      observer.onCompleted();
                    }))
            .addMethod(
                ModelServiceGrpc.getListModelsMethod(),
                ServerCalls.asyncUnaryCall(
                    (request, observer) -> {
                      List<Model> models =
                          catalog.stream()
                              .filter(
                                  model ->
                                      request.getProvider().isEmpty()
                                          || model.getProvider().equals(request.getProvider()))
                              .toList();
                      observer.onNext(ListModelsResponse.newBuilder().addAllModels(models).build());
                      observer.onCompleted();
                    }))
            .addMethod(
                ModelServiceGrpc.getGetModelMethod(),
                ServerCalls.asyncUnaryCall(
                    (request, observer) -> {
                      List<Model> found =
                          catalog.stream()
                              .filter(model -> model.getId().equals(request.getId()))
                              .filter(
                                  model ->
                                      request.getProvider().isEmpty()
                                          || model.getProvider().equals(request.getProvider()))
                              .toList();
                      if (found.size() == 1) {
                        observer.onNext(
                            GetModelResponse.newBuilder().setModel(found.get(0)).build());
                        observer.onCompleted();
                      } else {
                        String detail = "no model " + request.getId() + " is served";
                        observer.onError(Status.NOT_FOUND.withDescription(detail).asException());
                      }
                    }))
            .build();
    InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    this.server =
        NettyServerBuilder.forAddress(loopback, InsecureServerCredentials.create())
            .addService(ServerInterceptors.intercept(service, keepHeaders))
            .build()
            .start();
  }

  /** The handler of Stream or StreamBatched: {@code script} played on a thread of its own. */
  private ServerCallHandler<StreamRequest, byte[]> played(
      Script script, io.grpc.Context.Key<Metadata> headersKey, boolean batched) {
    return ServerCalls.asyncServerStreamingCall(
        (request, observer) -> {
          methods.add(batched ? "StreamBatched" : "Stream");
          ServerCallStreamObserver<byte[]> responses = (ServerCallStreamObserver<byte[]>) observer;
          CountDownLatch cancelled = new CountDownLatch(1);
          responses.setOnCancelHandler(
              () -> {
                cancelled.countDown();
                anyCancelled.countDown();
              });
          // The script runs on a thread of its own, so that it may wait while the call's own
          // executor delivers the client's cancel.
          Call call = new Call(responses, cancelled, batched);
          Metadata headers = headersKey.get();
          Runnable play =
              () -> {
                try {
                  script.play(request, headers, call);
                } catch (Exception error) {
                  call.fail(Status.INTERNAL.withCause(error));
                }
              };
          Thread player = new Thread(io.grpc.Context.current().wrap(play));
          player.setDaemon(true);
          player.start();
        });
  }

  /** The handler of Resume: {@code resume} played on a thread of its own; NOT_FOUND without. */
  private ServerCallHandler<ResumeRequest, byte[]> resumed(ResumeScript resume) {
    return ServerCalls.asyncServerStreamingCall(
        (request, observer) -> {
          resumes.add(request);
          ServerCallStreamObserver<byte[]> responses = (ServerCallStreamObserver<byte[]>) observer;
          if (resume == null) {
            responses.onError(Status.NOT_FOUND.withDescription("no stream kept").asException());
            return;
          }
          CountDownLatch cancelled = new CountDownLatch(1);
          responses.setOnCancelHandler(cancelled::countDown);
          Call call = new Call(responses, cancelled, false);
          Runnable play =
              () -> {
                try {
                  resume.play(request, call);
                } catch (Exception error) {
                  call.fail(Status.INTERNAL.withCause(error));
                }
              };
          Thread player = new Thread(io.grpc.Context.current().wrap(play));
          player.setDaemon(true);
          player.start();
        });
  }

  /**
   * Serve {@code script} on Stream and StreamBatched, and {@code resume} on Resume, until closed.
   */
  static FakeModelServer startResumable(Script script, ResumeScript resume) throws IOException {
    return new FakeModelServer(script, resume, List.of(), true);
  }

  /** The Resume calls made so far, in order. */
  List<ResumeRequest> resumes() {
    return List.copyOf(resumes);
  }

  /** The next Cancel call a client makes, waiting {@code duration} for it; null if none came. */
  CancelRequest takeCancel(Duration duration) throws InterruptedException {
    return cancels.poll(duration.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The next Cancel call a client makes, once it comes; the test's own timeout bounds the wait. */
  CancelRequest takeCancel() throws InterruptedException {
    return cancels.take();
  }

  /** The headers of the next Cancel call, once it comes; the test's own timeout bounds the wait. */
  Metadata takeCancelHeaders() throws InterruptedException {
    return cancelHeaders.take();
  }

  /** Serve {@code script} on Stream and StreamBatched until closed. */
  static FakeModelServer start(Script script) throws IOException {
    return new FakeModelServer(script, List.of(), true);
  }

  /** Serve {@code script}, and {@code catalog} as the models, until closed. */
  static FakeModelServer start(Script script, List<Model> catalog) throws IOException {
    return new FakeModelServer(script, catalog, true);
  }

  /** Serve {@code script} on Stream alone, as a server without StreamBatched, until closed. */
  static FakeModelServer startWithoutBatched(Script script) throws IOException {
    return new FakeModelServer(script, List.of(), false);
  }

  /** The stream methods called so far, in order: "Stream" or "StreamBatched". */
  List<String> methods() {
    return List.copyOf(methods);
  }

  /** The host:port to connect to. */
  String target() {
    return "127.0.0.1:" + server.getPort();
  }

  /** Wait until a client cancels a call; the test's own timeout bounds the wait. */
  void awaitCancelled() throws InterruptedException {
    anyCancelled.await();
  }

  /** Stop at once, dropping the calls in flight: what a crashed server does. */
  void kill() {
    server.shutdownNow();
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow();
    server.awaitTermination(10, TimeUnit.SECONDS);
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
