"""Saving a tensor that has backward hooks warns that they are not saved, as torch does
(pickle, the library's save), unless the hook is marked with utils.hooks.unserializable_hook."""

import io
import pickle
import re
import warnings

import retrograd
from tests.parity.harness import torch_or_skip


def _program(lib):
    hooks = __import__(f"{lib.__name__}.utils.hooks", fromlist=["hooks"])

    def named(g):
        return g

    seen = []
    for make, save in [
            (lambda: lib.ones(2, requires_grad=True), pickle.dumps),
            (lambda: lib.ones(2, requires_grad=True), lambda t: lib.save(t, io.BytesIO())),
            (lambda: lib.nn.Parameter(lib.ones(2)), pickle.dumps),
            (lambda: lib.nn.Parameter(lib.ones(2)), lambda t: lib.save(t, io.BytesIO()))]:
        for hook in (named, hooks.unserializable_hook(lambda g: g)):
            t = make()
            t.register_hook(hook)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                save(t)
            seen.append([re.sub(r" at 0x[0-9a-f]+", "", str(w.message)) for w in caught
                         if "backward hook" in str(w.message)])
    plain = lib.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pickle.dumps(plain)
    seen.append(len(caught))
    seen.append(sorted(n for n in hooks.__all__ if n != "BackwardHook"))
    return seen


def test_saving_a_tensor_with_hooks_warns_like_torch():
    torch = torch_or_skip()
    ours, theirs = _program(retrograd), _program(torch)
    assert ours[-1] == [n for n in theirs[-1] if n in ours[-1]]
    assert {"unserializable_hook", "warn_if_has_hooks", "RemovableHandle"} <= set(ours[-1])
    assert ours[:-1] == theirs[:-1]
    assert ours[0] == ["backward hook <function _program.<locals>.named> on tensor will not be "
                       "serialized.  If this is expected, you can decorate the function with "
                       "@torch.utils.hooks.unserializable_hook to suppress this warning"]
    assert ours[1] == []
