"""The names of ModelService's methods on the wire, shared by the server, the client and the
HTTP protocols (which route by the same paths)."""

SERVICE = "pi.ai.v1.ModelService"
STREAM_METHOD = f"/{SERVICE}/Stream"
BATCHED_METHOD = f"/{SERVICE}/StreamBatched"
RESUME_METHOD = f"/{SERVICE}/Resume"
CANCEL_METHOD = f"/{SERVICE}/Cancel"
