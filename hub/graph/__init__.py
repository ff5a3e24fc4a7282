"""The turn graph (LangGraph) and its nodes."""

from hub.graph.build import RECURSION_LIMIT, build_graph
from hub.graph.state import TurnState

__all__ = ["RECURSION_LIMIT", "TurnState", "build_graph"]
