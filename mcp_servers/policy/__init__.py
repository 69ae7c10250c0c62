"""The policy store's MCP face: `server` builds the FastMCP server, `tools_*` its tools.

The domain (documents, evaluation, negotiation, approvals, audit, stores) is `core.policy`; this
package only turns it into tools, with who acts fixed by the server's configuration.
"""
