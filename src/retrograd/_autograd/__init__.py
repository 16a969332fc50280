"""The autograd core: nodes, saved variables, views, the engine. Private; the public API is
retrograd.autograd."""
