"""nn.functional odds and ends: dropout, embedding, one_hot, pad, scaled_dot_product_attention.

Dropout on CPU is `input * noise` in torch (grad_fn MulBackward0), the noise drawn from
retrograd's generator so manual_seed reproduces it; MulBackward0 saves the noise, so backward
uses the same mask. Padding by reflection / replication / wrap-around gathers along each padded
dim with an index vector; its backward scatter-adds with the same vectors.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from retrograd._ops import dispatch
from retrograd._ops.registry import op, register, register_functional
from retrograd._tensor import Tensor, _wrap

DROPOUT_P = "dropout probability has to be between 0 and 1, but got {}"
PAD_DIMS = (
    "Padding size {} is not supported for {}D input tensor.\n"
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


# --- dropout ---------------------------------------------------------------------------------


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(DROPOUT_P.format(p))


_SELU_ALPHA = 1.7580993408473766  # -selu's negative saturation value, for alpha dropout


def _dropout_noise(shape: tuple, dt: np.dtype, p: float, feature: bool, batched: bool,
                   alpha: bool):
    """The noise dropout multiplies by: Bernoulli(1 - p) / (1 - p) in dtype dt, one draw per
    (sample, channel) for feature dropout; alpha dropout's (noise, shift). One kernel, so a
    compiled graph draws it as one node (random.draw)."""
    from retrograd._ops.random import gen

    lead = 2 if batched else 1
    mask_shape = shape[:lead] + (1,) * (len(shape) - lead) if feature else shape
    keep = (gen(None).random(mask_shape, dtype=np.float32) < (1.0 - p)).astype(dt)
    if not alpha:
        return keep * dt.type(1.0 / (1.0 - p))
    # alpha dropout keeps the self-normalizing mean/variance: x * keep * scale + shift
    scale = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    shift = ((keep - 1) * (_SELU_ALPHA * scale) + _SELU_ALPHA * scale * p).astype(dt)
    return keep * dt.type(scale), shift


def _dropout_impl(input: Tensor, p: float, train: bool, *, feature: bool = False,
                  alpha: bool = False, inplace: bool = False, batched: bool = True) -> Tensor:
    """torch's _dropout_impl: input * noise (alpha: input * noise + shift), input if no-op."""
    from retrograd._ops.random import draw

    if p == 0 or not train or input.numel() == 0:
        return input
    a = input._data
    if p == 1:
        zero = _wrap(np.zeros((), a.dtype))
        return input.mul_(zero) if inplace else input * zero
    drawn = draw(_dropout_noise, a.shape, a.dtype, float(p), feature, batched, alpha)
    if not alpha:
        noise = _wrap(drawn)
        return input.mul_(noise) if inplace else input * noise
    noise, shift = _wrap(drawn[0]), _wrap(drawn[1])
    if inplace:
        return input.mul_(noise).add_(shift)
    return input * noise + shift


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """torch.dropout: input itself when nothing is dropped, else input * noise."""
    return _dropout_impl(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Channel dropout: one noise value per (sample, channel), broadcast over the rest."""
    return _dropout_impl(input, p, train, feature=True)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, feature=True, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, alpha=True)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, alpha=True, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, feature=True, alpha=True)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, feature=True, alpha=True, inplace=True)


for _fn in (dropout, dropout_, feature_dropout, feature_dropout_, alpha_dropout, alpha_dropout_,
            feature_alpha_dropout, feature_alpha_dropout_):
    register(_fn.__name__, _fn)


def _functional_dropout(impl, impl_, default_training: bool):
    def f(input: Tensor, p: float = 0.5, training: bool = default_training,
          inplace: bool = False) -> Tensor:
        _check_p(p)
        return (impl_ if inplace else impl)(input, p, training)

    f.__name__ = impl.__name__
    return f


register_functional("dropout", _functional_dropout(dropout, dropout_, True))
register_functional("alpha_dropout", _functional_dropout(alpha_dropout, alpha_dropout_, False))
register_functional("feature_alpha_dropout",
                    _functional_dropout(feature_alpha_dropout, feature_alpha_dropout_, False))


def _feature(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    return (feature_dropout_ if inplace else feature_dropout)(input, p, training)


def _feature_dims_warning(name: str, nd: int, spatial: int) -> None:
    warnings.warn(
        f"{name}: Received a {nd}-D input to {name}, which is deprecated and will result in an "
        f"error in a future release. To retain the behavior and silence this warning, please use "
        f"dropout instead. Note that {name} exists to provide channel-wise dropout on inputs "
        f"with {spatial} spatial dimensions, a channel dimension, and an optional batch "
        f"dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).", stacklevel=3)


def _unbatched_feature_dropout(input: Tensor, p: float, training: bool, inplace: bool):
    """feature_dropout on input.unsqueeze(0), squeezed back (torch's no-batch-dim path)."""
    if inplace:  # one draw per channel of the unbatched input, written in place
        return _dropout_impl(input, p, training, feature=True, inplace=True, batched=False)
    return feature_dropout(input.unsqueeze(0), p, training).squeeze(0)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    _check_p(p)
    nd = input.ndim
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    if nd == 2:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _feature(input, p, training, inplace)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    _check_p(p)
    nd = input.ndim
    if nd not in (3, 4):
        _feature_dims_warning("dropout2d", nd, 2)
    if nd == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature(input, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,
              inplace: bool = False) -> Tensor:
    _check_p(p)
    nd = input.ndim
    if nd not in (4, 5):
        _feature_dims_warning("dropout3d", nd, 3)
    if nd != 5:
        return _unbatched_feature_dropout(input, p, training, inplace)
    return _feature(input, p, training, inplace)


register_functional("dropout1d", dropout1d)
register_functional("dropout2d", dropout2d)
register_functional("dropout3d", dropout3d)


def _native_dropout_forward(a, p, train):
    if train is not None and not train:
        return a.copy(), np.ones(a.shape, bool)
    if p >= 1:
        return np.zeros_like(a), np.zeros(a.shape, bool)
    from retrograd._ops.random import gen

    keep = gen(None).random(a.shape, dtype=np.float32) < (1.0 - p)
    return a * keep * a.dtype.type(1.0 / (1.0 - p)), keep


def _native_dropout_grad(grad, result1, p, train):
    scale = 1.0 if train is not None and not train else 0.0 if p >= 1 else 1.0 / (1.0 - p)
    return grad * _wrap(result1._data.astype(grad._data.dtype) * grad._data.dtype.type(scale))


def _native_dropout_grad_array(grad, result1, p, train):
    """_native_dropout_grad on arrays (NOTE [Array formulas])."""
    scale = 1.0 if train is not None and not train else 0.0 if p >= 1 else 1.0 / (1.0 - p)
    return np.multiply(grad, result1.astype(grad.dtype) * grad.dtype.type(scale))


native_dropout = op("native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)",
                    _native_dropout_forward, grads={"input": _native_dropout_grad},
                    array_grads={"input": _native_dropout_grad_array}, method=False)


# --- embedding -------------------------------------------------------------------------------


def _check_indices(indices: np.ndarray) -> None:
    if indices.dtype not in (np.int64, np.int32):
        from retrograd._dtype import from_numpy_dtype

        name = from_numpy_dtype(indices.dtype)._legacy
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got torch.{name} instead "
                           "(while checking arguments for embedding)")


def _embedding_forward(weight, indices, padding_idx, scale_grad_by_freq, sparse):
    _check_indices(indices)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    n = weight.shape[0]
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        raise IndexError("index out of range in self")
    return np.take(weight, indices, axis=0)


def _freq_scale(flat: np.ndarray, num_weights: int) -> np.ndarray:
    counts = np.bincount(flat, minlength=num_weights)
    return 1.0 / counts[flat]


def _segment_sum(flat: np.ndarray, g: np.ndarray, num_weights: int) -> np.ndarray:
    """out[i] = sum of the rows of g whose index is i (sorted runs, faster than np.add.at)."""
    out = np.zeros((num_weights, g.shape[1]), g.dtype)
    if flat.size:
        order = np.argsort(flat, kind="stable")
        ids = flat[order]
        starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
        out[ids[starts]] = np.add.reduceat(g[order], starts, axis=0)
    return out


def _embedding_backward_forward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    flat = indices.reshape(-1).astype(np.int64, copy=False)
    g = grad.reshape(flat.size, grad.shape[-1])
    if scale_grad_by_freq:
        g = g * _freq_scale(flat, num_weights)[:, None].astype(g.dtype)
    out = _segment_sum(flat, g, num_weights)
    if padding_idx >= 0:
        out[padding_idx] = 0
    return out


def _embedding_double_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq):
    """The adjoint of the scatter-add: gather rows, zero padding rows, same frequency scale."""
    flat = indices._data.reshape(-1).astype(np.int64, copy=False)
    out = embedding(grad, indices)
    factor = np.ones(flat.size, grad._data.dtype)
    if scale_grad_by_freq:
        factor = _freq_scale(flat, num_weights).astype(factor.dtype)
    if padding_idx >= 0:
        factor[flat == padding_idx] = 0
    if not scale_grad_by_freq and padding_idx < 0:
        return out
    return out * _wrap(factor.reshape(indices._data.shape + (1,)))


embedding_dense_backward = op(
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, "
    "SymInt padding_idx, bool scale_grad_by_freq) -> Tensor", _embedding_backward_forward,
    grads={"grad_output": _embedding_double_backward}, function=False, method=False)

embedding = op(
    "embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, "
    "bool scale_grad_by_freq=False, bool sparse=False) -> Tensor", _embedding_forward,
    grads={"weight": lambda grad, weight_shape, indices, padding_idx, scale_grad_by_freq:
           embedding_dense_backward(grad, indices, weight_shape[0], padding_idx,
                                    scale_grad_by_freq)},
    array_grads={"weight": lambda grad, weight_shape, indices, padding_idx, scale_grad_by_freq:
                 _embedding_backward_forward(grad, indices, weight_shape[0], padding_idx,
                                             scale_grad_by_freq)},
    method=False)


def _renorm_rows(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> None:
    """torch's embedding_renorm_: rows used by `indices` rescaled to norm <= max_norm, in place."""
    w = weight._data
    rows = np.unique(indices._data.reshape(-1))
    norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=1)
    big = norms > max_norm
    scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
    w[rows[big]] *= scale[:, None]
    if weight._version_counter is not None:
        weight._version_counter.version += 1


def _f_embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < n, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
            padding_idx = n + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    return embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


register_functional("embedding", _f_embedding)


# --- one_hot ---------------------------------------------------------------------------------


def _one_hot_forward(t, num_classes):
    if t.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if t.size == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return np.zeros(t.shape + (num_classes,), np.int64)
    if t.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(t.max()) + 1
    elif t.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (t[..., None] == np.arange(num_classes)).astype(np.int64)


one_hot = op("one_hot(Tensor self, int num_classes=-1) -> Tensor", _one_hot_forward,
             function=False, method=False)
register_functional("one_hot", one_hot)


# --- pad: constant ---------------------------------------------------------------------------


def _check_pad_length(pad, ndim: int) -> None:
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)}while the input has "
                           f"{ndim}dimensions.")


def _constant_pad_forward(a, pad, value):
    pad = tuple(pad)
    _check_pad_length(pad, a.ndim)
    shape, src, dst = list(a.shape), [slice(None)] * a.ndim, [slice(None)] * a.ndim
    for i in range(len(pad) // 2):
        d = a.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        n = a.shape[d]
        size = n + lo + hi
        if size < 0 or n + min(lo, 0) < 0 or n + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        shape[d] = size
        src[d] = slice(max(-lo, 0), n - max(-hi, 0))
        dst[d] = slice(max(lo, 0), max(lo, 0) + max(n - max(-lo, 0) - max(-hi, 0), 0))
    out = np.full(shape, _fill(value, a.dtype), a.dtype)
    out[tuple(dst)] = a[tuple(src)]
    return out


def _fill(value, dtype: np.dtype):
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        return int(value)
    return value


constant_pad_nd = op(
    "constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor", _constant_pad_forward,
    grads={"self": lambda grad, pad: constant_pad_nd(grad, [-p for p in pad])}, method=False)


# --- pad: reflect / replicate / circular -----------------------------------------------------


def _index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """Source position of each output position along one padded dim."""
    j = np.arange(-lo, n + hi)
    if mode == "reflect":
        j = np.abs(j)
        return np.where(j >= n, 2 * (n - 1) - j, j)
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    # circular: negative pads crop first; the wrap-around copies from the cropped body
    body = np.arange(max(-lo, 0), n - max(-hi, 0))
    return body[np.arange(-max(lo, 0), body.size + max(hi, 0)) % max(body.size, 1)]


def _gather_pad(a: np.ndarray, pad, mode: str) -> np.ndarray:
    out = a
    for i in range(len(pad) // 2):
        d = a.ndim - 1 - i
        out = np.take(out, _index(a.shape[d], pad[2 * i], pad[2 * i + 1], mode), axis=d)
    return np.ascontiguousarray(out)


def _scatter_pad(g: np.ndarray, shape: tuple, pad, mode: str) -> np.ndarray:
    """Adjoint of _gather_pad: sums each output position's gradient into its source."""
    for i in range(len(pad) // 2):
        d = len(shape) - 1 - i
        idx = _index(shape[d], pad[2 * i], pad[2 * i + 1], mode)
        onehot = np.zeros((idx.size, shape[d]), g.dtype)
        onehot[np.arange(idx.size), idx] = 1
        g = np.moveaxis(np.matmul(np.moveaxis(g, d, -1), onehot), -1, d)
    return np.ascontiguousarray(g)


_DIM_LETTERS = ("W", "H", "D")


def _check_index_pad(a: np.ndarray, pad, mode: str, k: int) -> None:
    nd = a.ndim
    lead = a.shape[:nd - k]
    if any(s == 0 for s in a.shape[nd - k:]) or (len(lead) == 2 and lead[1] == 0):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{list(a.shape)}")
    if mode == "reflect":
        for i in range(k):
            d = nd - 1 - i
            lo, hi = pad[2 * i], pad[2 * i + 1]
            if not (lo < a.shape[d] and hi < a.shape[d]):
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding "
                    f"input dimension, but got: padding ({lo}, {hi}) at dimension {d} of input "
                    f"{list(a.shape)}")
    sizes = [a.shape[nd - 1 - i] for i in range(k)][::-1]
    outs = [a.shape[nd - 1 - i] + pad[2 * i] + pad[2 * i + 1] for i in range(k)][::-1]
    if any(o < 1 for o in outs):
        letters = _DIM_LETTERS[:k][::-1]
        ins = " ".join(f"{c}: {s}" for c, s in zip(letters, sizes))
        res = " ".join(f"{c}: {s}" for c, s in zip(letters, outs))
        raise RuntimeError(f"input ({ins}) is too small. Calculated output {res}")


def _declare_index_pad(mode: str, torch_name: str, k: int) -> tuple:
    """Declare <torch_name><k>d and its backward (each differentiable by the other)."""
    name = f"{torch_name}{k}d"

    def forward(a, padding):
        _check_index_pad(a, tuple(padding), mode, k)
        return _gather_pad(a, tuple(padding), mode)

    backward = op(
        f"{name}_backward(Tensor grad_output, Tensor self, SymInt[{2 * k}] padding) -> Tensor",
        lambda g, a, padding: _scatter_pad(g, a.shape, tuple(padding), mode),
        grads={"grad_output": lambda grad, padding: fwd(grad, padding)},
        function=False, method=False)
    fwd = op(f"{name}(Tensor self, SymInt[{2 * k}] padding) -> Tensor", forward,
             grads={"self": lambda grad, self, padding: backward(grad, self, padding)},
             function=False, method=False)
    return fwd, backward


_INDEX_PADS = {(mode, k): _declare_index_pad(mode, torch_name, k)[0]
               for mode, torch_name in (("reflect", "reflection_pad"),
                                        ("replicate", "replication_pad"))
               for k in (1, 2, 3)}


def _circular_forward(a, pad):
    pad = tuple(pad)
    for i in range(len(pad) // 2):
        n = a.shape[a.ndim - 1 - i]
        lo, hi = pad[2 * i], pad[2 * i + 1]
        body = n + min(lo, 0) + min(hi, 0)
        if n + lo + hi < 0 or n + min(lo, 0) < 0 or n + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        if lo > n or hi > n or max(lo, 0) > body or max(hi, 0) > body:
            raise RuntimeError("Padding value causes wrapping around more than once.")
    return _gather_pad(a, pad, "circular")


# torch builds circular padding from slice copies (grad_fn CopySlices); one gather op here
_pad_circular_backward = op(
    "_pad_circular_backward(Tensor grad_output, Tensor self, SymInt[] pad) -> Tensor",
    lambda g, a, pad: _scatter_pad(g, a.shape, tuple(pad), "circular"),
    grads={"grad_output": lambda grad, pad: _pad_circular(grad, pad)},
    function=False, method=False)
_pad_circular = op("_pad_circular(Tensor self, SymInt[] pad) -> Tensor", _circular_forward,
                   grads={"self": lambda grad, self, pad: _pad_circular_backward(grad, self,
                                                                                 pad)},
                   function=False, method=False)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    nd = input.ndim
    if len(pad) // 2 > nd:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{nd}")
    if mode == "constant":
        return constant_pad_nd(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(PAD_DIMS.format(len(pad), nd))
    if mode == "circular":
        return _pad_circular(input, pad)
    return _INDEX_PADS[(mode, k)](input, pad)


register_functional("pad", pad)


# --- scaled_dot_product_attention ------------------------------------------------------------


def _bool_to_float_mask(mask: np.ndarray, dtype) -> np.ndarray:
    out = np.zeros(mask.shape, dtype)
    out[~mask] = -np.inf
    return out


def _attention_scores(q, k, mask, is_causal, scale):
    s = np.matmul(q, np.swapaxes(k, -1, -2)) * q.dtype.type(scale)
    if mask is not None:
        s = s + mask
    if is_causal:
        lq, lk = s.shape[-2], s.shape[-1]
        s = np.where(np.tril(np.ones((lq, lk), bool)), s, -np.inf)
    return s


def _softmax_rows(s):
    """(probabilities, logsumexp); rows with every score -inf give zeros, as torch's kernel."""
    m = s.max(axis=-1, keepdims=True)
    dead = np.isneginf(m)
    m = np.where(dead, 0, m)
    e = np.exp(s - m)
    total = e.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(dead, 0, e / np.where(dead, 1, total))
        lse = np.where(dead, -np.inf, m + np.log(total))
    return p.astype(s.dtype, copy=False), lse[..., 0]


def _expand_heads(k: np.ndarray, heads: int) -> np.ndarray:
    """Grouped-query attention: repeat key/value heads to the query's head count."""
    return k if k.shape[1] == heads else np.repeat(k, heads // k.shape[1], axis=1)


def _scale_of(q_shape: tuple, scale) -> float:
    return 1.0 / math.sqrt(q_shape[-1]) if scale is None else scale


def _flash_forward(q, k, v, dropout_p, is_causal, attn_mask, scale):
    heads = q.shape[1]
    k, v = _expand_heads(k, heads), _expand_heads(v, heads)
    s = _attention_scores(q, k, attn_mask, is_causal, _scale_of(q.shape, scale))
    p, lse = _softmax_rows(s)
    out = np.empty_like(q)  # torch's kernel lays the output out like the query
    out[...] = np.matmul(p, v)
    acc = np.float64 if q.dtype == np.float64 else np.float32
    lse_out = np.empty((q.shape[0], q.shape[2], heads), acc).transpose(0, 2, 1)
    lse_out[...] = lse
    return out, lse_out


def _flash_backward_forward(g, q, k, v, out, logsumexp, dropout_p, is_causal, attn_mask,
                            scale):
    """Fused backward: P from the saved logsumexp, then dV = P^T dO, dS = P (dP - rowsum(dP P))."""
    heads = q.shape[1]
    groups = heads // k.shape[1]
    ke, ve = _expand_heads(k, heads), _expand_heads(v, heads)
    sc = _scale_of(q.shape, scale)
    s = _attention_scores(q, ke, attn_mask, is_causal, sc)
    lse = logsumexp[..., None]
    with np.errstate(invalid="ignore"):
        p = np.where(np.isneginf(lse), 0, np.exp(s - lse)).astype(q.dtype, copy=False)
    dv = np.matmul(np.swapaxes(p, -1, -2), g)
    dp = np.matmul(g, np.swapaxes(ve, -1, -2))
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True)) * q.dtype.type(sc)
    dq = np.matmul(ds, ke)
    dk = np.matmul(np.swapaxes(ds, -1, -2), q)
    if groups > 1:  # sum the repeated heads back onto the shared key / value heads
        dk = dk.reshape(dk.shape[0], -1, groups, *dk.shape[2:]).sum(axis=2)
        dv = dv.reshape(dv.shape[0], -1, groups, *dv.shape[2:]).sum(axis=2)
    return tuple(np.ascontiguousarray(a) for a in (dq, dk, dv))


_flash_backward = op(
    "_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query, "
    "Tensor key, Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool is_causal, *, "
    "Tensor? attn_mask=None, float? scale=None) -> (Tensor grad_query, Tensor grad_key, "
    "Tensor grad_value)", _flash_backward_forward, function=False, method=False)


def _flash_grads(grad, query, key, value, output, logsumexp, dropout_p, is_causal, attn_mask,
                 scale, output_mask):
    from retrograd._ops.nn_norm import _fused_wanted

    if _fused_wanted():
        return _flash_backward(grad, query, key, value, output, logsumexp, dropout_p,
                               is_causal, attn_mask=attn_mask, scale=scale)
    return _attention_grads_composite(grad, query, key, value, is_causal, attn_mask, scale,
                                      output_mask)


def _attention_grads_composite(grad, q, k, v, is_causal, attn_mask, scale, mask):
    """The same backward with retrograd ops, for gradients that must be differentiable."""
    from retrograd import matmul

    heads = q.shape[1]
    groups = heads // k.shape[1]
    ke = k if groups == 1 else _repeat_heads(k, groups)
    ve = v if groups == 1 else _repeat_heads(v, groups)
    sc = _scale_of(tuple(q.shape), scale)
    p = _masked_softmax(matmul(q, ke.transpose(-2, -1)) * sc, attn_mask, is_causal)
    dp = matmul(grad, ve.transpose(-2, -1))
    ds = p * (dp - (dp * p).sum(-1, True)) * sc
    dq = matmul(ds, ke) if mask[0] else None
    dk = matmul(ds.transpose(-2, -1), q) if mask[1] else None
    dv = matmul(p.transpose(-2, -1), grad) if mask[2] else None
    if groups > 1:
        dk = None if dk is None else _fold_heads(dk, groups)
        dv = None if dv is None else _fold_heads(dv, groups)
    return dq, dk, dv


def _repeat_heads(t: Tensor, groups: int) -> Tensor:
    b, h, length, d = t.shape
    return t.unsqueeze(2).expand(b, h, groups, length, d).reshape(b, h * groups, length, d)


def _fold_heads(t: Tensor, groups: int) -> Tensor:
    b, h, length, d = t.shape
    return t.reshape(b, h // groups, groups, length, d).sum(2)


def _masked_softmax(s: Tensor, attn_mask, is_causal: bool) -> Tensor:
    """Softmax over the last dim of s + mask; fully masked rows give zeros."""
    if s._data.size == 0:  # an empty batch or sequence: nothing to normalize
        return s * 0
    additive = np.zeros((), s._data.dtype)
    if attn_mask is not None:
        additive = additive + attn_mask._data
    if is_causal:
        lq, lk = s.shape[-2], s.shape[-1]
        additive = additive + np.where(np.tril(np.ones((lq, lk), bool)), 0, -np.inf)
    raw = s._data
    additive = np.asarray(additive, raw.dtype)
    sd = raw + additive
    m = sd.max(axis=-1, keepdims=True)
    alive = ~np.isneginf(m)
    keep = ~np.isneginf(sd)
    # exp(s + mask - max) where kept; masked entries get exp(0) * 0, never inf * 0
    with np.errstate(invalid="ignore"):
        shift = np.where(keep, np.where(alive, m, 0) - additive, raw)
    e = (s - _wrap(shift.astype(raw.dtype))).exp() * _wrap(keep.astype(raw.dtype))
    total = e.sum(-1, True) + _wrap((~alive).astype(raw.dtype))
    return e / total


_flash = op(
    "_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, "
    "float dropout_p=0.0, bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) "
    "-> (Tensor output, Tensor logsumexp)", _flash_forward,
    grads={"query, key, value": _flash_grads}, differentiable_outputs=(True, False),
    method=False)


def _flash_ok(q: Tensor, k: Tensor, v: Tensor, mask, dropout_p: float, enable_gqa: bool) -> bool:
    """torch's CPU flash-attention constraints; otherwise it takes the composite math path."""
    if dropout_p > 0.0 or q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        return False
    if not (q.shape[-1] == k.shape[-1] == v.shape[-1]):
        return False
    if q.shape[0] != k.shape[0] or k.shape[0] != v.shape[0] or k.shape[1] != v.shape[1]:
        return False
    if q.shape[1] != k.shape[1] and not (enable_gqa and q.shape[1] % k.shape[1] == 0):
        return False
    if q.shape[2] == 0 or k.shape[2] == 0:
        return False
    if any(t.stride()[-1] != 1 for t in (q, k, v)):
        return False
    return mask is None or mask.ndim in (2, 4)


def _check_sdpa(q: Tensor, k: Tensor, v: Tensor, mask) -> None:
    if not (q.dtype == k.dtype == v.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_cname(q)} key.dtype: {_cname(k)} and value.dtype: {_cname(v)} instead.")
    if mask is not None and mask.dtype.name != "bool" and mask.dtype != q.dtype:
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_cname(mask)} and  query.dtype: {_cname(q)} instead.")


def _cname(t: Tensor) -> str:
    from retrograd._ops.random import _C_NAMES

    return _C_NAMES.get(t.dtype.name, t.dtype.name)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False) -> Tensor:
    if dispatch.autocast is not None:  # NOTE [Autocast composites]
        query, key, value, attn_mask = dispatch.autocast.cast("lower", query, key, value, attn_mask)
    _check_sdpa(query, key, value, attn_mask)
    float_mask = attn_mask
    if attn_mask is not None and attn_mask.dtype.name == "bool":
        float_mask = _wrap(_bool_to_float_mask(attn_mask._data, query._data.dtype))
    if _flash_ok(query, key, value, float_mask, dropout_p, enable_gqa):
        return _flash(query, key, value, dropout_p, is_causal, attn_mask=float_mask,
                      scale=scale)[0]
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    return _attention_math(query, key, value, float_mask, dropout_p, is_causal, scale,
                           enable_gqa)


def _attention_math(q: Tensor, k: Tensor, v: Tensor, mask, dropout_p: float, is_causal: bool,
                    scale, enable_gqa: bool) -> Tensor:
    """torch's _scaled_dot_product_attention_math: sqrt(scale) on q and k, safe softmax."""
    from retrograd import matmul

    sc = _scale_of(tuple(q.shape), None if scale is None else abs(scale))
    root = math.sqrt(sc)
    q = q * (-root if scale is not None and scale < 0 else root)
    if enable_gqa and q.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        k = _repeat_heads(k, q.shape[-3] // k.shape[-3])
        v = _repeat_heads(v, q.shape[-3] // v.shape[-3])
    attn = matmul(q, k.transpose(-2, -1) * root)
    attn = _masked_softmax(attn, mask, is_causal)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return matmul(attn, v)


register_functional("scaled_dot_product_attention", scaled_dot_product_attention)
