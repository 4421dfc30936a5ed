package io.github.piproto;

import io.github.piproto.ai.v1.GetModelResponse;
import io.github.piproto.ai.v1.ListModelsResponse;
import io.github.piproto.ai.v1.Model;
import io.github.piproto.ai.v1.ModelEvent;
import io.github.piproto.ai.v1.ModelServiceGrpc;
import io.github.piproto.ai.v1.StreamRequest;
import io.grpc.Contexts;
import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A ModelService in the test's own process, on a free port of the loopback interface, that plays
 * whatever its script says: events, raw bytes no correct server sends, statuses and pauses. Its
 * catalog (ListModels, GetModel) serves the models it was given.
 */
final class FakeModelServer implements AutoCloseable {
  /** What the server does with one call. */
  @FunctionalInterface
  interface Script {
    void play(StreamRequest request, Metadata headers, Call call) throws Exception;
  }

  /** One call, as the script sees it. */
  static final class Call {
    private final ServerCallStreamObserver<byte[]> responses;
    private final CountDownLatch cancelled;

    private Call(ServerCallStreamObserver<byte[]> responses, CountDownLatch cancelled) {
      this.responses = responses;
      this.cancelled = cancelled;
    }

    void send(ModelEvent event) {
      sendBytes(event.toByteArray());
    }

    /** Send these bytes as one message, whatever they hold. */
    void sendBytes(byte[] data) {
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
  }

  private final Server server;
  private final CountDownLatch anyCancelled = new CountDownLatch(1);

  private FakeModelServer(Script script, List<Model> catalog) throws IOException {
    MethodDescriptor<StreamRequest, byte[]> stream =
        ModelServiceGrpc.getStreamMethod().toBuilder(
                ModelServiceGrpc.getStreamMethod().getRequestMarshaller(), new RawBytes())
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
    ServerServiceDefinition service =
        ServerServiceDefinition.builder(ModelServiceGrpc.SERVICE_NAME)
            .addMethod(
                stream,
                ServerCalls.asyncServerStreamingCall(
                    (request, observer) -> {
                      ServerCallStreamObserver<byte[]> responses =
                          (ServerCallStreamObserver<byte[]>) observer;
                      CountDownLatch cancelled = new CountDownLatch(1);
                      responses.setOnCancelHandler(
                          () -> {
                            cancelled.countDown();
                            anyCancelled.countDown();
                          });
                      // The script runs on a thread of its own, so that it may wait while the
                      // call's own executor delivers the client's cancel.
                      Call call = new Call(responses, cancelled);
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

  /** Serve {@code script} until closed. */
  static FakeModelServer start(Script script) throws IOException {
    return new FakeModelServer(script, List.of());
  }

  /** Serve {@code script}, and {@code catalog} as the models, until closed. */
  static FakeModelServer start(Script script, List<Model> catalog) throws IOException {
    return new FakeModelServer(script, catalog);
  }

  /** The host:port to connect to. */
  String target() {
    return "127.0.0.1:" + server.getPort();
  }

  /** Wait until a client cancels a call; true if one did within {@code duration}. */
  boolean awaitCancelled(Duration duration) throws InterruptedException {
    return anyCancelled.await(duration.toMillis(), TimeUnit.MILLISECONDS);
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
