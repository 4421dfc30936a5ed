"""pi.ai.v1.ModelService over HTTP: Connect (proto and JSON), gRPC-web, Server-Sent Events of
pi-JSON events, and pi's own pi-messages and streamProxy protocols, served from a ModelServer's
models with its limits and token (`pi-proto serve --http-port N`), and a client of the first two.
Needs the `http` extra: pip install 'pi-proto[http]'.
"""

from .client import HttpModelClient
from .connections import HttpLimits
from .cors import checked_origin
from .pi_protocols import MESSAGES_PATH, PROXY_PATH, pi_messages_event, proxy_event
from .server import AsgiServer, HttpApp, HttpServer
from .sse import SSE_PATH, event_from_sse, event_to_sse, read_sse

__all__ = [
    "MESSAGES_PATH",
    "PROXY_PATH",
    "SSE_PATH",
    "AsgiServer",
    "HttpApp",
    "HttpLimits",
    "HttpModelClient",
    "HttpServer",
    "checked_origin",
    "event_from_sse",
    "event_to_sse",
    "pi_messages_event",
    "proxy_event",
    "read_sse",
]
