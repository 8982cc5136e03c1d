"""The one class palette: the colour of each class in every view of the app and in the HTML report.

Pure Python (no NumPy, no Qt), so :mod:`model.report.report` (which never imports Qt) and the GUI
(:mod:`desktop_app.views.colours`, which re-exports it) use the same colours.

Classes are coloured by their position in the model's label list (``config.json``'s ``id2label`` order): class 0
blue, class 1 vermillion, then the rest of the Okabe-Ito palette, so the bundled model's ``negative`` is blue and
``positive`` vermillion everywhere. Blue against vermillion/orange stays apart for the common colour-vision
deficiencies (deuteranopia, protanopia, tritanopia), unlike the red/green pair the prediction panel used to show.

Sources:
    * Okabe, M. and Ito, K. (2008), "Color Universal Design (CUD): how to make figures and presentations that are
      friendly to colorblind people", https://jfly.uni-koeln.de/color/ : the first 8 colours, safe for every
      common colour-vision deficiency.
    * Tol, P. (2021), "Colour schemes", SRON technical note SRON/EPS/TN/09-002, https://personal.sron.nl/~pault/ :
      the "muted" and "light" qualitative schemes (9 colours each) and two of "vibrant", for classes 9 to 28 (task
      types with many classes). No palette of 28 colours stays distinct for every reader: beyond 8 classes the
      views also name each class (axis labels, legends, the table's text).

Signed quantities that point toward a class of a two-class model (log-odds, differences of importance) use the
two classes' colours: :data:`TOWARD_POSITIVE` and :data:`TOWARD_NEGATIVE`.
"""

from __future__ import annotations

from collections.abc import Sequence

OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
"""Okabe-Ito (2008), reordered: blue, vermillion, bluish green, orange, reddish purple, sky blue, yellow, black."""

TOL_MUTED = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499")
TOL_LIGHT = ("#77AADD", "#99DDFF", "#44BB99", "#BBCC33", "#AAAA00", "#EEDD88", "#EE8866", "#FFAABB", "#DDDDDD")
TOL_VIBRANT_EXTRA = ("#EE3377", "#004488")

CLASS_COLOURS: tuple[str, ...] = OKABE_ITO + TOL_MUTED + TOL_LIGHT + TOL_VIBRANT_EXTRA
"""28 distinct colours, "#RRGGBB": class ``i`` gets ``CLASS_COLOURS[i]`` (then they repeat)."""

NEUTRAL = "#666666"
"""What belongs to no class (all reviews together, accuracy bars, unknown labels)."""

BINARY_LABELS = ("negative", "positive")
"""The bundled model's classes, in its label order: the order assumed when a view knows only a label's name."""

TOWARD_NEGATIVE = CLASS_COLOURS[0]
TOWARD_POSITIVE = CLASS_COLOURS[1]
RIGHT = OKABE_ITO[2]  # bluish green: a prediction that matches its gold (the corpus map)
WRONG = OKABE_ITO[1]  # vermillion: one that does not (told apart from RIGHT under the common deficiencies)


def class_colour(index: int) -> str:
    """The colour ("#RRGGBB") of class ``index`` (0-based position in the model's labels; cycles after 28).

    Raises:
        ValueError: a negative index.
    """
    if index < 0:
        raise ValueError(f"a class index is 0 or more, not {index}")
    return CLASS_COLOURS[index % len(CLASS_COLOURS)]


def label_colour(label: str, labels: Sequence[str] = BINARY_LABELS) -> str:
    """The colour of class ``label``: by its position in ``labels`` (the model's label list); :data:`NEUTRAL` for a
    label not in it (e.g. "" for a row that was not scored)."""
    try:
        return class_colour(list(labels).index(label))
    except ValueError:
        return NEUTRAL


def class_colours(labels: Sequence[str]) -> dict[str, str]:
    """``{label: colour}`` for every label of a model, in order."""
    return {name: class_colour(i) for i, name in enumerate(labels)}
