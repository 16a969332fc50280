"""retrograd.utils.data: datasets, samplers, DataLoader batching and collation."""

import collections
import warnings

import numpy as np
import pytest

import retrograd
from retrograd.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    random_split,
)


def _data(n=10):
    x = retrograd.arange(n * 2, dtype=retrograd.float32).reshape(n, 2)
    y = retrograd.arange(n)
    return x, y


def _tolist(batch):
    if isinstance(batch, retrograd.Tensor):
        return (batch.tolist(), batch.dtype.name, tuple(batch.shape))
    if isinstance(batch, dict):
        return {k: _tolist(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(_tolist(v) for v in batch)
    return batch


def _torch_tolist(batch):
    import torch

    if isinstance(batch, torch.Tensor):
        return (batch.tolist(), str(batch.dtype).replace("torch.", ""), tuple(batch.shape))
    if isinstance(batch, dict):
        return {k: _torch_tolist(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(_torch_tolist(v) for v in batch)
    return batch


def test_sequential_batches():
    x, y = _data()
    loader = DataLoader(TensorDataset(x, y), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and len(batches) == 3
    xb, yb = batches[0]
    assert isinstance(batches[0], list)
    assert xb.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0]]
    assert xb.dtype is retrograd.float32 and yb.dtype is retrograd.int64
    assert yb.tolist() == [0, 1, 2, 3]
    assert batches[2][1].tolist() == [8, 9]
    assert xb.is_contiguous()


def test_drop_last():
    x, y = _data()
    loader = DataLoader(TensorDataset(x, y), batch_size=4, drop_last=True)
    assert len(loader) == 2
    assert [b[1].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_shuffle_is_deterministic_with_a_seeded_generator():
    x, y = _data(20)
    ds = TensorDataset(x, y)

    def epochs(seed, n=3):
        g = retrograd.Generator().manual_seed(seed)
        loader = DataLoader(ds, batch_size=6, shuffle=True, generator=g)
        return [[b[1].tolist() for b in loader] for _ in range(n)]

    a, b, c = epochs(0), epochs(0), epochs(1)
    assert a == b
    assert a != c
    assert a[0] != a[1]  # a new permutation every epoch
    for epoch in a:
        flat = [i for batch in epoch for i in batch]
        assert sorted(flat) == list(range(20))
        assert [len(batch) for batch in epoch] == [6, 6, 6, 2]


def test_shuffle_uses_global_generator_without_one():
    x, y = _data(20)
    loader = DataLoader(TensorDataset(x, y), batch_size=20, shuffle=True)
    retrograd.manual_seed(3)
    first = next(iter(loader))[1].tolist()
    retrograd.manual_seed(3)
    assert next(iter(loader))[1].tolist() == first
    assert sorted(first) == list(range(20))


class _Rows(Dataset):
    """The same samples as a TensorDataset, through the generic per-sample path."""

    def __init__(self, *tensors):
        self.tensors = tensors

    def __getitem__(self, i):
        return tuple(t[i] for t in self.tensors)

    def __len__(self):
        return len(self.tensors[0])


def test_tensor_dataset_fast_path_equals_default_collate():
    x = retrograd.randn(12, 3, 2).transpose(1, 2)  # non-contiguous rows
    y = retrograd.arange(12).to(retrograd.int32)
    z = retrograd.randn(12).to(retrograd.bfloat16)
    g1 = retrograd.Generator().manual_seed(5)
    g2 = retrograd.Generator().manual_seed(5)
    fast = list(DataLoader(TensorDataset(x, y, z), batch_size=5, shuffle=True, generator=g1))
    slow = list(DataLoader(_Rows(x, y, z), batch_size=5, shuffle=True, generator=g2))
    assert len(fast) == len(slow) == 3
    for fb, sb in zip(fast, slow):
        assert type(fb) is type(sb) is list
        for f, s in zip(fb, sb):
            assert f.dtype is s.dtype and f.shape == s.shape
            assert f.stride() == s.stride()
            np.testing.assert_array_equal(np.asarray(f.float().numpy()),
                                          np.asarray(s.float().numpy()))


def test_requires_grad_tensors_keep_their_graph():
    x = retrograd.randn(6, 2, requires_grad=True)
    xb, = next(iter(DataLoader(TensorDataset(x), batch_size=3)))
    assert xb.grad_fn is not None
    xb.sum().backward()
    assert x.grad[:3].tolist() == [[1.0, 1.0]] * 3


def test_size_mismatch():
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(retrograd.zeros(3), retrograd.zeros(4))
    with pytest.raises(ValueError, match="Size mismatch between datasets"):
        StackDataset(range(3), range(4))


SAMPLE_BATCHES = {
    "dicts": [{"a": 1, "b": 2.5, "c": "s", "d": np.float32(1.5), "e": np.arange(3),
               "f": True}] * 3,
    "tuples": [(1, [2.0, 3.0]), (4, [5.0, 6.0])],
    "nested": [{"x": (np.ones((2, 2), np.float32), [1, 2]), "y": {"z": b"b"}}] * 2,
    "ints": [1, 2, 3],
    "np_int32": [np.int32(1), np.int32(2)],
    "np_bool": [np.bool_(True), np.bool_(False)],
    "np_arrays_f16": [np.ones(2, np.float16), np.zeros(2, np.float16)],
    "lists": [[1, 2], [3, 4]],
    "strings": ["a", "b"],
}


@pytest.mark.parametrize("name", list(SAMPLE_BATCHES))
def test_default_collate_matches_torch(name):
    pytest.importorskip("torch")
    from torch.utils.data import default_collate as torch_collate

    batch = SAMPLE_BATCHES[name]
    assert _tolist(default_collate(batch)) == _torch_tolist(torch_collate(batch))


def test_default_collate_tensors_and_namedtuples():
    point = collections.namedtuple("point", "x y")
    out = default_collate([point(retrograd.ones(2), 1), point(retrograd.zeros(2), 2)])
    assert type(out) is point
    assert out.x.tolist() == [[1.0, 1.0], [0.0, 0.0]]
    assert out.y.tolist() == [1, 2] and out.y.dtype is retrograd.int64
    od = default_collate([collections.OrderedDict(a=1.0), collections.OrderedDict(a=2.0)])
    assert type(od) is collections.OrderedDict
    assert od["a"].dtype is retrograd.float64


def test_default_collate_errors():
    pytest.importorskip("torch")
    from torch.utils.data import default_collate as torch_collate

    for batch, exc in (([[1, 2], [3]], RuntimeError), ([object()], TypeError),
                       ([np.array(["a"])], TypeError)):
        with pytest.raises(exc) as ours:
            default_collate(batch)
        with pytest.raises(exc) as ref:
            torch_collate(batch)
        assert str(ours.value) == str(ref.value).replace("torch", "retrograd")


def test_default_convert():
    out = default_convert({"a": np.arange(2), "b": (np.float64(1.0), "s"), "c": [np.ones(1)]})
    assert isinstance(out["a"], retrograd.Tensor) and out["a"].tolist() == [0, 1]
    assert isinstance(out["b"], list) and out["b"][0].dtype is retrograd.float64
    assert out["b"][1] == "s"
    assert isinstance(out["c"][0], retrograd.Tensor)


def test_custom_collate_fn_and_batch_size_none():
    x, y = _data(4)
    loader = DataLoader(TensorDataset(x, y), batch_size=2, collate_fn=lambda b: len(b))
    assert list(loader) == [2, 2]
    unbatched = list(DataLoader(TensorDataset(x, y), batch_size=None))
    assert len(unbatched) == 4
    assert unbatched[1][0].tolist() == [2.0, 3.0] and unbatched[1][1].item() == 1


def test_sampler_and_batch_sampler_arguments():
    x, y = _data(10)
    ds = TensorDataset(x, y)
    loader = DataLoader(ds, batch_size=3, sampler=[9, 8, 7, 6])
    assert [b[1].tolist() for b in loader] == [[9, 8, 7], [6]]
    loader = DataLoader(ds, batch_sampler=[[0, 5], [2]])
    assert [b[1].tolist() for b in loader] == [[0, 5], [2]]
    assert len(loader) == 2


@pytest.mark.parametrize("kwargs", [
    {"batch_size": 2, "batch_sampler": [[0]]},
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_size": None, "drop_last": True},
    {"num_workers": -1},
    {"timeout": -1},
    {"prefetch_factor": 2},
    {"persistent_workers": True},
    {"batch_size": 0},
    {"batch_size": 2, "drop_last": 1},
])
def test_invalid_arguments_match_torch(kwargs):
    torch = pytest.importorskip("torch")
    x, y = _data(4)
    with pytest.raises(ValueError) as ours:
        DataLoader(TensorDataset(x, y), **kwargs)
    with pytest.raises(ValueError) as ref:
        torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.zeros(4)), **kwargs)
    assert str(ours.value) == str(ref.value)


def test_attributes_frozen_after_init():
    loader = DataLoader(TensorDataset(*_data(4)), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                         "DataLoader is initialized"):
        loader.batch_size = 3
    loader.collate_fn = default_collate  # other attributes can change


def test_num_workers_default_prefetch_factor():
    x, y = _data(6)
    loader = DataLoader(TensorDataset(x, y), batch_size=4, num_workers=2)
    assert loader.prefetch_factor == 2
    assert [b[1].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5]]


def test_random_split_lengths_and_fractions():
    torch = pytest.importorskip("torch")
    g = retrograd.Generator().manual_seed(0)
    parts = random_split(range(10), [3, 7], generator=g)
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(i for p in parts for i in p) == list(range(10))
    assert all(isinstance(p, Subset) for p in parts)
    for fractions in ([0.3, 0.7], [0.33, 0.33, 0.34], [0.5, 0.25, 0.25]):
        ours = random_split(range(11), fractions, generator=g)
        ref = torch.utils.data.random_split(range(11), fractions)
        assert [len(p) for p in ours] == [len(p) for p in ref]
    g1 = retrograd.Generator().manual_seed(7)
    g2 = retrograd.Generator().manual_seed(7)
    assert ([list(p) for p in random_split(range(10), [5, 5], generator=g1)]
            == [list(p) for p in random_split(range(10), [5, 5], generator=g2)])
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of "
                                         "the input dataset!"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        random_split(range(10), [0.5, -0.5, 1.0])


def test_subset_concat_stack_datasets():
    x, y = _data(6)
    ds = TensorDataset(x, y)
    sub = Subset(ds, [4, 1])
    assert len(sub) == 2 and sub[0][1].item() == 4
    assert [b[1].tolist() for b in DataLoader(sub, batch_size=2)] == [[4, 1]]
    cat = ConcatDataset([range(3), range(10, 14)])
    assert len(cat) == 7 and cat[3] == 10 and cat[-1] == 13 and cat[2] == 2
    assert cat.cumulative_sizes == [3, 7]
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset "
                                         "length"):
        cat[-8]
    assert len(ds + ds) == 12
    stacked = StackDataset(a=range(3), b=range(10, 13))
    assert stacked[1] == {"a": 1, "b": 11}
    batch = next(iter(DataLoader(stacked, batch_size=3)))
    assert batch["b"].tolist() == [10, 11, 12]
    assert StackDataset(range(2), range(2))[1] == (1, 1)


class _Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def test_iterable_dataset():
    loader = DataLoader(_Stream(7), batch_size=3)
    assert len(loader) == 3
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    loader = DataLoader(_Stream(7), batch_size=3, drop_last=True)
    assert len(loader) == 2 and [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5]]
    assert list(ChainDataset([_Stream(2), _Stream(3)])) == [0, 1, 0, 1, 2]
    assert len(_Stream(2) + _Stream(3)) == 5
    with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected "
                                         "unspecified shuffle option, but got shuffle=True"):
        DataLoader(_Stream(3), shuffle=True)
    with pytest.raises(AssertionError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([_Stream(2)])


def test_samplers():
    torch = pytest.importorskip("torch")
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = retrograd.Generator().manual_seed(0)
    perm = list(RandomSampler(range(10), generator=g))
    assert sorted(perm) == list(range(10))
    draws = list(RandomSampler(range(5), replacement=True, num_samples=70, generator=g))
    assert len(draws) == 70 and set(draws) <= set(range(5))
    longer = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(longer) == 10 and sorted(longer[:4]) == [0, 1, 2, 3]
    assert sorted(SubsetRandomSampler([5, 7, 9], generator=g)) == [5, 7, 9]
    weighted = list(WeightedRandomSampler([0.0, 1.0, 0.0], 5, generator=g))
    assert weighted == [1] * 5
    for n, bs, drop in ((10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False)):
        ours = list(BatchSampler(range(n), bs, drop))
        ref = list(torch.utils.data.BatchSampler(range(n), bs, drop))
        assert ours == ref
        assert len(BatchSampler(range(n), bs, drop)) == len(ref)
    for bad in ({"replacement": 1}, {"num_samples": 0}):
        exc = TypeError if "replacement" in bad else ValueError
        with pytest.raises(exc) as ours:
            RandomSampler(range(3), **bad)
        with pytest.raises(exc) as ref:
            torch.utils.data.RandomSampler(range(3), **bad)
        assert str(ours.value) == str(ref.value)


def test_len_matches_torch():
    torch = pytest.importorskip("torch")
    for n, bs, drop in ((10, 4, False), (10, 4, True), (8, 4, True), (3, 5, False)):
        ours = DataLoader(TensorDataset(retrograd.zeros(n)), batch_size=bs, drop_last=drop)
        ref = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.zeros(n)),
                                          batch_size=bs, drop_last=drop)
        assert len(ours) == len(ref) == len(list(ours))


def test_pin_memory_warns():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        DataLoader(TensorDataset(retrograd.zeros(2)), pin_memory=True)
    assert any("pin_memory" in str(x.message) for x in w)
