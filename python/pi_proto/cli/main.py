"""The `pi-proto` command: serve models, stream from a server, or run the demo."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import math
import resource
import signal
import ssl
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from rich.console import Console

from .._gen.types.pi.ai.v1 import AgentContext
from ..grpc.client import DEFAULT_TIMEOUT_SECONDS, CallError, ModelCallStream, ModelClient
from ..grpc.gate import Gate
from ..grpc.requests import MAX_REQUEST_BYTES, Refused, ServerLimits
from ..grpc.server import ModelServer, Tls
from ..ir.events import FAILED
from ..ir.messages import agent_message, user_message
from ..models import telemetry
from ..models.providers import ProviderModel, load_models
from ..models.scripted import ScriptedModel
from ..resume import MemoryStore
from ..resume.memory import MAX_BYTES as RESUME_BYTES
from ..resume.memory import RETENTION_SECONDS, UNATTENDED_SECONDS
from ..resume.redis import RedisStore, redacted
from ..stream.event_stream import ServedModel
from ..transcripts.convert import convert
from ..wire.codec import to_json
from ..wire.files import check_regular_file, read_regular_file
from .demo import run_demo
from .render import describe_model, print_json_lines, print_live

if TYPE_CHECKING:
    from ..web import AsgiServer
from ..grpc.workers import run_workers, watch_supervisor


async def serve(args: argparse.Namespace) -> int:
    if args.models is not None and args.script is not None:
        raise ValueError("--models and --script go apart: serve real models or a script")
    raise_file_limit()
    log_to_stderr()
    if telemetry.configure():
        print("pi-proto serve: exporting traces and metrics of provider calls (OTEL_*)", file=sys.stderr)
    models: ServedModel | list[ProviderModel]
    if args.models is not None:
        models = load_models(args.models)
    else:
        options = {"delta_size": args.delta_size, "delay": args.delay}
        models = ScriptedModel.from_file(args.script, **options) if args.script else ScriptedModel.readme(**options)
    if (args.tls_cert is None) != (args.tls_key is None):
        raise ValueError("--tls-cert and --tls-key go together")
    tls = None if args.tls_cert is None else Tls.from_files(args.tls_cert, args.tls_key)
    token = read_token(args.token_file)
    if token is not None and tls is None:
        print(
            "pi-proto serve: warning: --token-file without --tls-cert: the token travels in clear text", file=sys.stderr
        )
    limits = ServerLimits(
        max_concurrent_streams=args.max_streams,
        max_request_bytes=args.max_request_bytes,
        max_messages=args.max_messages,
        max_blocks=args.max_blocks,
        stream_timeout=args.stream_timeout,
        max_queued_bytes=args.max_queued_bytes,
    )
    server = ModelServer(
        models,
        host=args.host,
        port=args.port,
        reflection=not args.no_reflection,
        tls=tls,
        token=token,
        limits=limits,
        flush_window=args.flush_ms / 1000,
        reuse_port=args.worker is not None,
        streams=kept_streams(args),
    )
    http: AsgiServer | None = None
    if args.http_port is not None:
        web = web_module()
        from ..web.hosts import allowed_host  # the http extra, as web_module() checked

        try:
            for name in args.allowed_host:
                allowed_host(name)
        except ValueError as error:
            raise ValueError(f"--allowed-host: {error}") from None
        try:
            http = web.HttpServer(
                server,
                host=args.host,
                port=args.http_port,
                ssl_context=http_tls(args),
                reuse_port=args.worker is not None,
                cors_origins=args.cors_origin,
                ui=not args.no_ui,
                limits=web.HttpLimits(max_connections=args.max_connections, header_timeout=args.header_timeout),
                allowed_hosts=args.allowed_host,
            )
        except ValueError as error:  # an origin that is not one
            raise ValueError(f"--cors-origin: {error}") from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    if args.token_file is not None:
        loop.add_signal_handler(signal.SIGHUP, reload_token, server.gate, args.token_file)
    if args.worker is not None:
        watch_supervisor(args.worker, stop.set)
    if isinstance(server.streams, RedisStore):
        await server.streams.start()
    await server.start()
    if http is not None:
        await _start_beside(http, server)
    tune_collector()
    print(f"listening on {server.target}", flush=True)  # the line scripts wait for: always the first
    if http is not None:
        print(f"http on {http.target}", flush=True)
    served = ", ".join(f"{model.info.provider}/{model.info.id}" for model in server.models)
    _say(f"pi-proto serve: serving {served}")
    await stop.wait()
    if http is None:
        await server.stop(grace=args.grace)
    else:
        await asyncio.gather(server.stop(grace=args.grace), http.stop(grace=args.grace))
    if isinstance(server.streams, RedisStore):
        await server.streams.close_redis()
    return 0


def _say(line: str) -> None:
    """A line on stderr in one write: `--workers` processes share one stderr, and print() writes a
    line's text and its newline apart when stderr is unbuffered, so two lines could mix."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def kept_streams(args: argparse.Namespace) -> MemoryStore | None:
    """Where `serve` keeps its streams: nowhere with --no-resume, Redis with --redis, else memory."""
    if args.no_resume:
        return None
    bounds = {"max_bytes": args.resume_bytes, "retention": args.resume_retention, "unattended": args.resume_unattended}
    if args.redis is None:
        return MemoryStore(**bounds)
    try:
        # A reader of another replica's stream waits for an event no longer than a stream may run;
        # a call Redis cannot serve is refused with its status (UNAVAILABLE, DATA_LOSS).
        return RedisStore(args.redis, **bounds, max_wait=args.stream_timeout, refuse=Refused)
    except ModuleNotFoundError as error:
        raise ValueError(f"--redis needs the {error.name} package: pip install 'pi-proto[redis]'") from None
    except ValueError as error:  # a URL redis cannot read
        raise ValueError(f"--redis {redacted(args.redis)}: {error}") from None


# Objects allocated, net, between two collections of the youngest generation (Python's default: 700).
YOUNG_COLLECTION_THRESHOLD = 20_000


def tune_collector() -> None:
    """Fit the cyclic garbage collector to a streaming server: a call allocates a few objects per
    event, nearly all freed by reference counting, so collecting the young ones every 700
    allocations cost about 6% of the server's CPU at saturation, and every 20,000 a fraction of it
    (while cycles hold at most some MB meanwhile). What startup made (modules, the schema, the
    models) lives as long as the process: frozen, the collector's full passes no longer walk it."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, middle, old)


def log_to_stderr() -> None:
    """What the library logs (a connection limit reached, say) as `pi-proto serve:` lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("pi-proto serve: %(message)s"))
    logger = logging.getLogger("pi_proto")
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    logger.propagate = False


def raise_file_limit() -> None:
    """Raise the soft limit of open files to the hard one, as Go programs do at start: a server
    holds a descriptor per connection, and the HTTP port's share is derived from this limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        with contextlib.suppress(OSError, ValueError):  # kept as it is: what is derived from it holds
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def web_module() -> ModuleType:
    """pi_proto.web, or a ValueError saying what to install when the `http` extra is missing."""
    try:
        from .. import web
    except ModuleNotFoundError as error:
        raise ValueError(f"--http-port needs the {error.name} package: pip install 'pi-proto[http]'") from None
    return web


def http_tls(args: argparse.Namespace) -> ssl.SSLContext | None:
    """The HTTP server's TLS, from the gRPC server's certificate and key (checked already)."""
    if args.tls_cert is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.tls_cert, args.tls_key)
    context.set_alpn_protocols(["h2", "http/1.1"])
    return context


async def _start_beside(http: AsgiServer, grpc_server: ModelServer) -> None:
    """Start the HTTP server; when it cannot listen, stop the gRPC server before failing."""
    try:
        await http.start()
    except OSError:
        await grpc_server.stop(0)
        raise


# A token is one word; a file larger than this is not a token file (JWTs are a few KiB).
MAX_TOKEN_FILE_BYTES = 64 * 1024


def read_token(path: Path | None) -> str | None:
    """The bearer token in `path` (surrounding whitespace removed), or None without a file; only a
    regular file is read, up to MAX_TOKEN_FILE_BYTES."""
    if path is None:
        return None
    try:
        token = read_regular_file(path, MAX_TOKEN_FILE_BYTES).decode("utf-8").strip()
    except ValueError as error:  # UnicodeDecodeError is one too
        raise ValueError(f"--token-file {path}: {error}") from None
    if not token:
        raise ValueError(f"--token-file {path}: the token file is empty")
    if any(character.isspace() or not character.isprintable() for character in token):
        raise ValueError(f"--token-file {path}: the token must be one word of printable characters")
    return token


# A CA bundle is some hundred KiB; this is room for any.
MAX_CA_FILE_BYTES = 4 * 1024 * 1024


def read_ca_file(path: Path | None) -> bytes | None:
    """The PEM certificates in `path`, or None without a file; as for token files, only a regular
    file is read, up to MAX_CA_FILE_BYTES."""
    if path is None:
        return None
    try:
        return read_regular_file(path, MAX_CA_FILE_BYTES)
    except ValueError as error:
        raise ValueError(f"--ca-file {path}: {error}") from None


def reload_token(gate: Gate, path: Path) -> None:
    """SIGHUP: the gate takes the token now in `path`, for every protocol it admits; when the file
    cannot be used, the old token stays and one line says why."""
    try:
        token = read_token(path)
    except ValueError as error:
        _say(f"pi-proto serve: SIGHUP: kept the previous token: {error}")
        return
    assert token is not None  # read_token returns None only without a path
    gate.set_token(token)
    _say(f"pi-proto serve: SIGHUP: reloaded the token from {path}")


async def stream(args: argparse.Namespace) -> int:
    context = AgentContext(messages=[agent_message(user_message(args.text))])
    root_certificates = read_ca_file(args.ca_file)
    async with ModelClient(
        args.target, root_certificates=root_certificates, token=read_token(args.token_file)
    ) as client:
        events = client.stream(context, provider=args.provider, model=args.model, timeout=args.timeout)
        # Ctrl-C or SIGTERM cancel the call: its ABORTED error event is printed like any other end.
        stopped_by: list[int] = []
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, _stop_stream, events, signum, stopped_by)
        try:
            if args.json:
                message = await print_json_lines(events)
            else:
                message = await print_live(Console(highlight=False), events)
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(signum)
    if stopped_by:
        return 128 + stopped_by[0]  # as a shell reports a program a signal stopped
    return 1 if message.stop_reason in FAILED else 0


def _stop_stream(events: ModelCallStream, signum: int, stopped_by: list[int]) -> None:
    stopped_by.append(signum)
    events.cancel(f"interrupted by {signal.Signals(signum).name}")


class Terminated(BaseException):
    """SIGTERM, raised where the program is, so that cleanups run as for Ctrl-C."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


async def models(args: argparse.Namespace) -> int:
    root_certificates = read_ca_file(args.ca_file)
    async with ModelClient(
        args.target, root_certificates=root_certificates, token=read_token(args.token_file)
    ) as client:
        try:
            served = await client.list_models(args.provider, timeout=args.timeout)
        except CallError as error:
            print(f"pi-proto models: {error}", file=sys.stderr)
            return 1
    for model in served:
        print(to_json(model) if args.json else describe_model(model))
    return 0


async def view(args: argparse.Namespace) -> int:
    """Serve the web page on a loopback port, opening `file` in its viewer, until Ctrl-C."""
    web = web_module()
    from ..web.page import MAX_VIEW_BYTES  # the http extra, as web_module() checked

    try:  # a file that cannot be read is refused before anything is served, without reading it
        check_regular_file(args.file, MAX_VIEW_BYTES)
    except ValueError as error:
        raise ValueError(f"{args.file}: {error}") from None
    server = ModelServer(ScriptedModel.readme())  # the page's playground plays the README trip
    http = web.HttpServer(server, host="127.0.0.1", port=args.port, view=args.file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    await http.start()
    print(f"viewing {args.file} at {http.url}/#view", flush=True)
    await stop.wait()
    await http.stop(grace=1.0)
    return 0


def convert_files(args: argparse.Namespace) -> int:
    """Run a conversion in the main thread, where Ctrl-C and SIGTERM stop it at once."""
    console = Console(stderr=True, highlight=False)
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        report = convert(args.input, args.output, console)
    except (KeyboardInterrupt, Terminated) as stop:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # stopping already: a second Ctrl-C changes nothing
        print(f"pi-proto convert: interrupted; {args.output} is unchanged", file=sys.stderr)
        return 130 if isinstance(stop, KeyboardInterrupt) else 128 + signal.SIGTERM
    finally:
        signal.signal(signal.SIGTERM, previous)
    for warning in report.warnings:  # "file:line: ...", as compilers name a line
        print(warning, file=sys.stderr)
    kinds = ", ".join(f"{count} {kind}" for kind, count in report.kinds.most_common())
    print(
        f"{args.input} ({report.input_bytes:,} bytes) → {args.output} ({report.output_bytes:,} bytes): "
        f"{report.kinds.total()} entries ({kinds or 'none'})"
    )
    return 0


async def demo(args: argparse.Namespace) -> int:
    await run_demo(Console(highlight=False), Path(args.root), delay=args.delay)
    return 0


def whole(low: int, high: int | None = None) -> Callable[[str], int]:
    """argparse's type for a whole number from `low` (to `high`)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low or (high is not None and value > high):
            limits = f"{low} or more" if high is None else f"from {low} to {high}"
            raise argparse.ArgumentTypeError(f"must be {limits}: {text!r}")
        return value

    return parse


def duration(unit: str = "seconds", *, zero: bool = True) -> Callable[[str], float]:
    """argparse's type for a finite duration in `unit`, not negative (above 0 unless `zero`)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of {unit}: {text!r}") from None
        if not (value >= 0 if zero else value > 0) or value == math.inf:  # NaN fails both comparisons
            least = "0 or more" if zero else "more than 0"
            raise argparse.ArgumentTypeError(f"must be {least} {unit}, and finite: {text!r}")
        return value

    return parse


PORT = whole(0, 65535)
HEADER_TIMEOUT = 10.0  # HttpLimits' default, without importing the http extra


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="pi-proto", description=__doc__)
    commands = root.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve_cmd = commands.add_parser("serve", help="serve models over gRPC until SIGINT/SIGTERM")
    serve_cmd.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    serve_cmd.add_argument("--port", type=PORT, default=50051, help="port; 0 picks a free one (default: %(default)s)")
    serve_cmd.add_argument(
        "--models",
        type=Path,
        metavar="FILE",
        help="serve the real models of this pi models.json (needs their API keys)",
    )
    serve_cmd.add_argument("--script", type=Path, help="JSON list of pi-JSON assistant turns (default: README trip)")
    serve_cmd.add_argument("--delta-size", type=whole(1), default=8, help="characters per delta (default: %(default)s)")
    serve_cmd.add_argument(
        "--delay",
        type=duration(),
        default=0.0,
        help="seconds between events, on a schedule from the call's start: event n is due n x S seconds in "
        "(default: %(default)s)",
    )
    serve_cmd.add_argument(
        "--workers", type=whole(1), default=1, help="server processes sharing the ports, e.g. one per core (default: 1)"
    )
    # One of --workers' processes, given the pipe whose end says that its supervisor is gone.
    serve_cmd.add_argument("--worker", type=int, metavar="FD", help=argparse.SUPPRESS)
    serve_cmd.add_argument(
        "--grace", type=duration(), default=5.0, help="shutdown grace seconds (default: %(default)s)"
    )
    serve_cmd.add_argument("--no-reflection", action="store_true", help="do not serve gRPC reflection")
    serve_cmd.add_argument(
        "--http-port",
        type=PORT,
        metavar="N",
        help="also serve Connect, gRPC-web, SSE (POST /v1/stream) and pi's own protocols (pi-messages at "
        "POST /messages, streamProxy at POST /api/stream) over HTTP on this port, from the same models, "
        "limits and token; 0 picks a free one; prints 'http on HOST:PORT' after the gRPC line (needs the "
        "http extra)",
    )
    serve_cmd.add_argument(
        "--no-ui", action="store_true", help="do not serve the web page (playground and viewer) at / of --http-port"
    )
    serve_cmd.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let web pages of this origin (scheme://host[:port], or * for any) call the HTTP protocols; "
        "repeat for more (default: none, same origin only)",
    )
    serve_cmd.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer HTTP requests for this host name or address (the Host header), as a proxy or a DNS "
        "name in front of the server sends it; repeat for more (default: loopback names for a loopback "
        "--host, any IP address for 0.0.0.0 or ::, else --host itself; any other Host is refused with 421, "
        "against DNS rebinding)",
    )
    serve_cmd.add_argument(
        "--max-connections",
        type=whole(1),
        metavar="N",
        help="open connections on --http-port at once; one more is answered 503 (default: half the open-file "
        "limit beyond 256, at most 10000; serve raises the soft limit to the hard one)",
    )
    serve_cmd.add_argument(
        "--header-timeout",
        type=duration(zero=False),
        default=HEADER_TIMEOUT,
        metavar="S",
        help="seconds a request on --http-port has to send its head (request line and headers), from the "
        "connection or the previous answer; then 408 (default: %(default)g)",
    )
    serve_cmd.add_argument("--tls-cert", type=Path, help="PEM certificate chain: serve TLS (with --tls-key)")
    serve_cmd.add_argument("--tls-key", type=Path, help="PEM private key of --tls-cert")
    serve_cmd.add_argument(
        "--token-file",
        type=Path,
        help="require 'authorization: Bearer <token in this file>'; SIGHUP reads the file again",
    )
    defaults = ServerLimits()
    serve_cmd.add_argument(
        "--max-streams",
        type=whole(1),
        default=defaults.max_concurrent_streams,
        help="concurrent streaming calls (model, health watch, reflection); more get RESOURCE_EXHAUSTED "
        "(default: %(default)s)",
    )
    serve_cmd.add_argument(
        "--max-request-bytes",
        type=whole(1, MAX_REQUEST_BYTES),
        default=defaults.max_request_bytes,
        help="largest request; larger ones get RESOURCE_EXHAUSTED (default: %(default)s)",
    )
    serve_cmd.add_argument(
        "--max-messages",
        type=whole(1),
        default=defaults.max_messages,
        help="most messages in a request's context; more get RESOURCE_EXHAUSTED (default: %(default)s)",
    )
    serve_cmd.add_argument(
        "--max-blocks",
        type=whole(1),
        default=defaults.max_blocks,
        help="most content blocks plus tools in a request's context (default: %(default)s)",
    )
    serve_cmd.add_argument(
        "--max-queued-bytes",
        type=whole(1),
        default=defaults.max_queued_bytes,
        help="bytes of deltas a stream holds for a slow client before the model waits (default: %(default)s)",
    )
    serve_cmd.add_argument(
        "--stream-timeout",
        type=duration(zero=False),
        default=defaults.stream_timeout,
        help="seconds a stream may run before it ends with an ERROR event and then closes (default: %(default)s)",
    )
    serve_cmd.add_argument(
        "--flush-ms",
        type=duration("milliseconds"),
        default=0.0,
        metavar="N",
        help="milliseconds a StreamBatched message waits for more events after the first, so that a paced "
        "stream's events share messages (gRPC, Connect and gRPC-web; each event waits up to N ms longer); "
        "0 sends at once (default: %(default)g)",
    )
    serve_cmd.add_argument(
        "--no-resume",
        action="store_true",
        help="keep no streams: events are not numbered, a client cut off cannot resume, and a client that goes "
        "away cancels its call at once",
    )
    serve_cmd.add_argument(
        "--redis",
        metavar="URL",
        help="keep streams in Redis too (redis://host:port/db), so that a client resumes on any replica serving "
        "with the same URL, and a replica's streams outlive it up to their last event",
    )
    serve_cmd.add_argument(
        "--resume-bytes",
        type=whole(1),
        default=RESUME_BYTES,
        help="bytes the kept streams hold together; over it, ended streams are dropped first, then the events "
        "every reader has passed (default: %(default)s)",
    )
    serve_cmd.add_argument(
        "--resume-retention",
        type=duration(),
        default=RETENTION_SECONDS,
        help="seconds an ended stream can still be resumed (default: %(default)g)",
    )
    serve_cmd.add_argument(
        "--resume-unattended",
        type=duration(),
        default=UNATTENDED_SECONDS,
        help="seconds a running stream whose client went away waits for one to resume it before it is cancelled; "
        "a background request waits to its end (default: %(default)g)",
    )
    serve_cmd.set_defaults(run=serve)

    stream_cmd = commands.add_parser("stream", help="send a user message and print the streamed answer")
    stream_cmd.add_argument("text", help="the user message")
    stream_cmd.add_argument("--target", default="127.0.0.1:50051", help="server host:port (default: %(default)s)")
    stream_cmd.add_argument("--model", default="", help="model id (default: the server's first)")
    stream_cmd.add_argument("--provider", default="", help="the model's provider (default: the one that serves it)")
    stream_cmd.add_argument(
        "--timeout",
        type=duration(zero=False),
        default=DEFAULT_TIMEOUT_SECONDS,
        help="deadline in seconds (default: %(default)g, the client's)",
    )
    stream_cmd.add_argument("--json", action="store_true", help="print each event as one ProtoJSON line")
    stream_cmd.add_argument("--ca-file", type=Path, help="PEM certificates to trust: connect with TLS")
    stream_cmd.add_argument("--token-file", type=Path, help="send 'authorization: Bearer <token in this file>'")
    stream_cmd.set_defaults(run=stream)

    models_cmd = commands.add_parser("models", help="list the models a server serves")
    models_cmd.add_argument("--target", default="127.0.0.1:50051", help="server host:port (default: %(default)s)")
    models_cmd.add_argument("--provider", default="", help="only this provider's models")
    models_cmd.add_argument(
        "--timeout", type=duration(zero=False), default=30.0, help="deadline in seconds (default: %(default)s)"
    )
    models_cmd.add_argument("--json", action="store_true", help="print each model as one ProtoJSON line")
    models_cmd.add_argument("--ca-file", type=Path, help="PEM certificates to trust: connect with TLS")
    models_cmd.add_argument("--token-file", type=Path, help="send 'authorization: Bearer <token in this file>'")
    models_cmd.set_defaults(run=models)

    convert_cmd = commands.add_parser(
        "convert", help="convert a transcript between .jsonl (pi), .json (ProtoJSON) and .binpb (binary)"
    )
    convert_cmd.add_argument("input", type=Path, help="the transcript to read; its extension gives the format")
    convert_cmd.add_argument("output", type=Path, help="the file to write; its extension gives the format")
    convert_cmd.set_defaults(run=convert_files)

    view_cmd = commands.add_parser("view", help="open a transcript in the web page's viewer, from a local server")
    view_cmd.add_argument("file", type=Path, help="a pi session .jsonl, a .binpb or a ProtoJSON .json")
    view_cmd.add_argument(
        "--port", type=PORT, default=0, help="loopback port; 0 picks a free one (default: %(default)s)"
    )
    view_cmd.set_defaults(run=view)

    demo_cmd = commands.add_parser("demo", help="play the README round trip as an agent loop over gRPC")
    demo_cmd.add_argument("--root", default=".", help="directory the read tool may read (default: %(default)s)")
    demo_cmd.add_argument(
        "--delay", type=duration(), default=0.03, help="seconds between events (default: %(default)s)"
    )
    demo_cmd.set_defaults(run=demo)
    return root


def check_serve(args: argparse.Namespace) -> None:
    """Refuse flags of `serve` that cannot go together (ValueError naming them)."""
    if args.http_port is not None and args.http_port == args.port != 0:
        raise ValueError(f"--http-port and --port must differ: both are {args.port}")
    if args.no_ui and args.http_port is None:
        raise ValueError("--no-ui needs --http-port: the page is served there")
    if args.cors_origin and args.http_port is None:
        raise ValueError("--cors-origin needs --http-port: browsers call the HTTP protocols")
    if args.allowed_host and args.http_port is None:
        raise ValueError("--allowed-host needs --http-port: it names the hosts the HTTP port answers to")
    kept = (args.resume_bytes, args.resume_retention, args.resume_unattended)
    if args.no_resume and (kept != (RESUME_BYTES, RETENTION_SECONDS, UNATTENDED_SECONDS) or args.redis):
        raise ValueError(
            "--no-resume keeps no streams: --redis, --resume-bytes, --resume-retention and --resume-unattended "
            "go without it"
        )
    if args.http_port is None and (args.max_connections, args.header_timeout) != (None, HEADER_TIMEOUT):
        flag = "--max-connections" if args.max_connections is not None else "--header-timeout"
        raise ValueError(f"{flag} needs --http-port: it bounds the HTTP port's connections")


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command == "serve":
            check_serve(args)
            if args.workers > 1:
                if not args.no_resume and args.redis is None:
                    print(
                        "pi-proto serve: warning: each worker keeps its own streams, so a client resumes only "
                        "when it reconnects to the same worker (--redis shares them)",
                        file=sys.stderr,
                    )
                return run_workers(
                    sys.argv[1:] if argv is None else argv,
                    args.host,
                    args.port,
                    args.http_port,
                    args.workers,
                    forward_hangup=args.token_file is not None,
                )
        if args.command == "convert":  # synchronous: asyncio would hold Ctrl-C until it finished
            return convert_files(args)
        code: int = asyncio.run(args.run(args))
        return code
    except (OSError, ValueError) as error:
        print(f"pi-proto {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
