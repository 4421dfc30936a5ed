"""The message IR beyond its generated types: the seed's constructors and views (messages), event
kinds and their sizes (events), and what a call's usage costs (cost)."""
