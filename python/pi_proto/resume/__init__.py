"""Kept streams: what a server records of each call so a client can resume it (ModelService.Resume)."""

from .journal import Gone, Journal, JournalReader
from .memory import MemoryStore, NotKept

__all__ = ["Gone", "Journal", "JournalReader", "MemoryStore", "NotKept"]
