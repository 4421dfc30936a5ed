"""azure-openai-responses: the Responses API of Azure OpenAI, through the official `openai` SDK's
Azure client.

The stream is read as openai-responses reads it (pi-ai's azure-openai-responses.ts shares
openai-responses-shared.ts), and the request is built the same way, with pi's Azure differences:
- the `model` is the deployment: AZURE_OPENAI_DEPLOYMENT_NAME_MAP (`model-id=deployment,...`)
  names it, else it is the model id;
- the endpoint is AZURE_OPENAI_BASE_URL, else `https://<AZURE_OPENAI_RESOURCE_NAME>.openai.azure.com/openai/v1`,
  else the model's baseUrl; an Azure host given without a path gets `/openai/v1`. The API version is
  AZURE_OPENAI_API_VERSION, else `v1`; the key goes in the `api-key` header (AZURE_OPENAI_API_KEY
  is pi's name for it);
- the session id is the prompt cache key whatever the cache retention (unless
  compat.promptCacheKeyMode is "disabled"), with no retention fields and no session headers;
- tools are marked `strict: false` unless compat.supportsStrictMode is false;
- tool call ids of another model are rewritten for Azure too.
Settings are read with ModelConfig.setting: the model's environment, then the process's.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai

from .call import Call, ProviderError
from .http import http_client
from .openai_responses import ID_LIMIT, OPENAI_TOOL_CALL_PROVIDERS, body, respond
from .openai_responses import describe as describe  # the Responses API's words for its errors

DEFAULT_API_VERSION = "v1"
AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com", ".ai.azure.com")
# The paths of an Azure host that mean "the resource": each is served at /openai/v1.
RESOURCE_PATHS = ("", "/", "/openai", "/openai/v1/responses")
AZURE_TOOL_CALL_PROVIDERS = (*OPENAI_TOOL_CALL_PROVIDERS, "azure")  # whose tool call ids pi rewrites


async def stream(call: Call) -> None:
    """Run one Responses call on Azure and tell `call` what it streams."""
    if not call.model.api_key:
        raise ProviderError(f"no API key for {call.provider}: set apiKey in models.json (pi's AZURE_OPENAI_API_KEY)")
    sent = request(call)
    client = openai.AsyncAzureOpenAI(
        api_key=call.model.api_key,
        api_version=call.model.setting("AZURE_OPENAI_API_VERSION") or DEFAULT_API_VERSION,
        base_url=base_url(call),
        max_retries=0,  # run() retries, within max_retry_delay_ms
        default_headers=call.headers({}),
        http_client=http_client(call),
    )
    await respond(call, client, sent)


def request(call: Call) -> dict[str, Any]:
    """The Responses body for a call, as pi's Azure buildParams makes it."""
    return body(
        call,
        model=deployment(call),
        prompt_cache=_prompt_cache(call),
        tool_call_providers=AZURE_TOOL_CALL_PROVIDERS,
        strict_mode=True,
    )


def deployment(call: Call) -> str:
    """The deployment serving the model: its entry in AZURE_OPENAI_DEPLOYMENT_NAME_MAP, else its id."""
    model_id = call.model.info.id
    for entry in (call.model.setting("AZURE_OPENAI_DEPLOYMENT_NAME_MAP") or "").split(","):
        name, _, deployed = entry.strip().partition("=")
        if name.strip() == model_id and deployed.strip():
            return deployed.strip()
    return model_id


def base_url(call: Call) -> str:
    """The Azure endpoint, as pi resolves it; an Azure host without a path is given /openai/v1."""
    model = call.model
    resource = model.setting("AZURE_OPENAI_RESOURCE_NAME")
    given = (model.setting("AZURE_OPENAI_BASE_URL") or "").strip()
    if not given and resource:
        given = f"https://{resource}.openai.azure.com/openai/v1"
    given = (given or model.info.base_url).strip().rstrip("/")
    parts = urlsplit(given)
    if not parts.scheme or not parts.hostname:
        raise ProviderError(f"{call.provider}: {model.scrub(given)!r} is not an Azure OpenAI base URL")
    path = parts.path.rstrip("/")
    if parts.hostname.endswith(AZURE_HOSTS) and path in RESOURCE_PATHS:
        return urlunsplit((parts.scheme, parts.netloc, "/openai/v1", "", ""))
    return given


def _prompt_cache(call: Call) -> dict[str, Any]:
    session = call.options.session_id
    if not session or call.switch("promptCacheKeyMode", "auto") == "disabled":
        return {}
    return {"prompt_cache_key": session[:ID_LIMIT]}
