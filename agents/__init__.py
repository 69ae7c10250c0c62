"""The crew's LangGraph graphs: platform/, cluster_operator/, dev_team/, plus the shared remediation
loop and negotiation client. Agents touch the world only through the MCP tool servers and never
import a Kubernetes client (an import-linter contract holds this). Arrives with the agent issues."""
