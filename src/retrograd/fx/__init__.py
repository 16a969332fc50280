"""retrograd.fx: programs as graphs (torch.fx's API).

A Graph is a list of Nodes; a GraphModule runs one as generated Python; symbolic_trace records
a function or Module with Proxies, make_fx (retrograd.fx.experimental.proxy_tensor) records the
ops the dispatcher runs; Interpreter and Transformer run and rewrite graphs node by node.
"""

from retrograd.fx._symbolic_trace import Tracer, symbolic_trace, wrap
from retrograd.fx.graph import Graph
from retrograd.fx.graph_module import GraphModule
from retrograd.fx.interpreter import Interpreter, Transformer
from retrograd.fx.node import Node, map_arg
from retrograd.fx.proxy import Proxy

__all__ = ["Graph", "GraphModule", "Interpreter", "Node", "Proxy", "Tracer", "Transformer",
           "map_arg", "symbolic_trace", "wrap"]
