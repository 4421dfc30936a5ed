"""The `pi-proto` command: its subcommands (main), the entry point that keeps Ctrl-C quiet
(command), the demo, and the terminal rendering of a stream (render)."""
