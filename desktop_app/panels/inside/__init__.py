"""The docks of the encoder block's views (issue 53): each owns its view, computes its result on its own worker only
while its dock is shown (the latest request wins) and sets it on :attr:`desktop_app.state.ExplorerState.inside`."""
