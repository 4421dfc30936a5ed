package pi.proto;

import io.grpc.InsecureServerCredentials;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
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
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import pi.ai.v1.Event.ModelEvent;

/**
 * A ModelService that answers every call with the given messages, as raw bytes, then the given
 * status, or holds the call open until the client cancels it: it sends what a correct server never
 * does (no terminal event, undecodable bytes, ...).
 */
final class RawServer implements AutoCloseable {
  private final Server server;
  private final CountDownLatch cancelled;

  private RawServer(Server server, CountDownLatch cancelled) {
    this.server = server;
    this.cancelled = cancelled;
  }

  /**
   * Serve on a free port of the loopback interface.
   *
   * @param status how each call ends after the messages; null to hold it open
   */
  static RawServer start(List<byte[]> messages, Status status) throws IOException {
    CountDownLatch cancelled = new CountDownLatch(1);
    MethodDescriptor<byte[], byte[]> stream =
        MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
            .setFullMethodName(
                MethodDescriptor.generateFullMethodName("pi.ai.v1.ModelService", "Stream"))
            .setRequestMarshaller(new RawBytes())
            .setResponseMarshaller(new RawBytes())
            .build();
    ServerServiceDefinition service =
        ServerServiceDefinition.builder("pi.ai.v1.ModelService")
            .addMethod(
                stream,
                ServerCalls.asyncServerStreamingCall(
                    (request, responses) -> {
                      ((ServerCallStreamObserver<byte[]>) responses)
                          .setOnCancelHandler(cancelled::countDown);
                      messages.forEach(responses::onNext);
                      if (status == null) {
                        return;
                      }
                      if (status.isOk()) {
                        responses.onCompleted();
                      } else {
                        responses.onError(status.asRuntimeException());
                      }
                    }))
            .build();
    InetSocketAddress loopback = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    Server server =
        NettyServerBuilder.forAddress(loopback, InsecureServerCredentials.create())
            .addService(service)
            .build()
            .start();
    return new RawServer(server, cancelled);
  }

  /** Wait until the client cancels a call. */
  void awaitCancelled() throws InterruptedException {
    cancelled.await();
  }

  /** The wire form of each event. */
  static List<byte[]> wire(List<ModelEvent> events) {
    return events.stream().map(ModelEvent::toByteArray).toList();
  }

  String target() {
    return "127.0.0.1:" + server.getPort();
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow();
    server.awaitTermination(10, TimeUnit.SECONDS);
  }

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
