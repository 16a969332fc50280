"""retrograd.utils.model_zoo: torch's older name for hub.load_state_dict_from_url."""

from __future__ import annotations

from retrograd.hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
