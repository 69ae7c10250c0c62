"""What every kubecrew MCP server shares: the error tree, bounded output, argument checks."""
