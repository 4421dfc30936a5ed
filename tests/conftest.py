"""What every test process shares."""

import os

# A process that runs gRPC and then forks (every subprocess.Popen does) restarts grpcio's poller
# thread in the child when fork support is on, and the child, closing its descriptors before
# exec, can abort there on the poller's closed epoll descriptor (grpc/grpc#43055): a test's
# subprocess then dies of SIGABRT before it runs. The tests fork no process that uses gRPC
# without exec, so they need no fork support. Set before any test module imports grpc.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
