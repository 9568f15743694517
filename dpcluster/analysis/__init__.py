"""Closed-form error predictions of Paper A (docs/methods.md A6) and the hybrid's switch (A7)."""

from .mse import (
    dplloyd_mse,
    eugkm_bias_sq,
    eugkm_cells,
    eugkm_variance,
    hybrid_mse,
    hybrid_switch,
    m_required,
    predictions,
    switch_on_epsilon,
    theta_star,
)

__all__ = [
    "dplloyd_mse",
    "eugkm_bias_sq",
    "eugkm_cells",
    "eugkm_variance",
    "hybrid_mse",
    "hybrid_switch",
    "m_required",
    "predictions",
    "switch_on_epsilon",
    "theta_star",
]
