"""retrograd.fx: programs as graphs (torch.fx's API).

A Graph is a list of Nodes; a GraphModule runs one as generated Python; symbolic_trace records
a function or Module with Proxies, make_fx (retrograd.fx.experimental.proxy_tensor) records the
ops the dispatcher runs; Interpreter and Transformer run and rewrite graphs node by node.
"""

from retrograd.fx.graph import Graph
from retrograd.fx.graph_module import GraphModule
from retrograd.fx.node import Node, map_arg

__all__ = ["Graph", "GraphModule", "Node", "map_arg"]
