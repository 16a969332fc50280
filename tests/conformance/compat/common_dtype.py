"""Dtype lists used by `@dtypes(...)`."""

import torch


def floating_types() -> tuple:
    return (torch.float32, torch.float64)


def floating_types_and(*dtypes) -> tuple:
    return (*floating_types(), *dtypes)


def all_types() -> tuple:
    return (*floating_types(), torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def all_types_and(*dtypes) -> tuple:
    return (*all_types(), *dtypes)
