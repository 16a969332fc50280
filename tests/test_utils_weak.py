"""retrograd.utils.weak against torch.utils.weak: identity-keyed weak dictionaries and
references, and retrograd.types' aliases."""

import copy
import gc

import pytest

import retrograd
from tests.parity.harness import torch_or_skip


def _program(lib):
    weak = __import__(f"{lib.__name__}.utils.weak", fromlist=["weak"])
    a, b = lib.ones(2), lib.ones(2)  # equal values, different tensors
    d = weak.WeakTensorKeyDictionary()
    d[a] = "a"
    d[b] = "b"
    seen = [len(d), d[a], d[b], a in d, lib.ones(2) in d, d.get(lib.zeros(1), "none"),
            sorted(d.values())]
    d.setdefault(a, "ignored")
    seen.append(d[a])
    shallow = copy.copy(d)
    seen.append(len(shallow))
    del b
    gc.collect()
    seen += [len(d), list(d.values()), len(shallow)]
    del d[a]
    seen.append(len(d))
    ra, rb = weak.WeakIdRef(a), weak.WeakIdRef(a)
    seen += [ra == rb, hash(ra) == hash(rb), ra() is a]
    t = lib.zeros(3)
    tw = weak.TensorWeakRef(t)
    seen.append(tw() is t)
    del t
    gc.collect()
    seen.append(tw() is None)
    c = lib.ones(1)
    rc = weak.WeakIdRef(c)
    rc2 = weak.WeakIdRef(c)
    del c
    gc.collect()
    seen += [rc() is None, rc == rc, rc == rc2]
    seen.append(sorted(weak.__all__))
    return seen


def test_weak_dictionaries_and_refs_like_torch():
    torch = torch_or_skip()
    assert _program(retrograd) == _program(torch)


def test_tensor_weak_ref_refuses_other_objects():
    from retrograd.utils.weak import TensorWeakRef

    with pytest.raises(AssertionError, match="expected Tensor"):
        TensorWeakRef([1.0])


def test_types_aliases_accept_what_torchs_do():
    torch_or_skip()
    import torch.types as tt

    import retrograd.types as rt

    assert sorted(rt.__all__) == sorted(tt.__all__)
    for name in ("Number", "Device", "FileLike", "IntLikeType", "FloatLikeType", "BoolLikeType",
                 "_size", "_TensorOrTensors", "_TensorOrOptionalTensors", "_Number"):
        assert hasattr(rt, name), name
    assert isinstance(3, rt._Number) and rt._size.__args__[0] is retrograd.Size
    assert rt._Number == tt._Number
    assert len(rt.py_sym_types) == len(tt.py_sym_types) == 3
