"""The stand-in for torch.testing._internal compares, parametrizes and instantiates as PyTorch's
does (checked here on torch itself, the library the control run uses)."""

import unittest

import pytest

torch = pytest.importorskip("torch")

import sys  # noqa: E402

from tests.conformance import binding  # noqa: E402

binding.install("torch")

from tests.conformance.compat import common_device_type as D  # noqa: E402
from tests.conformance.compat import common_utils as U  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _unbind_afterwards():
    """Leave this test process's imports as they were for the modules that follow."""
    yield
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, binding._Finder)]


class _Case(U.TestCase):
    def runTest(self):  # unittest needs one test method to build an instance
        pass


CASE = _Case()


@pytest.mark.parametrize("x, y", [
    (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-6])),  # float32: rtol 1.3e-6
    (torch.tensor(3.0), 3),  # a number against a 0-d tensor
    (torch.tensor([3.0]), 3.0),  # and against a one-element tensor
    ([torch.tensor(1.0), (2, "a")], [torch.tensor(1.0), (2, "a")]),
    ({"a": torch.ones(2)}, {"a": torch.ones(2)}),
    (torch.tensor([float("nan")]), torch.tensor([float("nan")])),  # equal_nan by default
    (torch.Size([2, 3]), (2, 3)),
])
def test_equal_pairs(x, y):
    CASE.assertEqual(x, y)


@pytest.mark.parametrize("x, y, kwargs", [
    (torch.tensor([1.0]), torch.tensor([1.001]), {}),
    (torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64), {}),  # exact dtype
    (torch.tensor([1, 2]), torch.tensor([1, 3]), {}),
    (torch.ones(2), torch.ones(3), {}),
    (torch.ones(2, 1), torch.ones(2), {}),
    ([1, 2], [1, 2, 3], {}),
    (torch.tensor([1.0]), torch.tensor([1.5]), {"atol": 0.1, "rtol": 0}),
])
def test_unequal_pairs(x, y, kwargs):
    with pytest.raises(AssertionError):
        CASE.assertEqual(x, y, **kwargs)


def test_dtype_check_can_be_relaxed_and_tolerances_given():
    CASE.assertEqual(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64),
                     exact_dtype=False)
    CASE.assertEqual(torch.tensor([1.0]), torch.tensor([1.05]), atol=0.1, rtol=0)


def test_parametrize_names_tests_as_pytorch_does():
    class T(U.TestCase):
        @U.parametrize("flag", [True, False])
        @U.parametrize("n", [1, 2.5])
        def test_it(self, flag, n):
            self.seen = (flag, n)

        @U.parametrize("x", [U.subtest(3, name="three")])
        def test_named(self, x):
            self.seen = x

    U.instantiate_parametrized_tests(T)
    names = sorted(n for n in vars(T) if n.startswith("test"))
    assert names == ["test_it_flag_False_n_1", "test_it_flag_False_n_2_5",
                     "test_it_flag_True_n_1", "test_it_flag_True_n_2_5", "test_named_three"]
    case = T("test_it_flag_True_n_2_5")
    case.test_it_flag_True_n_2_5()
    assert case.seen == (True, 2.5)


def test_device_instantiation_makes_cpu_tests_per_dtype():
    class TestThing(U.TestCase):
        @D.dtypes(torch.float32, torch.float64)
        def test_typed(self, device, dtype):
            self.seen = (device, dtype)

        def test_plain(self, device):
            self.seen = device

        @D.onlyCUDA
        def test_gpu(self, device):
            pass

    scope = {"TestThing": TestThing}
    D.instantiate_device_type_tests(TestThing, scope)
    cls = scope["TestThingCPU"]
    assert "TestThing" not in scope
    names = sorted(n for n in vars(cls) if n.startswith("test"))
    assert names == ["test_gpu_cpu", "test_plain_cpu", "test_typed_cpu_float32",
                     "test_typed_cpu_float64"]
    case = cls("test_typed_cpu_float64")
    case.test_typed_cpu_float64()
    assert case.seen == ("cpu", torch.float64)
    result = unittest.TestResult()
    cls("test_gpu_cpu").run(result)
    assert len(result.skipped) == 1


def test_missing_names_fail_only_where_used():
    missing = binding.Missing("torch.nowhere")
    assert not missing
    old = binding.importing
    binding.importing = False
    try:
        with pytest.raises(binding.MissingAPI, match="missing: torch.nowhere.f"):
            missing.f()
        with pytest.raises(binding.MissingAPI):
            missing >= 0  # noqa: B015
    finally:
        binding.importing = old
