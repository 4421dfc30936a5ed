"""The HTTP client every provider SDK is given, so each call is bounded the same way whatever the SDK.

- Timeouts: connecting takes at most CONNECT_TIMEOUT_SECONDS, and the provider may be silent (no
  byte of the answer, headers included) for at most IDLE_TIMEOUT_SECONDS; a model's `timeoutMs`
  in models.json sets the idle timeout, and the connect timeout when shorter. They replace
  whatever timeout the SDK sets (the OpenAI and Anthropic SDKs read for 600 s; google-genai for
  ever).
- Bodies are decompressed here (gzip and deflate, the encodings we ask for), in pieces of at most
  PIECE_BYTES, so a small compressed body cannot become a large allocation.
- An event stream counts the bytes an SDK may be holding toward the stream's size limit: the
  event it has not finished reading (the bytes since the last blank line) and, for google-genai,
  lines that are not `data:` lines, which it keeps until their braces balance.
- A 2xx answer must be an event stream; anything else ends the call naming what came instead.
- An error body is read up to MAX_ERROR_BODY_BYTES, with the model's secrets scrubbed before it is
  cut.

Failures are raised as ProviderError, which `run` finds even where an SDK wrapped it.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Iterator
from datetime import timedelta

import httpx2

from .call import Call, Describe, ProviderError, causes, quote
from .catalog import ModelConfig

CONNECT_TIMEOUT_SECONDS = 10.0
IDLE_TIMEOUT_SECONDS = 120.0
MAX_ERROR_BODY_BYTES = 256 * 1024
PIECE_BYTES = 64 * 1024
ENCODINGS = ("gzip", "deflate")  # what we ask for and decode; br and zstd are not asked for
_SHOWN_BYTES = 4096  # of a body that is not an event stream, read to quote its start
_LINE_END = re.compile(rb"\r\n|\r|\n")
_BLANK = (b"\n\n", b"\r\r", b"\n\r")  # two line ends in a row, CRLF counted as one


def timeouts(model: ModelConfig) -> tuple[float, float]:
    """(connect, idle) timeouts in seconds for calls to `model`."""
    if model.timeout_ms is None:
        return CONNECT_TIMEOUT_SECONDS, IDLE_TIMEOUT_SECONDS
    idle = model.timeout_ms / 1000
    return min(CONNECT_TIMEOUT_SECONDS, idle), idle


def http_client(call: Call, *, gemini: bool = False) -> httpx2.AsyncClient:
    """An HTTP client for one call's SDK; `gemini` for google-genai's way of reading a stream."""
    guard = _Guard(call, gemini)
    connect, idle = timeouts(call.model)
    return httpx2.AsyncClient(
        timeout=httpx2.Timeout(idle, connect=connect),
        event_hooks={"request": [guard.on_request], "response": [guard.on_response]},
    )


def describing(describe: Describe) -> Describe:
    """`describe` (a provider module's, as a decorator), but a timeout of ours is worded first,
    naming the provider and the timeout."""

    def words(error: BaseException, model: ModelConfig) -> str:
        for cause in causes(error):
            if isinstance(cause, httpx2.TimeoutException):
                return timed_out(cause, model)
        return describe(error, model)

    return words


def timed_out(error: httpx2.TimeoutException, model: ModelConfig) -> str:
    connect, idle = timeouts(model)
    provider = f"the provider {model.info.provider!r}"
    if isinstance(error, httpx2.ConnectTimeout | httpx2.PoolTimeout):
        return f"cannot connect to {provider} within {connect:g} s (the connect timeout)"
    return f"{provider} sent nothing for {idle:g} s (the idle timeout; timeoutMs in models.json sets it)"


class _Guard:
    """The hooks of one call's client: timeouts and encodings on the way out, bounds on the way in."""

    def __init__(self, call: Call, gemini: bool) -> None:
        self.call = call
        self.gemini = gemini

    async def on_request(self, request: httpx2.Request) -> None:
        connect, idle = timeouts(self.call.model)
        request.extensions["timeout"] = httpx2.Timeout(idle, connect=connect).as_dict()
        request.headers["accept-encoding"] = ", ".join(ENCODINGS)

    async def on_response(self, response: httpx2.Response) -> None:
        call = self.call
        inflate = decoder(call, response)
        if inflate is not None:
            del response.headers["content-encoding"]  # decoded here, within bounds
        assert isinstance(response.stream, httpx2.AsyncByteStream)  # an AsyncClient's
        body = _Body(response.stream, call, inflate, _Pending(self.gemini))
        if not response.is_success:  # the SDK reads it whole: it gets the scrubbed start
            response.stream = httpx2.ByteStream(await body.start(MAX_ERROR_BODY_BYTES, scrub=True))
            return
        content_type = response.headers.get("content-type", "")
        if content_type.split(";")[0].strip().lower() != "text/event-stream":
            shown = (await body.start(_SHOWN_BYTES)).decode("utf-8", "replace")
            sent = quote(call.model, content_type) if content_type else "no content type"
            raise ProviderError(
                f"{call.provider} answered {response.status_code} with {sent}, "
                f"not an event stream: {quote(call.model, shown)}"
            )
        response.stream = body


def decoder(call: Call, response: httpx2.Response) -> Inflate | None:
    """The decoder of the response's content encoding, None for none; an encoding we did not ask
    for ends the call."""
    encodings = [
        value.strip().lower()
        for value in response.headers.get_list("content-encoding", split_commas=True)
        if value.strip().lower() not in ("", "identity")
    ]
    if len(encodings) > 1 or (encodings and encodings[0] not in ENCODINGS):
        named = quote(call.model, ", ".join(encodings))
        raise ProviderError(f"{call.provider} sent a body encoded as {named}, which this server does not decode")
    return Inflate(encodings[0], call.provider) if encodings else None


async def body_start(pieces: AsyncIterable[bytes], model: ModelConfig, size: int, *, scrub: bool) -> bytes:
    """The first `size` bytes of a body's pieces; with `scrub`, the model's secrets replaced first."""
    secrets = [secret.encode() for secret in model.secrets()] if scrub else []
    wanted = size + max(map(len, secrets), default=0)  # a secret across the cut is still whole
    data = bytearray()
    async for piece in pieces:
        data += piece
        if len(data) >= wanted:
            break
    text = bytes(data)
    for secret in secrets:
        text = text.replace(secret, b"***")
    return text[:size]


class _Body(httpx2.AsyncByteStream):
    """A response body, decoded and counted: each piece passes the call's size check before an
    SDK sees it."""

    def __init__(self, raw: httpx2.AsyncByteStream, call: Call, inflate: Inflate | None, pending: _Pending) -> None:
        self._raw = raw
        self._call = call
        self._inflate = inflate
        self._pending = pending

    @property
    def elapsed(self) -> timedelta | None:  # httpx2.Response.elapsed reads it from its stream
        value: timedelta | None = getattr(self._raw, "elapsed", None)
        return value

    async def _pieces(self) -> AsyncIterator[bytes]:
        inflate = self._inflate
        async for chunk in self._raw:
            if inflate is None:
                yield chunk
            else:
                for piece in inflate.decode(chunk):
                    yield piece
        if inflate is not None:
            for piece in inflate.flush():
                yield piece

    async def __aiter__(self) -> AsyncIterator[bytes]:
        call, pending = self._call, self._pending
        async for piece in self._pieces():
            call.check_size(pending.feed(piece))
            yield piece

    async def start(self, size: int, *, scrub: bool = False) -> bytes:
        """The first `size` bytes of the body (with `scrub`, the model's secrets replaced first),
        and the body closed."""
        try:
            return await body_start(self._pieces(), self._call.model, size, scrub=scrub)
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        await self._raw.aclose()


class Inflate:
    """A gzip or deflate decoder whose output comes in pieces of at most PIECE_BYTES."""

    def __init__(self, encoding: str, provider: str) -> None:
        self.encoding = encoding
        self.provider = provider
        self._first = True
        self._zlib = zlib.decompressobj(16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS)

    def decode(self, data: bytes) -> Iterator[bytes]:
        while data:
            try:
                out = self._zlib.decompress(data, PIECE_BYTES)
            except zlib.error as error:
                if self._first and self.encoding == "deflate":  # raw deflate, without the zlib header
                    self._first = False
                    self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise ProviderError(f"{self.provider} sent a body that is not valid {self.encoding}: {error}") from None
            self._first = False
            if out:
                yield out
            data = self._zlib.unconsumed_tail

    def flush(self) -> Iterator[bytes]:
        if out := self._zlib.flush():
            yield out


class _Pending:
    """The bytes an SDK may be holding of an event stream, from the pieces it has been given.

    Every SDK keeps the event it is reading until a blank line ends it (a line ends at CR, LF or
    CRLF). google-genai also keeps lines that are neither blank nor `data: ` lines, across blank
    lines, until their braces balance: with `gemini` they count until the stream ends.
    """

    def __init__(self, gemini: bool) -> None:
        self.gemini = gemini
        self.since_blank = 0  # bytes since the last blank line
        self.kept = 0  # gemini: bytes of complete lines it keeps
        self._tail = b""  # the last byte of the last piece
        self._line = 0  # gemini: bytes of the line not yet ended
        self._head = b""  # gemini: its first bytes, to tell a `data: ` line
        self._cr = False  # gemini: the last piece ended in CR, whose LF may start this one

    def feed(self, piece: bytes) -> int:
        """Take the next piece; returns the bytes held now (to a byte: the LF of a blank line's
        CRLF may count)."""
        if self.gemini:
            self._lines(piece)
            return self.since_blank + self.kept + self._line
        end = max(piece.rfind(b"\n\n"), piece.rfind(b"\r\r"), piece.rfind(b"\n\r"))  # every blank line has one
        if end >= 0:
            self.since_blank = len(piece) - end - 2
        elif self._tail + piece[:1] in _BLANK:  # one across the pieces
            self.since_blank = len(piece) - 1
        else:
            self.since_blank += len(piece)
        self._tail = piece[-1:] or self._tail
        return self.since_blank

    def _lines(self, piece: bytes) -> None:
        start = 1 if self._cr and piece.startswith(b"\n") else 0
        self._cr = piece.endswith(b"\r")
        for end in _LINE_END.finditer(piece, start):
            self._extend(piece[start : end.start()])
            length, head = self._line, self._head
            if length == 0:
                self.since_blank = 0
            elif head.startswith(b"data: "):
                self.since_blank += length + 1
            else:
                self.kept += length + 1
            self._line, self._head = 0, b""
            start = end.end()
        self._extend(piece[start:])

    def _extend(self, part: bytes) -> None:
        if len(self._head) < 6:
            self._head = (self._head + part[:6])[:6]
        self._line += len(part)
