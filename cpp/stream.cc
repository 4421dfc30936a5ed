// A pi.ai.v1.ModelService client in C++, from code that `buf generate` made out of the pi-proto
// schema archive alone (see README.md). It sends the README request (one user message,
// "请读取 README"), prints the kind of each event it receives, then the text of the terminal
// event's message and its stop reason:
//
//   ./stream 127.0.0.1:50051
//   start
//   text_start
//   ...
//   done
//   我先读取项目说明。
//   TOOL_USE
//
// It exits 0 after a `done` event, 1 after an `error` event, a non-OK status or a stream that
// ended without a terminal event, and 2 when used wrongly.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "pi/ai/v1/event.pb.h"
#include "pi/ai/v1/message.pb.h"
#include "pi/ai/v1/service.grpc.pb.h"
#include "pi/ai/v1/service.pb.h"

namespace {

// The name of the member set in the event's oneof, which is pi's event type ("text_delta").
std::string EventKind(const pi::ai::v1::ModelEvent& event) {
  const auto* field = event.GetReflection()->GetOneofFieldDescriptor(
      event, pi::ai::v1::ModelEvent::descriptor()->FindOneofByName("event"));
  return field == nullptr ? "(none)" : field->name();
}

// The text blocks of a message, joined with "\n", as every pi-proto runtime's textOf.
std::string TextOf(const pi::ai::v1::AssistantMessage& message) {
  std::string text;
  bool first = true;
  for (const auto& block : message.content()) {
    if (!block.has_text()) continue;
    if (!first) text += "\n";
    text += block.text().text();
    first = false;
  }
  return text;
}

// "TOOL_USE" for STOP_REASON_TOOL_USE.
std::string ReasonName(pi::ai::v1::StopReason reason) {
  const std::string name = pi::ai::v1::StopReason_Name(reason);
  const std::string prefix = "STOP_REASON_";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " HOST:PORT\n";
    return 2;
  }
  const std::string target = argv[1];

  // README example: begin
  // The request: one user message with one text block.
  pi::ai::v1::StreamRequest request;
  request.mutable_context()->add_messages()->mutable_user()->add_content()->mutable_text()->set_text(
      "请读取 README");

  // Plaintext HTTP/2 to host:port, where `pi-proto serve` listens.
  auto stub = pi::ai::v1::ModelService::NewStub(
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  grpc::ClientContext call;
  call.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  std::unique_ptr<grpc::ClientReader<pi::ai::v1::ModelEvent>> reader = stub->Stream(&call, request);

  pi::ai::v1::ModelEvent event;
  pi::ai::v1::ModelEvent terminal;  // the done or error event; nothing after it counts
  bool ended = false;
  while (reader->Read(&event)) {
    if (ended) continue;
    std::cout << EventKind(event) << "\n";  // start, text_start, text_delta, ..., done
    if (event.has_done() || event.has_error()) {
      terminal = event;
      ended = true;
    }
  }
  const grpc::Status status = reader->Finish();
  if (!status.ok()) {
    std::cerr << "error: status " << status.error_code() << ": " << status.error_message() << "\n";
    return 1;
  }
  if (!ended) {
    std::cerr << "error: stream ended without a terminal event\n";
    return 1;
  }
  const pi::ai::v1::AssistantMessage& message =
      terminal.has_done() ? terminal.done().message() : terminal.error().message();
  std::cout << TextOf(message) << "\n" << ReasonName(message.stop_reason()) << "\n";
  // README example: end
  if (terminal.has_error()) {
    std::cerr << "error: " << message.error_message() << "\n";
    return 1;
  }
  return 0;
}
