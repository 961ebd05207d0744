"""WorkRail MCP server: a thin adapter from the Model Context Protocol to workrail_engine."""
