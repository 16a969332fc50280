"""bucketize, searchsorted's scalar form and errors, and the unsafe split variants, compared
with torch."""

import pytest

from tests.parity.harness import both, error_of, torch_or_skip


def test_bucketize_and_scalar_search():
    def prog(lib):
        bounds = lib.tensor([1.0, 3.0, 5.0])
        values = lib.tensor([[3.0, 6.0], [1.0, 7.0]])
        return (lib.bucketize(values, bounds), lib.bucketize(values, bounds, right=True),
                lib.bucketize(3, bounds), lib.searchsorted(bounds, 3.0),
                lib.searchsorted(bounds, values, out_int32=True).dtype)

    both(prog)


ERRORS = [
    lambda lib: lib.searchsorted(lib.tensor([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]),
                                 lib.tensor([1.0, 2.0])),
    lambda lib: lib.searchsorted(lib.tensor([1.0, 3.0]), lib.tensor([2.0]), side="left",
                                 right=True),
    lambda lib: lib.searchsorted(lib.tensor([1.0, 3.0]), lib.tensor([2.0]), side="mid"),
    lambda lib: lib.bucketize(lib.tensor([1.0]), lib.tensor([[1.0, 2.0]])),
]


@pytest.mark.parametrize("call", ERRORS)
def test_errors_are_torchs_word_for_word(call):
    import retrograd

    torch = torch_or_skip()
    assert error_of(call, retrograd) == error_of(call, torch)


@pytest.mark.parametrize("name", ["unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk"])
def test_unsafe_split_pieces_may_be_written_in_place(name):
    args = {"unsafe_split": (1,), "unsafe_split_with_sizes": ((1, 1, 1),),
            "unsafe_chunk": (3,)}[name]

    def prog(lib):
        a = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], requires_grad=True)
        b = a + a
        s1, s2, _ = getattr(b, name)(*args)
        fn = type(s1.grad_fn).__name__
        s1.mul_(s2)
        s1.sum().backward()
        return fn, a.grad, s1._is_view()

    both(prog)
