"""The README round trip as a tiny agent loop over a real gRPC connection.

A server playing the default script starts in-process on a free loopback port. Turn 1 asks to
`read` README.md; the call runs for real on this project's README, its result goes back into the
context, and turn 2 answers.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.rule import Rule

from .._gen.types.pi.ai.v1 import AgentContext, AgentMessage, StopReason, Tool, ToolCall, ToolResultMessage
from ..grpc.client import ModelClient
from ..grpc.server import ModelServer
from ..ir.messages import agent_message, dump_json, tool_call_arguments, tool_result_message, user_message
from ..models.scripted import ScriptedModel
from ..models.seed import README_REQUEST
from ..wire.codec import encode
from ..wire.files import read_regular_file
from .render import print_live, print_transcript

MAX_READ_BYTES = 1024 * 1024  # what the read tool returns at most: a file, not a device or a FIFO
READ_TOOL = Tool(
    name="read",
    description="Read a text file of the project.",
    parameters_json=dump_json({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
)


def run_read(call: ToolCall, root: Path) -> ToolResultMessage:
    """Execute a `read` call on a file under `root`; failures become an error result."""
    try:
        path = (root / str(tool_call_arguments(call)["path"])).resolve()
        if not path.is_relative_to(root.resolve()):
            raise PermissionError(f"{path} is outside {root}")
        text = read_regular_file(path, MAX_READ_BYTES).decode("utf-8")
    except (ValueError, KeyError, OSError) as error:
        return tool_result_message(call.id, call.name, f"read failed: {error}", is_error=True)
    return tool_result_message(call.id, call.name, text, details={"path": str(path), "chars": len(text)})


async def run_demo(console: Console, root: Path, *, delay: float = 0.03) -> list[AgentMessage]:
    """Play the round trip, printing live events, and return the transcript."""
    model = ScriptedModel.readme(delta_size=3, delay=delay)
    context = AgentContext(
        system_prompt="回答前先读取相关文件。",
        messages=[agent_message(user_message(README_REQUEST))],
        tools=[READ_TOOL],
    )
    async with ModelServer(model) as server, ModelClient(server.target) as client:
        console.print(Rule(f"pi.ai.v1.ModelService on {server.target}"))
        console.print(f"user: {README_REQUEST}", style="bold")
        for turn in range(1, 10):
            console.print(Rule(f"turn {turn}", style="dim"))
            message = await print_live(console, client.stream(context))
            context.messages.append(agent_message(message))
            if message.stop_reason != StopReason.TOOL_USE:
                break
            for content in message.content:
                if content.tool_call is not None:
                    result = run_read(content.tool_call, root)
                    first_line = result.content[0].text.text.splitlines()[0] if result.content[0].text else ""
                    console.print(f"← {result.tool_name}: {first_line} …", style="cyan", markup=False)
                    context.messages.append(agent_message(result))
    console.print(Rule("saved transcript (pi-JSON)"))
    print_transcript(console, context.messages)
    size = sum(len(encode(message)) for message in context.messages)
    console.print(f"{len(context.messages)} messages, {size} bytes as protobuf", style="dim")
    return context.messages
