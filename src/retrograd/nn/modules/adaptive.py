"""nn.AdaptiveLogSoftmaxWithLoss: a softmax over a shortlist of frequent classes plus one head
entry per cluster of rarer classes, each cluster with its own (narrower) two-layer projection.

A class in a cluster gets the head's log-probability of the cluster plus its log-probability
within the cluster. forward computes only the target classes (each cluster's projection runs
on the rows whose target is in it); log_prob gives every class; predict the most likely one.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

import retrograd
from retrograd._tensor import Tensor
from retrograd.nn import functional as F
from retrograd.nn.modules.container import ModuleList, Sequential
from retrograd.nn.modules.linear import Linear
from retrograd.nn.modules.module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _size_text(t: Tensor) -> str:
    return f"torch.Size({list(t.shape)})"  # torch's message prints its Size


class AdaptiveLogSoftmaxWithLoss(Module):
    in_features: int
    n_classes: int
    cutoffs: list[int]
    div_value: float
    head_bias: bool
    head: Linear
    tail: ModuleList

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        valid = (cutoffs == sorted(cutoffs) and len(set(cutoffs)) == len(cutoffs)
                 and min(cutoffs) > 0 and max(cutoffs) <= n_classes - 1
                 and all(int(c) == c for c in cutoffs))
        if not valid:
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        factory = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **factory)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            # each further cluster projects through a hidden size div_value times smaller
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **factory),
                                        Linear(hidden, size, bias=False, **factory)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection.children():
                layer.reset_parameters()  # type: ignore[operator]

    def _check_target(self, input_: Tensor, target_: Tensor) -> None:
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs "
                                   f"with size {_size_text(input_)}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs "
                                   f"with size {_size_text(input_)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        self._check_target(input_, target_)
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        labels = target.detach().numpy().astype(np.int64)
        if labels.size and (labels.min() < 0 or labels.max() >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        # which cluster each target is in (0: the shortlist)
        cluster = np.searchsorted(np.asarray(self.cutoffs), labels, side="right")
        head_index = np.where(cluster == 0, labels, self.shortlist_size + cluster - 1)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        index = retrograd.from_numpy(head_index.astype(np.int64)).to(input.device)
        output = head_logprob.gather(1, index.unsqueeze(1)).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            rows = np.flatnonzero(cluster == i)
            if rows.size == 0:
                continue
            at = retrograd.from_numpy(rows.astype(np.int64)).to(input.device)
            within = retrograd.from_numpy(labels[rows] - self.cutoffs[i - 1]).to(input.device)
            cluster_logprob = F.log_softmax(self.tail[i - 1](input.index_select(0, at)), dim=1)
            output = output.index_add(0, at, cluster_logprob.gather(1, within.unsqueeze(1))
                                      .squeeze(1))
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            # a cluster's classes: their log-probability within it plus the cluster's own
            cluster_logprob = F.log_softmax(projection(input), dim=1)
            column = self.shortlist_size + i
            parts.append(cluster_logprob + head_logprob[:, column:column + 1])
        return retrograd.cat(parts, dim=1)

    def log_prob(self, input: Tensor) -> Tensor:
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        head_output = self.head(input)
        output = retrograd.argmax(head_output, dim=1)
        outside = output >= self.shortlist_size
        if bool(outside.any()):
            # rows whose best head entry is a cluster: look at every class
            full = self._get_full_log_prob(input[outside], head_output[outside])
            output[outside] = retrograd.argmax(full, dim=1)
        return output
