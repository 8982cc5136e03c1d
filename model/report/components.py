"""The report's "Components" section (issue 53, ``--components``): which heads and FFNs the corpus leans on, as a
heatmap of layers x (heads, FFN, attention bias, LayerNorm beta) of each part's mean |value| over the scored rows
(``metrics.json``'s ``"components"``: :func:`model.records.components.mean_abs`), the other parts (embeddings, the
read-out's biases) named under it."""

from __future__ import annotations

import numpy as np

from model.records.components import grid_shape, is_layer_part, layer_grid

from model.report.charts import esc, heatmap_svg

_NOTE = ("Mean |value| over the scored rows of each part's share of the predicted output's logit (direct logit "
         "attribution, every LayerNorm frozen at each text's statistics; docs/components.md). Rows: layers (1-based); "
         "columns: heads (0-based), the feed-forward block, the attention output bias, the LayerNorms' beta.")


def components_section(means: dict[str, float] | None) -> str:
    """The section's HTML for ``{part name: mean |value|}``; "" when ``means`` is None or empty (no
    ``--components``)."""
    if not means:
        return ""
    L, H = grid_shape(means)
    grid, cols = layer_grid(means, L, H)
    keep = [j for j in range(len(cols)) if not np.isnan(grid[:, j]).all()]  # drop all-NaN columns
    svg = heatmap_svg(grid[:, keep], [f"L{layer}" for layer in range(1, L + 1)], [cols[j] for j in keep],
                      "Components: mean |value| by layer and part")
    others = "; ".join(f"{name} {value:.2f}" for name, value in means.items() if not is_layer_part(name))
    return (f"<section class=\"wide\"><h2>Components the corpus leans on</h2>{svg}"
            f"<p>{esc(_NOTE)}" + (f" Other parts: {esc(others)}." if others else "") + "</p></section>")


__all__ = ["components_section"]
