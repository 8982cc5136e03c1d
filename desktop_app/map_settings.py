"""What the corpus map keeps in a session (issue 42): its settings and its slices, as checked plain values. Qt-free.

A :class:`Slice` is a named selection of texts: the ``source`` of each row (e.g. ``reviews.csv:row 12``), so it
finds its rows again when the same files are scored again (after a session is opened, or with another model). The
session's ``corpus_map`` object: ``{"projection": "pca"|"umap", "colour": str, "label": str, "word": str,
"select": "box"|"lasso"|"pan", "slices": [{"name": str, "sources": [str, ...]}, ...]}``;
:func:`map_settings_from_json` checks every field and raises :class:`ValueError` naming the bad one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from model.records.vectors import PROJECTIONS

SELECT_MODES = ("box", "lasso", "pan")
MAX_SLICES = 200
MAX_SLICE_ROWS = 1_000_000


@dataclass(frozen=True)
class Slice:
    """A named selection: ``name`` and the ``sources`` of its rows (in the table's order when it was saved)."""

    name: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class MapSettings:
    """The corpus map's settings and slices (module docstring); the defaults are the map's own."""

    projection: str = "pca"
    colour: str = ""
    label: str = ""
    word: str = ""
    select: str = "box"
    slices: tuple[Slice, ...] = field(default_factory=tuple)

    def to_json(self) -> dict:
        """The session's ``corpus_map`` object."""
        return {"projection": self.projection, "colour": self.colour, "label": self.label, "word": self.word,
                "select": self.select, "slices": [{"name": s.name, "sources": list(s.sources)} for s in self.slices]}


def _text(data: dict, key: str, default: str = "") -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or len(value) > 1000:
        raise ValueError(f"corpus_map.{key} must be a short string, got {type(value).__name__}")
    return value


def map_settings_from_json(data) -> MapSettings:
    """The :class:`MapSettings` of a session's ``corpus_map`` value (None or missing: the defaults).

    Raises:
        ValueError: not an object, an unknown projection or selection mode, a field of the wrong type, too many
            slices or rows (the message names the field).
    """
    if data is None:
        return MapSettings()
    if not isinstance(data, dict):
        raise ValueError(f"corpus_map must be an object, got {type(data).__name__}")
    projection, select = _text(data, "projection", "pca"), _text(data, "select", "box")
    if projection not in PROJECTIONS:
        raise ValueError(f"corpus_map.projection must be one of {', '.join(PROJECTIONS)}, got {projection!r}")
    if select not in SELECT_MODES:
        raise ValueError(f"corpus_map.select must be one of {', '.join(SELECT_MODES)}, got {select!r}")
    raw = data.get("slices", [])
    if not isinstance(raw, list) or len(raw) > MAX_SLICES:
        raise ValueError(f"corpus_map.slices must be a list of at most {MAX_SLICES}")
    slices = []
    for k, s in enumerate(raw):
        if not isinstance(s, dict) or not isinstance(s.get("name"), str) or not isinstance(s.get("sources"), list):
            raise ValueError(f"corpus_map.slices[{k}] must be {{name: string, sources: [strings]}}")
        sources = s["sources"]
        if len(sources) > MAX_SLICE_ROWS or not all(isinstance(x, str) for x in sources):
            raise ValueError(f"corpus_map.slices[{k}].sources must be at most {MAX_SLICE_ROWS:,} strings")
        slices.append(Slice(s["name"][:200], tuple(sources)))
    return MapSettings(projection, _text(data, "colour"), _text(data, "label"), _text(data, "word"), select,
                       tuple(slices))
