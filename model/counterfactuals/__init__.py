"""What if: counterfactual edits that flip the model (issue 43), for one text and across a corpus; no Qt.

Generators (one interface, :class:`~model.counterfactuals.base.Generator`; LIT's names where LIT has one):
``word_replacer`` (user rules and a built-in antonym/intensifier list), ``negation`` (CheckList-style), ``ablation_flip``
(removes the fewest words in a token-importance order), ``hotflip`` (gradient-guided substitution of one or two tokens,
Ebrahimi et al. 2018), ``scrambler`` (shuffled words, a control). :func:`~model.counterfactuals.search.smallest_flip`
combines ``ablation_flip`` and ``hotflip`` under a budget. Edits are :class:`model.records.counterfactual.Edit`
records, scored in batches with ``Predictor.score_many`` (:mod:`.scoring`: what a flip is per task type); their paired
metrics (flip rate, mean |delta|, mean Jensen-Shannon divergence) and JSON Lines rows: :mod:`.metrics`.

Modules: :mod:`.base` (settings, the input, words), :mod:`.lexical`, :mod:`.ablation`, :mod:`.hotflip`,
:mod:`.guided` (what the model-guided ones share), :mod:`.run` (the registry, :func:`generate`), :mod:`.search`.
"""

from .base import Generator, SearchCancelled, Settings, Source
from .metrics import counterfactual_metrics, edit_line
from .run import GENERATORS, generate, parse_generators
from .search import SearchResult, smallest_flip

__all__ = ["GENERATORS", "Generator", "SearchCancelled", "SearchResult", "Settings", "Source", "counterfactual_metrics",
           "edit_line", "generate", "parse_generators", "smallest_flip"]
