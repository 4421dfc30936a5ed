"""Which host names an HTTP port answers to: every request's `Host` (HTTP/2's `:authority`) is
checked before anything else (HostCheck). A page of someone else's DNS name pointed at this
server's address (DNS rebinding) sends that name, and is answered 421 without a byte of the
server's. A loopback bind answers loopback names only; another bind its own address, and on a
wildcard bind any IP address; `--allowed-host` adds names.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable

from .sse import App, Receive, Scope, Send

# A Host value: a bracketed IPv6 address, or a name or IPv4 address; then perhaps a port.
_HOST_VALUE = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9_.-]+))(?::[0-9]{0,5})?")
_LABELS = re.compile(r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*")
LOOPBACK_NAME = "localhost"


def _address(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address `name` spells, or None for a DNS name."""
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def _canonical(name: str) -> str | None:
    """A host as compared: an IP address in its short form, a DNS name in lower case without a
    final dot; None for text that is neither."""
    if (address := _address(name)) is not None:
        return str(address)
    name = name.lower().removesuffix(".")
    return name if _LABELS.fullmatch(name) else None


def host_of(value: str) -> str | None:
    """The host a `Host` value names (`name[:port]`, `[v6][:port]`), as _canonical gives it;
    None for a value that is not one."""
    found = _HOST_VALUE.fullmatch(value)
    if found is None:
        return None
    if found["v6"] is not None:
        return _canonical(found["v6"]) if isinstance(_address(found["v6"]), ipaddress.IPv6Address) else None
    return _canonical(found["name"])


def allowed_host(text: str) -> str:
    """A host to answer to (`pi-proto serve --allowed-host NAME`): a DNS name or an IP address
    (IPv6 with or without brackets), without a port; raises ValueError saying what is wrong."""
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    name = _canonical(bare)
    if name is None:
        raise ValueError(f"not a host name or IP address (without a port or a scheme): {text!r}")
    return name


def is_address(name: str) -> bool:
    """Whether `name` is an IP address (which only a page of that address sends as its host)."""
    return _address(name) is not None


def is_local_name(name: str) -> bool:
    """Whether `name` is localhost or a name under .localhost (RFC 6761: browsers answer those
    with a loopback address themselves, and the DNS root delegates none)."""
    return name == LOOPBACK_NAME or name.endswith("." + LOOPBACK_NAME)


def _is_loopback(name: str) -> bool:
    """Whether host `name` can only mean this machine: localhost, a name under .localhost (RFC
    6761: browsers answer those with a loopback address themselves, and the DNS root delegates
    none, so no one can point one elsewhere), or a loopback address."""
    if is_local_name(name):
        return True
    address = _address(name)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address is not None and address.is_loopback


class AllowedHosts:
    """The hosts a server bound to `bind` answers to, and `names` (checked by allowed_host,
    ValueError). A loopback bind answers loopback names (localhost, 127.0.0.1, [::1], names
    under .localhost); a wildcard bind (0.0.0.0, ::) those and any IP address, which only a
    page of that address can send (rebinding needs a DNS name); any other bind its own address.
    `pi-proto view` serves on loopback; behind a proxy or under a DNS name, give the name."""

    def __init__(self, bind: str = "127.0.0.1", names: Iterable[str] = ()) -> None:
        self.names = frozenset(allowed_host(name) for name in names)
        bare = bind[1:-1] if bind.startswith("[") and bind.endswith("]") else bind
        self.bind = _canonical(bare) or bare.lower()
        address = _address(self.bind)
        self.wildcard = not bind or (address is not None and address.is_unspecified)
        self.loopback = _is_loopback(self.bind)

    def allows(self, host: str) -> bool:
        """Whether a request for `host` (as host_of gives it) is answered."""
        if host in self.names or host == self.bind:
            return True
        if self.wildcard:
            return _is_loopback(host) or is_address(host)
        return self.loopback and _is_loopback(host)

    def described(self) -> str:
        """What the server answers to, in words, for a refusal."""
        if self.wildcard:
            known = "an IP address or a loopback name (localhost)"
        elif self.loopback:
            known = "loopback names only (localhost, 127.0.0.1, [::1])"
        else:
            known = f"[{self.bind}]" if ":" in self.bind else self.bind
        return f"{known}; `pi-proto serve --allowed-host NAME` adds a name"


class HostCheck:
    """ASGI middleware: `app` answers requests whose `Host` (HTTP/2: `:authority`, which hypercorn
    gives as `host`) is one of `hosts`; any other gets 421 (400 for a missing or malformed Host),
    before a byte of its body is read or anything is served."""

    def __init__(self, app: App, hosts: AllowedHosts) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = [value for key, value in scope.get("headers", ()) if key == b"host"]
        if len(given) != 1:
            many = "no Host header" if not given else "more than one Host header"
            await _refuse_host(send, 400, "invalid_argument", f"the request has {many}")
            return
        shown = given[0].decode("latin-1")
        name = host_of(shown)
        if name is None:
            await _refuse_host(send, 400, "invalid_argument", f"the Host header {shown[:100]!r} is not a host[:port]")
        elif not self.hosts.allows(name):
            message = f"this server does not answer to the host {name[:100]!r}; it answers to {self.hosts.described()}"
            await _refuse_host(send, 421, "permission_denied", message)
        else:
            await self.app(scope, receive, send)


async def _refuse_host(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"code": code, "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
