"""Client memory for one long stream, measured in a process of its own.

Run: python -m bench.memory --target HOST:PORT. Prints one JSON line: the growth of the
process's peak resident memory over the stream, and the size of the final message.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
from pathlib import Path

import pi_proto as pp


def resident_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


async def stream_once(target: str) -> dict[str, int]:
    context = pp.AgentContext(messages=[pp.agent_message(pp.user_message("go", timestamp=1))])
    async with pp.ModelClient(target) as client:
        # A first, short call (past the script's only turn) opens the channel, so it is not counted.
        done = pp.agent_message(pp.assistant_message(timestamp=1))
        await client.stream(pp.AgentContext(messages=[*context.messages, done])).result()
        gc.collect()
        before = resident_kib("VmRSS")
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
        events = client.stream(context)
        count = 0
        async for _ in events:
            count += 1
        message = await events.result()
        peak = resident_kib("VmHWM")
    return {"events": count, "peak_growth_bytes": (peak - before) * 1024, "final_bytes": len(pp.encode(message))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", required=True)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(stream_once(args.target))))


if __name__ == "__main__":
    main()
