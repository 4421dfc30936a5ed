"""google-vertex: Gemini on Vertex AI, through the official `google-genai` SDK in Vertex mode.

pi-ai's google-vertex.ts shares google-shared.ts with the Gemini API, and so does this module
with google_generative_ai: the request and the stream are the same, with pi's Vertex
differences:
- sign-in is the models.json apiKey (pi's GOOGLE_CLOUD_API_KEY, Vertex's express mode), else
  application default credentials for a project (GOOGLE_CLOUD_PROJECT or GCLOUD_PROJECT) and a
  location (GOOGLE_CLOUD_LOCATION): the key file GOOGLE_APPLICATION_CREDENTIALS names, else
  google-auth's default chain. pi's stand-ins for "no key" (`gcp-vertex-credentials`, or `<...>`)
  count as none;
- the endpoint is Vertex's own unless the baseUrl names one: pi's catalog writes
  `https://{location}-aiplatform.googleapis.com`, which means Vertex's; any other baseUrl stands
  for the API's collection (the SDK's ResourceScope.COLLECTION), with the API version v1 unless
  the URL has one;
- the thinking budgets of the Gemini 2.5 models are pi's Vertex table (2.5 Flash-Lite budgets as
  2.5 Flash).
pi 1.6 maps no Anthropic model to Vertex (its google-vertex catalog holds Gemini models only),
and neither does this module.
"""

from __future__ import annotations

import re
import warnings
from typing import Any, cast

import google.auth
import httpx2
from google import genai
from google.auth import credentials as auth_credentials
from google.genai import types

from .call import Call, ProviderError
from .google_generative_ai import Budgets, params, respond
from .google_generative_ai import describe as describe  # the Gemini API's words for its errors
from .http import http_client

API_VERSION = "v1"
SCOPES = ("https://www.googleapis.com/auth/cloud-platform",)
NO_KEY = "gcp-vertex-credentials"  # pi's marker for "sign in with application default credentials"
# pi's Vertex budgets for the Gemini 2.5 models, first match wins; others think as they need (-1).
THINKING_BUDGETS: Budgets = (
    ("2.5-pro", {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}),
    ("2.5-flash", {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}),
)
_VERSION = re.compile(r"^v\d+(?:beta\d*)?$")


async def stream(call: Call) -> None:
    """Run one streamGenerateContent call on Vertex AI and tell `call` what it streams."""
    body = request(call)
    key = api_key(call)
    signed = {"api_key": key} if key else _project(call)
    # Our own httpx2 client, as for the Gemini API: bounded, and the only one that retries (run()).
    http = http_client(call, gemini=True)
    client = genai.Client(vertexai=True, **signed, http_options=_http_options(call, http))
    await respond(call, client, http, body)


def request(call: Call) -> dict[str, Any]:
    """The SDK's arguments for a call: the Gemini API's, with pi's Vertex thinking budgets."""
    return params(call, THINKING_BUDGETS)


def api_key(call: Call) -> str | None:
    """The Vertex API key, unless the models.json apiKey is empty or one of pi's stand-ins for none."""
    key = call.model.api_key.strip()
    if not key or key == NO_KEY or re.fullmatch(r"<[^>]+>", key):
        return None
    return key


def _project(call: Call) -> dict[str, Any]:
    """The project, location and application default credentials of a call without an API key."""
    model = call.model
    project = model.setting("GOOGLE_CLOUD_PROJECT") or model.setting("GCLOUD_PROJECT")
    if not project:
        raise ProviderError(
            f"{call.provider} has no API key and no project: Vertex AI needs GOOGLE_CLOUD_PROJECT "
            "(or GCLOUD_PROJECT) and GOOGLE_CLOUD_LOCATION for application default credentials"
        )
    location = model.setting("GOOGLE_CLOUD_LOCATION")
    if not location:
        raise ProviderError(f"{call.provider} has no location: Vertex AI needs GOOGLE_CLOUD_LOCATION")
    return {"project": project, "location": location, "credentials": credentials(call)}


def credentials(call: Call) -> auth_credentials.Credentials:
    """Application default credentials: the key file GOOGLE_APPLICATION_CREDENTIALS names, else
    google-auth's chain (gcloud's, then the metadata server's)."""
    path = call.model.setting("GOOGLE_APPLICATION_CREDENTIALS")
    try:
        with warnings.catch_warnings():
            # google-auth warns that a file of any credential type may be loaded; this is the
            # operator's own ADC file, read as google.auth.default reads it.
            warnings.simplefilter("ignore", DeprecationWarning)
            if path:
                found, _ = google.auth.load_credentials_from_file(path, scopes=SCOPES)  # type: ignore[no-untyped-call]
            else:
                found, _ = google.auth.default(scopes=SCOPES)
    except google.auth.exceptions.GoogleAuthError as error:
        raise ProviderError(f"{call.provider}: no application default credentials: {error}") from None
    return cast(auth_credentials.Credentials, found)


def _http_options(call: Call, http: httpx2.AsyncClient) -> types.HttpOptions:
    base_url = custom_base_url(call.model.info.base_url)
    if base_url is None:
        return types.HttpOptions(api_version=API_VERSION, headers=call.headers(), httpx_async_client=http)
    if not has_version(base_url):  # the SDK leaves a collection's version out: it goes in the URL
        base_url = f"{base_url.rstrip('/')}/{API_VERSION}"
    return types.HttpOptions(
        base_url=base_url,
        base_url_resource_scope=types.ResourceScope.COLLECTION,
        api_version="",
        headers=call.headers(),
        httpx_async_client=http,
    )


def custom_base_url(base_url: str) -> str | None:
    """The baseUrl as an endpoint of its own, or None for Vertex's (empty, or pi's `{location}` template)."""
    trimmed = base_url.strip()
    return None if not trimmed or "{location}" in trimmed else trimmed


def has_version(base_url: str) -> bool:
    """Whether a path segment of the URL is an API version (v1, v1beta1, ...)."""
    path = base_url.split("://", 1)[-1].partition("/")[2]
    return any(_VERSION.match(part) for part in path.split("/"))
