"""The views of the encoder block (issue 53): component attribution, the contribution graph, activation patching and
the Block lesson. They draw :attr:`desktop_app.state.ExplorerState.inside` (:mod:`desktop_app.inside_results`);
NumPy records only, no torch."""
