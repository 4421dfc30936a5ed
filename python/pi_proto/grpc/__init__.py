"""ModelService over gRPC: the server, the client, the gate that admits calls, health and
reflection, and the worker processes of `serve --workers`."""
