"""LoggingTensor: a tensor subclass that logs the ops run on it (used by functional tests).

As torch's: a wrapper subclass (`Tensor._make_wrapper_subclass`) whose `__torch_dispatch__`
logs nothing here but unwraps and rewraps, with `__torch_function__` disabled.
"""

import torch


class LoggingTensor(torch.Tensor):
    @staticmethod
    def __new__(cls, elem, *args, **kwargs):
        make = getattr(torch.Tensor, "_make_wrapper_subclass", None)
        if make is None:
            raise NotImplementedError("LoggingTensor needs Tensor._make_wrapper_subclass")
        r = make(cls, elem.size(), strides=elem.stride(), dtype=elem.dtype,
                 device=elem.device, requires_grad=kwargs.get("requires_grad", False))
        r.elem = elem
        return r

    __torch_function__ = torch._C._disabled_torch_function_impl  # plain dispatch, as torch's

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(x):
            return x.elem if isinstance(x, LoggingTensor) else x

        def wrap(x):
            return LoggingTensor(x) if isinstance(x, torch.Tensor) else x

        kwargs = kwargs or {}
        out = func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
        if isinstance(out, (tuple, list)):
            return type(out)(wrap(o) for o in out)
        return wrap(out)
