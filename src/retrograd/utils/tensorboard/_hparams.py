"""The three summaries of TensorBoard's hparams plugin (experiment, session start, session end),
built from hyperparameter and metric dictionaries as torch's writer builds them."""

from __future__ import annotations

from typing import Any

from retrograd._tensor import Tensor

from . import _proto as pb
from ._convert import make_np
from ._summary import plugin_metadata, summary, value

# tensorboard.plugins.hparams: tags, plugin name, api.proto enums
EXPERIMENT_TAG = "_hparams_/experiment"
SESSION_START_INFO_TAG = "_hparams_/session_start_info"
SESSION_END_INFO_TAG = "_hparams_/session_end_info"
PLUGIN_NAME = "hparams"
DATA_TYPE_STRING, DATA_TYPE_BOOL, DATA_TYPE_FLOAT64 = 1, 2, 3
STATUS_SUCCESS = 1


def _struct_value(kind: str, v: Any) -> bytes:
    """google.protobuf.Value: number_value=2, string_value=3, bool_value=4 (a oneof)."""
    if kind == "number":
        return pb.double(2, v, present=True)
    if kind == "string":
        return pb.string(3, v, present=True)
    return pb.int_field(4, bool(v), present=True)


def _hparam_info(name: str, data_type: int, kind: str, domain: list[Any] | None) -> bytes:
    """HParamInfo{name=1, type=4, domain_discrete=5 ListValue{values=1}}."""
    out = pb.string(1, name) + pb.int_field(4, data_type)
    if domain is not None:
        out += pb.message(5, b"".join(pb.message(1, _struct_value(kind, d)) for d in domain))
    return out


def _plugin_summary(tag: str, field: int, content: bytes) -> bytes:
    # HParamsPluginData{version=1 (0: not written), experiment=2, session_start_info=3,
    # session_end_info=4}
    data = pb.message(field, content)
    return summary(value(tag, metadata=plugin_metadata(PLUGIN_NAME, data)))


def hparams(hparam_dict: Any, metric_dict: Any,
            hparam_domain_discrete: Any = None) -> tuple[bytes, bytes, bytes]:
    """(experiment, session start, session end) summaries."""
    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError(
            "parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if (k not in hparam_dict or not isinstance(v, list)
                or not all(isinstance(d, type(hparam_dict[k])) for d in v)):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")
    infos, start_entries = [], []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # bools are ints here, so they are logged as numbers (as torch does)
        if isinstance(v, (int, float)):
            kind, data_type, domain = "number", DATA_TYPE_FLOAT64, domains.get(k)
        elif isinstance(v, str):
            kind, data_type, domain = "string", DATA_TYPE_STRING, domains.get(k)
        elif isinstance(v, Tensor):
            kind, data_type, domain = "number", DATA_TYPE_FLOAT64, None
            v = make_np(v)[0]
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        # SessionStartInfo.hparams: map<string, Value>, entries {key=1, value=2}
        entry = pb.string(1, k, present=True) + pb.message(2, _struct_value(kind, v))
        start_entries.append(pb.message(1, entry))
        infos.append(_hparam_info(k, data_type, kind, domain))
    # Experiment{hparam_infos=4, metric_infos=5 MetricInfo{name=1 MetricName{tag=2}}}
    experiment = (b"".join(pb.message(4, i) for i in infos)
                  + b"".join(pb.message(5, pb.message(1, pb.string(2, k))) for k in metric_dict))
    session_end = pb.int_field(1, STATUS_SUCCESS)  # SessionEndInfo{status=1}
    return (_plugin_summary(EXPERIMENT_TAG, 2, experiment),
            _plugin_summary(SESSION_START_INFO_TAG, 3, b"".join(start_entries)),
            _plugin_summary(SESSION_END_INFO_TAG, 4, session_end))
