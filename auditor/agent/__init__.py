"""What a coding agent gets: prompt-ready feedback and the MCP server."""
