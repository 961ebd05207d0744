"""The floor for bench/mcp_latency.py: the same SDK over its own stdio, one empty tool."""

from mcp.server import MCPServer

server = MCPServer("floor")


@server.tool()
def empty() -> str:
    return ""


if __name__ == "__main__":
    server.run()
