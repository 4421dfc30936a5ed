"""What a server serves: the scripted model (scripted, seed) and real providers (providers)."""
